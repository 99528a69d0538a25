import type { RolloutResult } from "../../engine/index.ts";

/** Precision, recall and F1 of loading the trained skill over a split, with the counts behind them. */
interface TriggerMetrics {
  [k: string]: number | null;
  n: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** null when the skill never loaded (no decision to be precise about). */
  precision: number | null;
  /** null when the split has no query that should load it. */
  recall: number | null;
  f1: number | null;
  accuracy: number | null;
}

/**
 * Trigger figures over scored rollouts (`trigger_expected`, `trigger_loaded`); results without a
 * decision (a failed call) are left out, never counted as "not loaded".
 */
export function triggerMetrics(results: readonly RolloutResult[]): TriggerMetrics {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  for (const r of results) {
    if (typeof r.trigger_expected !== "boolean" || typeof r.trigger_loaded !== "boolean") continue;
    if (r.trigger_expected) r.trigger_loaded ? tp++ : fn++;
    else r.trigger_loaded ? fp++ : tn++;
  }
  const n = tp + fp + fn + tn;
  const precision = tp + fp ? tp / (tp + fp) : null;
  const recall = tp + fn ? tp / (tp + fn) : null;
  const f1 =
    tp + fn === 0
      ? null
      : precision === null || recall === null || precision + recall === 0
        ? 0
        : (2 * precision * recall) / (precision + recall);
  return { n, tp, fp, fn, tn, precision, recall, f1, accuracy: n ? (tp + tn) / n : null };
}
