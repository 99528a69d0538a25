import { type GateDecision, PairedSequentialTest, type SequentialSettings } from "./sequential.ts";
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
  /** strict: the reference rule (mean above current); paired: the sequential test (sequential.ts). */
  rule: "strict" | "paired";
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
    rule: ev.gate_rule,
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
  rule: "strict" | "paired",
  verdict: GateDecision["verdict"],
  reason?: GateDecision["reason"],
): GateDecision {
  const t = new PairedSequentialTest(cand.length, g.sequential);
  cand.forEach((c, i) => {
    const u = cur[i];
    if (c && u) t.observe(itemScore(g, c[0], c[1]) - itemScore(g, u[0], u[1]));
  });
  const r = t.result();
  return {
    ...r,
    rule,
    verdict,
    reason: reason ?? (verdict === "accept" ? "better" : verdict === "reject" ? "not_better" : "end_of_split"),
  };
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

type GateAction = "accept_new_best" | "accept" | "reject" | "force_accept";

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

/**
 * A decision over fully scored per-item differences (candidate − incumbent, each in [−1, 1]), as
 * SkillOpt-Sleep's gate makes it: `paired` runs the sequential test over the items in order and
 * stops at its verdict; `strict` accepts when the mean difference is above `margin` and records
 * the same evidence (Δ, bounds, flips) so both read alike in reports.
 */
export function decideOnItems(
  diffs: readonly number[],
  regressed: readonly boolean[],
  rule: "strict" | "paired",
  s: SequentialSettings,
  margin = 0,
): GateDecision {
  const t = new PairedSequentialTest(Math.max(1, diffs.length), s);
  if (rule === "paired") {
    for (let i = 0; i < diffs.length; i++)
      if (t.push(Math.max(-1, Math.min(1, diffs[i]!)), regressed[i] === true)) break;
    return diffs.length ? t.result() : { ...t.result(), verdict: "undecided", reason: "end_of_split" };
  }
  for (const d of diffs) t.observe(Math.max(-1, Math.min(1, d)));
  const r = t.result();
  const better = diffs.length > 0 && r.delta > margin;
  return { ...r, rule: "strict", verdict: better ? "accept" : "reject", reason: better ? "better" : "not_better" };
}
