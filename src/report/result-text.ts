import { join } from "node:path";
import { RUN_FILES } from "../run/index.ts";

function pct(x: unknown): string {
  return typeof x === "number" ? x.toFixed(3) : "—";
}

/** The human result of a training run: the three scores, counts, calls and cost. */
export function resultText(s: Record<string, unknown>): string {
  const g = (k: string) => (s[k] ?? {}) as Record<string, unknown>;
  const calls = g("calls");
  const lines = [
    `${s.status === "finished" ? "Training finished" : `Training stopped (${s.stopped_reason})`}${s.backend ? ` — ${s.backend}` : ""}`,
    `  selection: baseline ${pct(g("baseline").selection)} → best ${pct(g("best").selection)} (step ${g("best").step}) · final ${pct(g("final").selection)}`,
    `  test:      baseline ${pct(g("baseline").test)} → best ${pct(g("best").test)} · final ${pct(g("final").test)}`,
    `  steps ${s.steps}/${s.total_steps}: accepted ${s.accepted}, rejected ${s.rejected} (early ${s.rejected_early}), skipped ${s.skipped}`,
    `  calls ${calls.total} (cached ${calls.cached}), selection rollouts saved by early rejection ${s.selection_calls_saved}, cost ${typeof s.cost_usd === "number" ? `$${s.cost_usd.toFixed(4)}` : "unknown"}, wall ${s.wall_s}s`,
    `  best skill: ${join(String(s.out), RUN_FILES.bestSkill)}`,
  ];
  return lines.join("\n");
}
