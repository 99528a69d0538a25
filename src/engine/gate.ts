import { PosteriorTest, posteriorPrior } from "./posterior.ts";
import {
  detectableGain,
  type GateDecision,
  type ItemTest,
  PairedSequentialTest,
  type SequentialSettings,
} from "./sequential.ts";
import type { EngineConfig } from "./settings.ts";
import { stripRegions } from "./skill-doc.ts";

const DEFAULT_LEADING_WORDS = [
  "must",
  "always",
  "never",
  "only",
  "critical",
  "important",
  "resolve",
  "prefer",
  "ensure",
  "strict",
  "verify",
];

/** How a gate turns an item's (hard, soft) into one number; the engine's and Sleep's gates share it. */
export interface GateMetric {
  metric: "hard" | "soft" | "mixed";
  /** The soft share under `mixed`, clamped to [0, 1]. */
  mixedWeight: number;
}

/** Gate settings resolved from the evaluation section. */
export interface GateSettings extends GateMetric {
  useGate: boolean;
  densityWeight: number;
  leadingWords: Set<string>;
  earlyReject: boolean;
  /**
   * The configured rule: strict (the reference rule: mean above current), paired (the sequential
   * test, sequential.ts), posterior (posterior.ts), or `auto`, which picks one of them from the
   * split size and the noise floor (ruleFor). The run's Gate holds the rule that decides.
   */
  configured: GateRule | "auto";
  sequential: SequentialSettings;
  /** Initial-skill items re-sampled to measure the flip rate (0 = off). */
  noiseFloorItems: number;
}

export function gateSettings(ev: EngineConfig["evaluation"]): GateSettings {
  const list = (ev.leading_words ?? DEFAULT_LEADING_WORDS).map((w) => w.trim().toLowerCase()).filter(Boolean);
  return {
    useGate: ev.use_gate,
    metric: ev.gate_metric,
    mixedWeight: Math.min(1, Math.max(0, ev.gate_mixed_weight)),
    densityWeight: ev.use_semantic_density ? ev.semantic_density_weight : 0,
    leadingWords: new Set(list.length ? list : DEFAULT_LEADING_WORDS),
    earlyReject: ev.early_reject,
    configured: ev.gate_rule,
    sequential: {
      alpha: 1 - ev.gate_confidence,
      minEffect: ev.gate_min_effect,
      maxRegressions: ev.gate_max_regressions,
    },
    noiseFloorItems: ev.noise_floor_items,
  };
}

/** One item's (hard, soft) scores; null where the item was not (yet) scored. */
export type ItemScores = readonly [number, number];

/** Did an item pass (hard score 1)? The no-regression veto counts items that stop passing. */
export const passed = (x: ItemScores) => x[0] >= 1 - 1e-9;

/**
 * The record of a decision over paired per-item scores: Δ, always-valid bounds, items used and
 * flips both ways. Used for the strict rule too (its verdict is the mean comparison; the record
 * shows how sure that comparison was).
 */
export function pairedRecord(
  g: GateSettings,
  cand: readonly (ItemScores | null)[],
  cur: readonly (ItemScores | null)[],
  rule: GateRule,
  verdict: GateDecision["verdict"],
  reason?: GateDecision["reason"],
): GateDecision {
  const t = new PairedSequentialTest(cand.length, g.sequential);
  cand.forEach((c, i) => {
    const u = cur[i];
    if (c && u) t.observe(itemScore(g, c[0], c[1]) - itemScore(g, u[0], u[1]));
  });
  const r = t.result();
  return withEvidence({
    ...r,
    rule,
    verdict,
    reason: reason ?? (verdict === "accept" ? "better" : verdict === "reject" ? "not_better" : "end_of_split"),
  });
}

/** Mark an accept whose always-valid lower bound is not above 0 as low evidence (every rule's record). */
export function withEvidence(d: GateDecision): GateDecision {
  return d.verdict === "accept" ? { ...d, low_evidence: !(d.ci[0] > 0) } : d;
}
/** Share of leading words among the skill's tokens, protected regions excluded (spec §2.8). */
export function semanticDensity(skill: string, words: Set<string>): number {
  const tokens =
    stripRegions(skill)
      .toLowerCase()
      .match(/[a-z0-9]+/g) ?? [];
  if (!tokens.length) return 0;
  return tokens.filter((t) => words.has(t)).length / tokens.length;
}

