import { describe, expect, test } from "bun:test";
import { compareSkills, countFlips } from "../../src/engine/compare.ts";
import { gateSettings } from "../../src/engine/gate.ts";
import type { RolloutResult } from "../../src/engine/ports.ts";

const ev = {
  gate_metric: "hard",
  gate_mixed_weight: 0.5,
  semantic_density_weight: 0,
  use_semantic_density: false,
  gate_confidence: 0.95,
  gate_min_effect: 0.02,
  gate_max_regressions: null,
  noise_floor_items: 32,
  gate_rule: "strict",
};
const g = (extra: Record<string, unknown> = {}) => gateSettings({ ...ev, ...extra } as never);
const results = (hards: number[], answer = "a"): RolloutResult[] =>
  hards.map((h, i) => ({
    id: `t${i}`,
    hard: h,
    soft: h,
    trajectory: [],
    predicted_answer: `${answer}${i}`,
    task_type: i % 2 ? "odd" : "even",
  }));
const NOISE = { compared: 0, flips: 0 };

describe("compareSkills (the pull-request check's decision)", () => {
  test("many tasks lost and none gained is a confident regression; the flips name them, largest change first", () => {
    const base = results(Array(40).fill(1));
    const cand = results([...Array(20).fill(0), ...Array(20).fill(1)], "b");
    const c = compareSkills(g(), base, cand, NOISE);
    expect(c.verdict).toBe("regressed");
    expect(c.decision.reason).toBe("below_min_effect");
    expect(c.decision.ci[1]).toBeLessThan(0);
    expect(c.flips.improved).toEqual([]);
    expect(c.flips.regressed.length).toBe(20);
    expect(c.flips.regressed[0]).toEqual({
      id: "t0",
      task_type: "even",
      baseline: 1,
      candidate: 0,
      baseline_answer: "a0",
      candidate_answer: "b0",
    });
  });

  test("many tasks gained is improved; identical scores are undecided, never a regression", () => {
    expect(compareSkills(g(), results(Array(40).fill(0)), results(Array(40).fill(1)), NOISE).verdict).toBe("improved");
    const same = compareSkills(g(), results(Array(40).fill(1)), results(Array(40).fill(1)), NOISE);
    expect({ verdict: same.verdict, delta: same.decision.delta, n: same.n_items }).toEqual({
      verdict: "undecided",
      delta: 0,
      n: 40,
    });
  });

  test("every scored task counts: a regression that shows only after the first 40 tasks is still found", () => {
    const base = results(Array(100).fill(1));
    const cand = results([...Array(40).fill(1), ...Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? 0 : 1))]);
    const c = compareSkills(g(), base, cand, NOISE);
    expect({ verdict: c.verdict, n_used: c.decision.n_used, lost: c.decision.flips.lost }).toEqual({
      verdict: "regressed",
      n_used: 100,
      lost: 20,
    });
    // The sequential test alone would have stopped early without calling it a regression.
    expect(c.decision.paired_verdict).not.toBe("accept");
  });

  test("the no-regression veto, when configured, makes a few broken tasks a regression", () => {
    const base = results(Array(40).fill(1));
    const cand = results([0, 0, ...Array(38).fill(1)]);
    expect(compareSkills(g(), base, cand, NOISE).verdict).toBe("undecided");
    const veto = compareSkills(g({ gate_max_regressions: 1 }), base, cand, NOISE);
    expect({ verdict: veto.verdict, reason: veto.decision.reason }).toEqual({
      verdict: "regressed",
      reason: "regressions",
    });
  });

  test("only tasks answered on both sides are paired; the power line uses the noise floor's flip rate", () => {
    const base = results([1, 1, 0, 0]);
    const cand = results([1, 0, 1]);
    const c = compareSkills(g(), base, cand, countFlips(g(), base, results([1, 0, 0, 0])));
    expect(c.n_items).toBe(3);
    expect(c.power).toMatchObject({ noise_items: 4, noise_flips: 1, flip_rate: 0.25, confidence: 0.95 });
    expect(c.power.detectable_gain).toBe(1);
  });
});
