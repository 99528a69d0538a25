import { type GateSettings, decideOnItems, type ItemScores, itemScore, passed } from "./gate.ts";
import type { RolloutResult } from "./ports.ts";
import { detectableGain, type GateDecision } from "./sequential.ts";

/**
 * A candidate skill against a baseline on the same items (the pull-request check, `eval
 * --baseline`). The decision is the gate module's paired sequential test with a minimum effect of
 * 0: "accept" is a gain at the configured confidence, a "below_min_effect" rejection means the
 * upper bound of Δ is below 0 (a confident regression), as does the no-regression veto when it is
 * configured; anything else is undecided.
 */
export type CompareVerdict = "improved" | "regressed" | "undecided";

/** One task whose score differs between the two skills. */
export interface FlipRow {
  id: string;
  task_type?: string;
  baseline: number;
  candidate: number;
  baseline_answer?: string;
  candidate_answer?: string;
  reason?: string;
}

export interface SkillComparison {
  verdict: CompareVerdict;
  decision: GateDecision;
  metric: GateSettings["metric"];
  n_items: number;
  baseline: { hard: number; soft: number };
  candidate: { hard: number; soft: number };
  /** Tasks the candidate scores lower (regressed) and higher (improved) than the baseline, largest change first. */
  flips: { regressed: FlipRow[]; improved: FlipRow[] };
  /** What size of change this run could detect (the noise floor's function, sequential.ts). */
  power: { detectable_gain: number; flip_rate: number; noise_items: number; noise_flips: number; confidence: number };
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
const scores = (r: RolloutResult): ItemScores => [Number(r.hard) || 0, Number(r.soft) || 0];
const clip = (s: unknown) => {
  const t = String(s ?? "").replace(/\s+/g, " ").trim();
  return t.length > 120 ? `${t.slice(0, 119)}…` : t;
};

/** Items whose two samples of the same skill score differently (the noise floor's flip count). */
export function countFlips(g: GateSettings, first: readonly RolloutResult[], second: readonly RolloutResult[]): { compared: number; flips: number } {
  const before = new Map(first.map((r) => [String(r.id), r]));
  let compared = 0;
  let flips = 0;
  for (const r of second) {
    const a = before.get(String(r.id));
    if (!a) continue;
    compared += 1;
    if (Math.abs(itemScore(g, ...scores(r)) - itemScore(g, ...scores(a))) > 1e-9) flips += 1;
  }
  return { compared, flips };
}

/**
 * Pair both skills' answered results by task id (in the baseline's item order) and decide. Both
 * lists hold answered items only: the caller has kept no-answer items out (they are never a score).
 */
export function compareSkills(g: GateSettings, baseline: readonly RolloutResult[], candidate: readonly RolloutResult[], noise: { compared: number; flips: number }): SkillComparison {
  const cand = new Map(candidate.map((r) => [String(r.id), r]));
  const pairs = baseline.flatMap((b) => {
    const c = cand.get(String(b.id));
    return c ? [{ b, c, d: itemScore(g, ...scores(c)) - itemScore(g, ...scores(b)) }] : [];
  });
  const s = { ...g.sequential, minEffect: 0 };
  const decision = decideOnItems(
    pairs.map((p) => p.d),
    pairs.map((p) => passed(scores(p.b)) && !passed(scores(p.c))),
    "paired",
    s,
  );
  const verdict: CompareVerdict =
    decision.verdict === "accept" ? "improved" : decision.verdict === "reject" && (decision.reason === "below_min_effect" || decision.reason === "regressions") ? "regressed" : "undecided";
  const row = (p: (typeof pairs)[number]): FlipRow => ({
    id: String(p.b.id),
    ...(p.b.task_type ? { task_type: String(p.b.task_type) } : {}),
    baseline: r6(itemScore(g, ...scores(p.b))),
    candidate: r6(itemScore(g, ...scores(p.c))),
    baseline_answer: clip(p.b.predicted_answer),
    candidate_answer: clip(p.c.predicted_answer),
    ...(p.c.fail_reason ? { reason: clip(p.c.fail_reason) } : {}),
  });
  const mean = (rs: readonly RolloutResult[]) => {
    if (!rs.length) return { hard: 0, soft: 0 };
    return { hard: r6(rs.reduce((a, r) => a + scores(r)[0], 0) / rs.length), soft: r6(rs.reduce((a, r) => a + scores(r)[1], 0) / rs.length) };
  };
  const confidence = 1 - g.sequential.alpha;
  const flipRate = noise.compared ? noise.flips / noise.compared : 0;
  return {
    verdict,
    decision,
    metric: g.metric,
    n_items: pairs.length,
    baseline: mean(pairs.map((p) => p.b)),
    candidate: mean(pairs.map((p) => p.c)),
    flips: {
      regressed: pairs.filter((p) => p.d < -1e-9).sort((a, b) => a.d - b.d).map(row),
      improved: pairs.filter((p) => p.d > 1e-9).sort((a, b) => b.d - a.d).map(row),
    },
    power: { detectable_gain: r6(detectableGain(pairs.length, flipRate, confidence)), flip_rate: r6(flipRate), noise_items: noise.compared, noise_flips: noise.flips, confidence },
  };
}