/** Per-item score under the gate metric (bounded in [0,1] for every metric). */
export function itemScore(m: GateMetric, hard: number, soft: number): number {
  if (m.metric === "hard") return hard;
  if (m.metric === "soft") return soft;
  const w = Math.min(1, Math.max(0, m.mixedWeight));
  return (1 - w) * hard + w * soft;
}

/** The gate score of a skill from its mean hard and soft scores. */
export function gateScore(g: GateSettings, hard: number, soft: number, skill: string): number {
  const base = itemScore(g, hard, soft);
  return g.densityWeight ? base + g.densityWeight * semanticDensity(skill, g.leadingWords) : base;
}

export type GateAction = "accept_new_best" | "accept" | "reject" | "force_accept";

/** The gate decision: strict improvement over the current score; ties reject (spec §2.8). */
export function decide(
  g: GateSettings,
  cand: number,
  current: number,
  best: number,
): { action: GateAction; newBest: boolean } {
  if (!g.useGate) return { action: "force_accept", newBest: cand > best };
  if (cand > current && cand > best) return { action: "accept_new_best", newBest: true };
  if (cand > current) return { action: "accept", newBest: false };
  return { action: "reject", newBest: false };
}

/** The gate rules a run can be decided by. */
export type GateRule = "strict" | "paired" | "posterior";

/** What a gate knows about the run when it decides: the noise floor and the history of decisions. */
interface GateEvidence {
  /** The current skill's flip rate between two samples (undefined when not measured). */
  flipRate?: number;
  /** Observed mean differences of the candidates decided so far in this run, oldest first. */
  history?: readonly number[];
}

/**
 * One gate, chosen once from the configuration (and, under `auto`, the split and noise floor):
 * the step's gate stage and the epoch boundary's slow update (gate-pass.ts), Sleep's held-out
 * replays and `eval --baseline` all decide through it. The rules are its implementations
 * (strict, paired, posterior below); makeGate is the one place a rule name picks one.
 */
export interface Gate {
  readonly rule: GateRule;
  /** strict decides on the full pass's means (with its early rejection); the others item by item. */
  readonly itemwise: boolean;
  /**
   * The rule may accept where the always-valid bound is not above 0 (a decision rule, not a test:
   * its accepts are marked low evidence); `eval --baseline` then counts its accept as improved.
   */
  readonly beyondBounds: boolean;
  /** A decision over n items read in order; maxGain(i) is the most item i can still add. */
  test(n: number, ev: GateEvidence, maxGain?: (i: number) => number): ItemTest;
  /**
   * A decision over fully scored differences (candidate − incumbent, each in [−1, 1]), as Sleep
   * makes it: the rule reads the items in order and stops at its verdict; strict accepts when the
   * mean difference is above `margin`. Every rule records the same evidence (Δ, bounds, flips).
   */
  onItems(diffs: readonly number[], regressed: readonly boolean[], ev?: GateEvidence, margin?: number): GateDecision;
}

const clip = (d: number) => Math.max(-1, Math.min(1, d));

/** The item-by-item rules read fully scored differences in order and stop at their verdict. */
function readInOrder(t: ItemTest, diffs: readonly number[], regressed: readonly boolean[]): GateDecision {
  for (let i = 0; i < diffs.length; i++) if (t.push(clip(diffs[i]!), regressed[i] === true)) break;
  const r = t.result();
  return diffs.length ? withEvidence(r) : { ...r, verdict: "undecided", reason: "end_of_split" };
}

/** strict, the reference rule: the candidate's mean over the whole split above the current's. */
function strictRule(s: SequentialSettings): Gate {
  return {
    rule: "strict",
    itemwise: false,
    beyondBounds: false,
    test: (n, _ev, maxGain) => new PairedSequentialTest(n, s, maxGain),
    onItems(diffs, _regressed, _ev, margin = 0) {
      const t = new PairedSequentialTest(Math.max(1, diffs.length), s);
      for (const d of diffs) t.observe(clip(d));
      const r = t.result();
      const better = diffs.length > 0 && r.delta > margin;
      return withEvidence({
        ...r,
        rule: "strict",
        verdict: better ? "accept" : "reject",
        reason: better ? "better" : "not_better",
      });
    },
  };
}

