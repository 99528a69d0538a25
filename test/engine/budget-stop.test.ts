import { describe, expect, test } from "bun:test";
import { budgetMessage } from "../../src/lib/index.ts";
import { consoleLines } from "../report/support.ts";
import { quickConfig, trainOnSim } from "./support.ts";

const ONE_EPOCH = ["train.num_epochs=1"];

/** Paid calls made when step 1 is done (a reference run without a cap). */
async function paidAfterStep1(): Promise<number> {
  let paid = -1;
  await trainOnSim(quickConfig(ONE_EPOCH), undefined, {
    onEvent: (e, client) => {
      const snap = client.snapshot();
      if (e.type === "step_done" && e.step === 1) paid = snap.calls - snap.cached;
    },
  });
  return paid;
}

describe("a budget cap stops the run with a typed budget_stop warning (sim backend, real model layer)", () => {
  test("met at a step's end: the stop is at the step boundary, with the cap's facts; the console words it", async () => {
    const afterStep1 = await paidAfterStep1();
    expect(afterStep1).toBeGreaterThan(0);
    const run = await trainOnSim(quickConfig([...ONE_EPOCH, `model.max_calls=${afterStep1}`]));
    const stops = run.events.filter((e) => e.type === "warning");
    expect(stops).toEqual([
      {
        type: "warning",
        code: "budget_stop",
        limit: "calls",
        spent: afterStep1,
        cap: afterStep1,
        at: { kind: "step_boundary" },
      },
    ]);
    expect(run.recorder.records().map((r) => r.step)).toEqual([1]);
    const reason = `call budget reached (${afterStep1} of model.max_calls=${afterStep1})`;
    expect(run.result.summary.stopped_reason).toBe(reason);
    expect(consoleLines(run.events, true)).toEqual([`  [warn] stopping: ${reason} (resume later with --resume)`]);
  });

  test("met inside a step: the step is not committed, and the stop names the stage whose call was refused", async () => {
    const cap = (await paidAfterStep1()) + 1;
    const run = await trainOnSim(quickConfig([...ONE_EPOCH, `model.max_calls=${cap}`]));
    const stops = run.events.filter((e) => e.type === "warning");
    expect(stops).toHaveLength(1);
    const stop = stops[0]!;
    if (stop.code !== "budget_stop") throw new Error(`expected budget_stop, got ${stop.code}`);
    expect(stop).toMatchObject({ limit: "calls", spent: cap, cap });
    if (stop.at.kind !== "call") throw new Error(`expected a stop before a call, got ${stop.at.kind}`);
    expect(stop.at.stage.length).toBeGreaterThan(0);
    // Step 2 started and was not committed: the run resumes from step 1.
    expect(run.events.some((e) => e.type === "step_start" && e.step === 2)).toBe(true);
    expect(run.recorder.records().map((r) => r.step)).toEqual([1]);
    const reason = `call budget reached: ${cap} of ${cap} model calls made (before a ${stop.at.stage} call)`;
    expect(budgetMessage(stop)).toBe(reason);
    expect(run.result.summary.stopped_reason).toBe(reason);
    expect(consoleLines(run.events, true)).toEqual([`  [warn] stopping: ${reason} (resume later with --resume)`]);
  });
  /** Paid calls made when an event of `type` (in `epoch`, when given) is emitted, in a run without a cap. */
  async function paidAt(type: "slow_update_start" | "test_start", epoch?: number): Promise<number> {
    let paid = -1;
    await trainOnSim(quickConfig(), undefined, {
      onEvent: (e, client) => {
        const snap = client.snapshot();
        if (paid < 0 && e.type === type && (epoch === undefined || ("epoch" in e && e.epoch === epoch)))
          paid = snap.calls - snap.cached;
      },
    });
    return paid;
  }

  for (const [where, type, epoch] of [
    ["inside an epoch boundary's rollouts", "slow_update_start", 2],
    ["inside the final test pass", "test_start", undefined],
  ] as const)
    test(`met ${where}: a budget stop like any other, not an error; the test pass is skipped`, async () => {
      const before = await paidAt(type, epoch);
      expect(before).toBeGreaterThan(0);
      const cap = before + 1;
      const run = await trainOnSim(quickConfig([`model.max_calls=${cap}`]));
      const stops = run.events.filter((e) => e.type === "warning" && e.code === "budget_stop");
      expect(stops).toHaveLength(1);
      expect(run.result.summary.stopped_reason).toContain(`${cap} of ${cap} model calls made`);
      // The test pass is skipped, as after any budget stop.
      expect(run.events.some((e) => e.type === "test_start")).toBe(type === "test_start");
      expect(run.result.summary.best.test).toBeNull();
    });
});
