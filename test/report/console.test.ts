import { describe, expect, test } from "bun:test";
import type { StepRecord } from "../../src/engine/index.ts";
import { consoleLines as render } from "./support.ts";
import { quickConfig, trainOnSim } from "../engine/support.ts";

/** The decision wording each recorded action gets. */
const DECISION: Record<string, RegExp> = {
  accept_new_best: /^\s{4}\[6\/6 EVALUATE\] (ACCEPT \(new best\)|ACCEPT Δ)/,
  accept: /^\s{4}\[6\/6 EVALUATE\] ACCEPT /,
  reject: /^\s{4}\[6\/6 EVALUATE\] REJECT /,
  reject_format: /^\s{4}\[6\/6 EVALUATE\] REJECT \(format\) /,
  reject_early: /^\s{4}\[6\/6 EVALUATE\] REJECT EARLY at \d+\/\d+: cannot beat current=\d\.\d{4}$/,
  undecided: /^\s{4}\[6\/6 EVALUATE\] UNDECIDED Δ=/,
  force_accept: /^\s{4}\[6\/6 EVALUATE\] FORCE-ACCEPT \(gate disabled\) /,
};

describe("the training console words the engine's structured events", () => {
  for (const rule of ["strict", "paired"]) {
    test(`${rule} gate: the plan, one decision line per evaluated step matching its record, and the step summary`, async () => {
      const run = await trainOnSim(quickConfig([`evaluation.gate_rule=${rule}`, "train.num_epochs=2"]));
      const lines = render(run.events);
      const plan = lines.filter((l) => /^ {2}\[(config|gate|slow update)\]/.test(l));
      expect(plan.map((l) => l.trim().split(" ")[0])).toEqual(["[config]", "[config]", "[gate]", "[slow"]);
      expect(plan[2]).toContain(`rule=${rule}`);
      const records = run.events.flatMap((e) => (e.type === "step_done" ? [e.record] : []));
      const decisions = lines.filter((l) => l.includes("[6/6 EVALUATE]") && !l.includes("selection items="));
      const evaluated = records.filter((r: StepRecord) => !r.action.startsWith("skip"));
      expect(decisions.length).toBe(evaluated.length);
      evaluated.forEach((r, i) => {
        expect(decisions[i]).toMatch(DECISION[r.action]!);
      });
      for (const r of records)
        expect(lines).toContain(
          `  [STEP ${r.step}/${records.length} done] epoch=${r.epoch} action=${r.action} current=${r.current_score.toFixed(4)} best=${r.best_score.toFixed(4)} calls=${r.calls.total} (cached ${r.calls.cached}) cost=$${(r.cost_usd ?? 0).toFixed(4)} dt=${r.wall_time_s}s`,
        );
      // Every stage event became at least one line; none is printed raw.
      expect(lines.some((l) => l.includes("[object Object]") || l.includes("undefined"))).toBe(false);
    });
  }

  test("--quiet leaves only faults: no stage lines and no set-up advice", async () => {
    const run = await trainOnSim(quickConfig(["train.num_epochs=1"]));
    const noise = run.events.find((e) => e.type === "noise_floor");
    expect(noise).toBeDefined();
    // The quickstart's 24 selection items cannot see a 2-point gain: the advice shows without --quiet.
    expect(render(run.events).some((l) => l.startsWith("  [warn] at n=24"))).toBe(true);
    expect(render(run.events, true)).toEqual(
      render(
        run.events.filter((e) => e.type === "warning"),
        true,
      ),
    );
  });
});
