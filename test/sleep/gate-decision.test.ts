import { describe, expect, test } from "bun:test";
import { decideOnItems } from "../../src/engine/index.ts";
import { SLEEP_SEQUENTIAL, sleepDecision } from "../../src/sleep/gate.ts";
import { gateLine } from "../../src/sleep/report.ts";
import type { TaskDelta } from "../../src/sleep/types.ts";

const delta = (id: string, b: number | null, c: number | null): TaskDelta => ({
  task_id: id,
  tags: [],
  baseline_score: b,
  candidate_score: c,
  status: b === null || c === null ? "regressed" : c > b ? "improved" : c < b ? "regressed" : "unchanged",
  scores_are_finite: b !== null && c !== null,
});

describe("Sleep's gate decides with the engine's gate module", () => {
  const small = [delta("a", 0, 1), delta("b", 1, 1), delta("c", 0, 1), delta("d", 0.5, 0.5)];

  test("the decision is the engine's decideOnItems on the per-task differences", () => {
    const d = sleepDecision(small, "paired");
    expect(d).toMatchObject({
      ...decideOnItems([1, 0, 1, 0], [false, false, false, false], "paired", SLEEP_SEQUENTIAL),
      n_total: 4,
    });
    // Two gained tasks out of four: the held-out set is too small to tell.
    expect(d.verdict).toBe("undecided");
    expect(d.delta).toBeCloseTo(0.5, 12);
    expect(d.ci[0]).toBeLessThan(0);
    expect(d.flips).toEqual({ gained: 2, lost: 0 });
  });

  test("strict keeps the mean rule and says what the paired test makes of the same tasks", () => {
    const d = sleepDecision(small, "strict");
    expect(d).toMatchObject({ rule: "strict", verdict: "accept", paired_verdict: "undecided" });
    expect(sleepDecision([delta("a", 1, 0)], "strict").verdict).toBe("reject");
  });

  test("a task without a score on both sides is left out, never a zero", () => {
    const d = sleepDecision([...small, delta("e", 1, null)], "paired");
    expect(d.n_used).toBe(4);
    expect(d.n_total).toBe(5);
  });

  test("the report line shows Δ with its bounds, the tasks used and the verdict", () => {
    const line = gateLine(sleepDecision(small, "strict"));
    expect(line).toMatch(
      /^Δ \+50\.0 pts, 95 % bounds \[-?\d+\.\d, \+\d+\.\d\] on 4\/4 held-out tasks, \+2\/−0 tasks; strict gate verdict: \*\*accept\*\* \(paired test on the same tasks: undecided\)$/,
    );
  });
});
