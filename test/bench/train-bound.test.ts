import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { runTrainBench } from "../../bench/train.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

// No timing assertion: a serialized run cannot be faster than its calls' latencies one after
// another (each call waits `latency` at the simulator), whatever the load on the machine.
describe("bench/train.ts's bound comes from the plan", () => {
  test("a deliberately serialized run has the same plan and a ratio that shows it", async () => {
    const latencyMs = 20;
    const common = { latencyMs, epochs: 1, early: true, config: "quickstart" };
    const parallel = await runTrainBench({ ...common, serialized: false });
    const serial = await runTrainBench({ ...common, serialized: true });
    // Same decisions, same plan: the bound does not depend on how the run was scheduled.
    expect(serial.rounds).toBe(parallel.rounds);
    // (Calls may differ slightly: with more at once, more selection rollouts are already under way
    // when early rejection decides; the plan counts only the items the decision needed.)
    // One call at a time takes at least calls × latency, so the ratio is at least calls / rounds.
    const floor = (serial.calls - serial.cached) / serial.rounds;
    expect(floor).toBeGreaterThan(2);
    expect(serial.ratio).toBeGreaterThan(floor * 0.95);
    expect(serial.ratio).toBeGreaterThan(1.15);
  }, 180_000);
});
