import {
  type GateSettings,
  decideOnItems,
  type ItemScores,
  itemScore,
  makeGate,
  passed,
  type RuleChoice,
  ruleFor,
} from "./gate.ts";
import type { RolloutResult } from "./ports.ts";
import { detectableGain, type GateDecision } from "./sequential.ts";

/**
 * A candidate skill against a baseline on the same items (the pull-request check, `eval
 * --baseline`). Every item is already scored on both sides, so the check reads the gate module's
 * always-valid bounds for the mean difference over all of them (decideOnItems observing every
 * item) instead of stopping the sequential test early: its futility and minimum-effect stops save
 * rollouts in training, here they would only discard evidence. Improved: the lower bound is above
 * 0; regressed: the upper bound is below 0, or the no-regression veto (evaluation.
 * gate_max_regressions) is exceeded; otherwise undecided. What the sequential test itself would
 * have said on the same items is kept as `paired_verdict`.
 *
 * The run's gate rule words the verdict (the same module and choice as training: `auto` picks by
 * the number of tasks and the measured flip rate). Under the posterior rule a candidate the rule
 * accepts reads as improved even when the always-valid lower bound is not above 0; the decision
 * is then marked `low_evidence`. Regressed stays what the bounds (or the veto) show under every
 * rule: a check never fails on weak evidence.
 */
type CompareVerdict = "improved" | "regressed" | "undecided";

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
  /** The rule that worded the verdict and why (`auto`: chosen from the tasks and the flip rate). */
  rule: RuleChoice;
  /** What size of change this run could detect (the noise floor's function, sequential.ts). */
  power: { detectable_gain: number; flip_rate: number; noise_items: number; noise_flips: number; confidence: number };
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
const scores = (r: RolloutResult): ItemScores => [Number(r.hard) || 0, Number(r.soft) || 0];
const clip = (s: unknown) => {
  const t = String(s ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return t.length > 120 ? `${t.slice(0, 119)}…` : t;
};

/** Items whose two samples of the same skill score differently (the noise floor's flip count). */
export function countFlips(
  g: GateSettings,
  first: readonly RolloutResult[],
  second: readonly RolloutResult[],
): { compared: number; flips: number } {
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
export function compareSkills(
  g: GateSettings,
  baseline: readonly RolloutResult[],
  candidate: readonly RolloutResult[],
  noise: { compared: number; flips: number },
): SkillComparison {
  const cand = new Map(candidate.map((r) => [String(r.id), r]));
  const pairs = baseline.flatMap((b) => {
    const c = cand.get(String(b.id));
    return c ? [{ b, c, d: itemScore(g, ...scores(c)) - itemScore(g, ...scores(b)) }] : [];
  });
  const s = { ...g.sequential, minEffect: 0 };
  const diffs = pairs.map((p) => p.d);
  const broke = pairs.map((p) => passed(scores(p.b)) && !passed(scores(p.c)));
  const all = decideOnItems(diffs, broke, "strict", s);
  const vetoed = s.maxRegressions !== null && broke.filter(Boolean).length > s.maxRegressions;
  const confidence = 1 - g.sequential.alpha;
  const flipRate = noise.compared ? noise.flips / noise.compared : 0;
  const rule = ruleFor(g, pairs.length, noise.compared ? flipRate : undefined);
  const gate = makeGate(rule.rule, s);
  // A rule that may accept beyond the always-valid bound (posterior) words an improvement on its own accept.
  const own = gate.beyondBounds ? gate.onItems(diffs, broke) : undefined;
  const verdict: CompareVerdict =
    vetoed || (pairs.length > 0 && all.ci[1] < 0)
      ? "regressed"
      : pairs.length > 0 && (all.ci[0] > 0 || own?.verdict === "accept")
        ? "improved"
        : "undecided";
  const decision: GateDecision = {
    ...all,
    ...(own ? { prob_gain: own.prob_gain } : {}),
    ...(verdict === "improved" ? { low_evidence: !(all.ci[0] > 0) } : {}),
    rule: own ? gate.rule : "paired",
    verdict: verdict === "improved" ? "accept" : verdict === "regressed" ? "reject" : "undecided",
    reason:
      verdict === "improved"
        ? "better"
        : vetoed
          ? "regressions"
          : verdict === "regressed"
            ? "below_min_effect"
            : "end_of_split",
    paired_verdict: decideOnItems(diffs, broke, "paired", s).verdict,
  };
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
    return {
      hard: r6(rs.reduce((a, r) => a + scores(r)[0], 0) / rs.length),
      soft: r6(rs.reduce((a, r) => a + scores(r)[1], 0) / rs.length),
    };
  };
  return {
    verdict,
    decision,
    rule,
    metric: g.metric,
    n_items: pairs.length,
    baseline: mean(pairs.map((p) => p.b)),
    candidate: mean(pairs.map((p) => p.c)),
    flips: {
      regressed: pairs
        .filter((p) => p.d < -1e-9)
        .sort((a, b) => a.d - b.d)
        .map(row),
      improved: pairs
        .filter((p) => p.d > 1e-9)
        .sort((a, b) => b.d - a.d)
        .map(row),
    },
    power: {
      detectable_gain: r6(detectableGain(pairs.length, flipRate, confidence)),
      flip_rate: r6(flipRate),
      noise_items: noise.compared,
      noise_flips: noise.flips,
      confidence,
    },
  };
}