/** paired: the always-valid paired sequential test (sequential.ts). */
function pairedRule(s: SequentialSettings): Gate {
  const test = (n: number, _ev: GateEvidence, maxGain?: (i: number) => number) =>
    new PairedSequentialTest(n, s, maxGain);
  return {
    rule: "paired",
    itemwise: true,
    beyondBounds: false,
    test,
    onItems: (diffs, regressed, ev = {}) => readInOrder(test(Math.max(1, diffs.length), ev), diffs, regressed),
  };
}

/** posterior: the posterior probability of a gain, its prior learned from the run (posterior.ts). */
function posteriorRule(s: SequentialSettings): Gate {
  const test = (n: number, ev: GateEvidence, maxGain?: (i: number) => number) =>
    new PosteriorTest(n, s, posteriorPrior(ev.history ?? [], ev.flipRate), undefined, maxGain);
  return {
    rule: "posterior",
    itemwise: true,
    beyondBounds: true,
    test,
    onItems: (diffs, regressed, ev = {}) => readInOrder(test(Math.max(1, diffs.length), ev), diffs, regressed),
  };
}

const RULES: Record<GateRule, (s: SequentialSettings) => Gate> = {
  strict: strictRule,
  paired: pairedRule,
  posterior: posteriorRule,
};

/** The gate of a rule with the given test settings. */
export function makeGate(rule: GateRule, s: SequentialSettings): Gate {
  return RULES[rule](s);
}

/**
 * Largest detectable gain (80 % power, the noise floor's figure) at which `auto` trusts the paired
 * test: on a split that can see a gain this small the always-valid test keeps almost every good
 * edit and saves rollouts; on a smaller or noisier one it can accept too little (docs/gate.md,
 * end to end), and the posterior rule decides.
 */
const AUTO_PAIRED_MAX_DETECTABLE = 0.12;

/** What `auto` chose and why, in words for the run's first lines. */
export interface RuleChoice {
  rule: GateRule;
  why: string;
}

/** The rule `auto` picks for a split of n items at the measured flip rate (undefined: not measured). */
export function chooseRule(n: number, flipRate: number | undefined, confidence: number): RuleChoice {
  const mde = detectableGain(n, flipRate ?? 0, confidence);
  const pts = (x: number) => `${Math.round(x * 100)} points`;
  const noise = flipRate === undefined ? "no noise floor measured" : `a ${Math.round(flipRate * 100)} % flip rate`;
  if (mde <= AUTO_PAIRED_MAX_DETECTABLE)
    return {
      rule: "paired",
      why: `${n} selection items and ${noise}: the paired test can detect a gain of ~${pts(mde)}, so it decides (and stops early on clear losers)`,
    };
  return {
    rule: "posterior",
    why:
      `${n} selection items and ${noise}: the paired test could only detect a gain of ~${pts(mde)} ` +
      `(above ${pts(AUTO_PAIRED_MAX_DETECTABLE)}), so the posterior rule decides; ` +
      "its accepts the paired test would not make are marked low evidence",
  };
}

/**
 * The rule of a run or check with n selection items: the configured one, or under `auto` the
 * one chooseRule picks from n and the measured flip rate (undefined: not measured).
 */
export function ruleFor(g: GateSettings, n: number, flipRate: number | undefined): RuleChoice {
  return g.configured === "auto"
    ? chooseRule(n, flipRate, 1 - g.sequential.alpha)
    : { rule: g.configured, why: "configured" };
}

/**
 * A decision over fully scored per-item differences with the named rule (Sleep's held-out
 * replays): makeGate(rule, s).onItems.
 */
export function decideOnItems(
  diffs: readonly number[],
  regressed: readonly boolean[],
  rule: GateRule,
  s: SequentialSettings,
  margin = 0,
  ev: GateEvidence = {},
): GateDecision {
  return makeGate(rule, s).onItems(diffs, regressed, ev, margin);
}
