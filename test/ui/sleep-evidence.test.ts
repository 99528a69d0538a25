import { describe, expect, test } from "bun:test";
import type { GateDecision } from "../../src/engine/sequential.ts";
import type { SleepReport } from "../../src/sleep/report.ts";
import type { EditRecord, GateTrial } from "../../src/sleep/types.ts";
import { cardVerdict, editVerdict } from "../../src/ui/sleep-evidence.ts";

const edit = (content: string): EditRecord => ({ target: "skill", op: "add", content, anchor: "", rationale: "" });

const decision = (verdict: GateDecision["verdict"], extra: Partial<GateDecision> = {}): GateDecision => ({
  rule: "paired",
  verdict,
  reason: verdict === "accept" ? "better" : verdict === "reject" ? "below_min_effect" : "end_of_split",
  delta: 0.25,
  ci: [-0.1, 0.6],
  confidence: 0.95,
  min_effect: 0.02,
  n_used: 4,
  n_total: 4,
  flips: { gained: 1, lost: 0 },
  ...extra,
});

const trial = (e: EditRecord, o: Partial<GateTrial>): GateTrial => ({
  target: "skill",
  baseline_score: 0.5,
  candidate_score: 0.75,
  accepted: false,
  blocked_by_regression: false,
  task_deltas: [],
  edits: [e],
  ...o,
});

function report(trials: GateTrial[], o: Partial<SleepReport> = {}): SleepReport {
  return { gate_trials: trials, holdout_leaked: false, gate_action: "reject", ...o } as SleepReport;
}

describe("Sleep panel verdicts", () => {
  test("each edit gets the verdict its own gate trial gave it, with rule, Δ, bounds and n", () => {
    const [a, b, c, d] = [edit("A"), edit("B"), edit("C"), edit("D")];
    const r = report([
      trial(a, { accepted: true, gate: decision("accept", { rule: "strict", paired_verdict: "undecided" }) }),
      trial(b, { gate: decision("undecided") }),
      trial(c, { gate: decision("reject") }),
      trial(d, { accepted: false, blocked_by_regression: true, gate: decision("accept") }),
    ]);
    expect(editVerdict(a, r)).toEqual({
      verdict: "accept",
      detail: "strict rule, Δ +25.0 pts [-10.0, +60.0], n=4/4; the paired test on the same tasks: undecided",
    });
    expect(editVerdict(b, r).verdict).toBe("undecided");
    expect(editVerdict(c, r).verdict).toBe("reject");
    expect(editVerdict(d, r)).toEqual({ verdict: "reject", detail: "vetoed: a held-out task regressed" });
  });

  test("an edit no gate trial evaluated, or one whose held-out tasks leaked, is unverified", () => {
    const a = edit("A");
    expect(editVerdict(a, report([], { gate_action: "greedy_applied" }))).toEqual({
      verdict: "unverified",
      detail: "no gate ran (greedy_applied)",
    });
    expect(
      editVerdict(a, report([trial(a, { accepted: true, gate: decision("accept") })], { holdout_leaked: true }))
        .verdict,
    ).toBe("unverified");
  });

  test("a lesson card is unverified without a replay, else carries the replay's verdict", () => {
    const base = {
      id: "l",
      op: "add" as const,
      rule: "r",
      target: "/p/CLAUDE.md",
      recurrences: 2,
      n_sessions: 2,
      first_seen: "",
      last_seen: "",
      sources: [],
      cost: { tokens: 0, cost_usd: 0 },
    };
    expect(cardVerdict({ ...base, verification: "unverified" })).toEqual({
      verdict: "unverified",
      detail: "no replay was run",
    });
    expect(
      cardVerdict({
        ...base,
        verification: { verdict: "undecided", delta: 0.5, ci: [-0.2, 1], n: 2, regressions: [] },
      }),
    ).toEqual({ verdict: "undecided", detail: "replay, Δ +50.0 pts [-20.0, +100.0], n=2" });
  });
});
