import { describe, expect, test } from "bun:test";
import { regionContent, SLOW_END, SLOW_START } from "../../src/engine/index.ts";
import { comparable, MemoryRecorder, quickConfig, trainOnSim } from "./support.ts";

describe("training on the simulator (quickstart)", () => {
  test("the selection score rises from the baseline to ≥ 0.8 and the gate rejects at least one candidate", async () => {
    const { result, recorder } = await trainOnSim(quickConfig());
    const s = result.summary as {
      baseline: { selection: number };
      best: { selection: number };
      rejected: number;
      steps: number;
    };
    expect(s.baseline.selection).toBeGreaterThanOrEqual(0.1);
    expect(s.baseline.selection).toBeLessThanOrEqual(0.3);
    expect(s.best.selection).toBeGreaterThanOrEqual(0.8);
    expect(s.rejected).toBeGreaterThanOrEqual(1);
    expect(s.steps).toBe(12);
    const records = recorder.records();
    expect(records).toHaveLength(12);
    for (const r of records)
      expect([
        "accept_new_best",
        "accept",
        "reject",
        "reject_early",
        "undecided",
        "skip_no_patches",
        "skip_no_change",
        "reject_format",
      ]).toContain(String(r.action));
    expect(recorder.checkpoints.at(-1)!.kind).toBe("final");
    expect(result.state.finished).toBe(true);
  });

  test("with the gate off at least one force-accepted step lowers the selection score", async () => {
    const { recorder } = await trainOnSim(quickConfig(["evaluation.use_gate=false"]));
    const records = recorder.records();
    expect(records.every((r) => r.action === "force_accept" || String(r.action).startsWith("skip"))).toBe(true);
    const drops = records.filter(
      (r) => r.action === "force_accept" && Number(r.candidate_gate_score) < Number(r.current_score_before),
    );
    expect(drops.length).toBeGreaterThanOrEqual(1);
  });

  test("step edits never change the protected slow-update region", async () => {
    const { recorder } = await trainOnSim(quickConfig(["optimizer.learning_rate=4"]));
    let checked = 0;
    for (let i = 1; i < recorder.checkpoints.length; i++) {
      const cp = recorder.checkpoints[i]!;
      if (cp.kind !== "step" || typeof cp.record?.candidate_hash !== "string") continue;
      const before = recorder.skills[recorder.checkpoints[i - 1]!.state.current.hash]!;
      const cand = recorder.skills[cp.record.candidate_hash]!;
      if (!before.includes(SLOW_START)) continue;
      expect(regionContent(cand, SLOW_START, SLOW_END)).toBe(regionContent(before, SLOW_START, SLOW_END));
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});

describe("update modes and lr control", () => {
  for (const mode of ["patch", "rewrite_from_suggestions", "full_rewrite_minibatch"]) {
    test(`${mode} produces evaluated candidates`, async () => {
      const { recorder } = await trainOnSim(quickConfig([`optimizer.skill_update_mode=${mode}`, "train.num_epochs=1"]));
      const withCandidate = recorder
        .records()
        .filter((r) => typeof r.candidate_hash === "string" && !String(r.action).startsWith("skip"));
      expect(withCandidate.length).toBeGreaterThan(0);
      if (mode === "rewrite_from_suggestions")
        expect(withCandidate.some((r) => Array.isArray(r.rewrite_change_summary))).toBe(true);
      if (mode === "full_rewrite_minibatch") expect(withCandidate.every((r) => r.edit_budget === null)).toBe(true);
    });
  }

  test("autonomous lr control asks the optimizer for the count and records its decision", async () => {
    const { recorder } = await trainOnSim(quickConfig(["optimizer.lr_control_mode=autonomous", "train.num_epochs=1"]));
    const decided = recorder.records().filter((r) => r.lr_decision);
    expect(decided.length).toBeGreaterThan(0);
    for (const r of decided) expect(r.edit_budget).toBe((r.lr_decision as { learning_rate: number }).learning_rate);
  });

  test("skill-aware reflection keeps execution notes in the appendix of gated candidates", async () => {
    const { result } = await trainOnSim(
      quickConfig(["optimizer.use_skill_aware_reflection=true", "env.sim_lapse_rate=0.3"]),
    );
    expect(result.currentSkill).toContain("<!-- APPENDIX_START -->");
  });
});

describe("early rejection at the gate", () => {
  test("makes the same decisions as full evaluation with fewer selection rollouts", async () => {
    const full = await trainOnSim(quickConfig(["evaluation.early_reject=false", "evaluation.gate_rule=strict"]));
    const early = await trainOnSim(quickConfig(["evaluation.early_reject=true", "evaluation.gate_rule=strict"]));
    const norm = (a: unknown) => (a === "reject_early" ? "reject" : a);
    const a = full.recorder
      .records()
      .map((r) => [r.step, norm(r.action), r.candidate_hash, r.current_score, r.best_score]);
    const b = early.recorder
      .records()
      .map((r) => [r.step, norm(r.action), r.candidate_hash, r.current_score, r.best_score]);
    expect(b).toEqual(a);
    expect(early.result.bestSkill).toBe(full.result.bestSkill);
    const saved = Number(early.result.summary.selection_calls_saved);
    expect(saved).toBeGreaterThan(0);
    const calls = (r: typeof full) => Number((r.result.summary.calls as { total: number }).total);
    expect(calls(full) - calls(early)).toBe(saved);
  });
});

describe("resume", () => {
  const crashStep = 1 + Math.floor(Math.random() * 11);
  // Default, and a step-buffer window of 2 (4 steps per epoch), so the checkpoints hold folded older steps.
  for (const [before, window] of [
    [false, null],
    [true, null],
    [false, 2],
    [true, 2],
  ] as const) {
    const named = window ? ` with step_buffer_window=${window}` : "";
    test(`a crash ${before ? "inside" : "after"} step ${crashStep} resumes to the identical result${named}`, async () => {
      const config = quickConfig(window ? [`optimizer.step_buffer_window=${window}`] : []);
      const ref = await trainOnSim(config);
      const rec = new MemoryRecorder();
      rec.crashAtStep = crashStep;
      rec.crashBeforeCommit = before;
      await expect(trainOnSim(config, rec)).rejects.toThrow("simulated crash");
      rec.crashAtStep = undefined;
      const resumed = await trainOnSim(config, rec);
      expect(comparable(rec.records())).toEqual(comparable(ref.recorder.records()));
      expect(resumed.result.bestSkill).toBe(ref.result.bestSkill);
      expect(resumed.result.currentSkill).toBe(ref.result.currentSkill);
    });
  }
});
