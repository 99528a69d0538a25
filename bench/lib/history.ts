import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Accounting that legitimately differs between two runs with the same decisions: timings, call
 * and token counts and cost (cache hits are free), and how many selection rollouts early
 * rejection spared (rollouts already in flight when it stops depend on timing).
 */
const ACCOUNTING = new Set([
  "timing",
  "calls",
  "tokens",
  "cost_usd",
  "selection_calls_saved",
  "wall_time_s",
  "seconds",
  "started_at",
  "finished_at",
  "created_at",
]);

/** A run's history.jsonl records without their accounting, for comparing two runs. */
export function stableHistory(out: string): unknown[] {
  const path = join(out, "history.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l, (k, v) => (ACCOUNTING.has(k) ? undefined : v)) as unknown);
}
