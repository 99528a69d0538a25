import type { EditReportRow } from "./edits.ts";
import { isFailure } from "./evaluate.ts";
import type { RolloutResult } from "./ports.ts";
import type { FailurePattern, StepBufferEntry } from "./state.ts";

export type { StepBufferEntry };

const MAX_IDS = 8;

/**
 * Group failures by fail-reason prefix; each group is described by its own reason text rather
 * than by position in the analysts' summaries (spec §10.9). Task id lists are capped.
 */
export function failurePatterns(results: readonly RolloutResult[]): FailurePattern[] {
  const groups = new Map<string, FailurePattern>();
  for (const r of results.filter(isFailure)) {
    const reason = r.fail_reason ? String(r.fail_reason) : "unknown";
    const prefix = reason.includes(":") ? reason.slice(0, reason.indexOf(":")).trim() : reason;
    const key = `${prefix}|${r.task_type ?? ""}`;
    const g = groups.get(key) ?? {
      pattern: r.task_type ? `${prefix} (${r.task_type})` : prefix,
      count: 0,
      task_ids: [],
    };
    g.count += 1;
    if (g.task_ids.length < MAX_IDS) g.task_ids.push(r.id);
    groups.set(key, g);
  }
  return [...groups.values()];
}

/** A compact summary of an item for the rejected-edit list. */
export function describeRejected(item: Record<string, unknown>): Record<string, unknown> {
  if ("op" in item) return { op: item.op, content: item.content ?? "", target: item.target ?? "" };
  if ("instruction" in item) return { type: item.type, title: item.title, instruction: item.instruction };
  return { title: item.title, change_summary: item.change_summary, source_type: item.source_type };
}

export function failedEdits(report: readonly EditReportRow[]): StepBufferEntry["failed_edits"] {
  const out = report.filter((r) => !r.status.startsWith("applied") || r.status.includes("fallback"));
  return out.map((r) => ({ op: r.op, target: r.target, status: r.status, ...(r.reason ? { reason: r.reason } : {}) }));
}

/** Render the buffer for analyst / LR / rewrite prompts; empty buffer → "" (section omitted). */
export function renderStepBuffer(entries: readonly StepBufferEntry[]): string {
  if (!entries.length) return "";
  const lines = [
    "Summary of the previous steps in this epoch. Avoid repeating edits that were rejected or did not apply, and prioritise patterns that are still unsolved.",
  ];
  for (const e of entries) {
    lines.push("", `### Step ${e.step} — ${e.action.toUpperCase()} (${e.n_fail}/${e.n_total} failed)`);
    for (const p of e.failure_patterns) lines.push(`- "${p.pattern}" (×${p.count}, tasks: ${p.task_ids.join(", ")})`);
    if (e.rejected_edits?.length) {
      lines.push(
        e.score_after === undefined
          ? `Rejected edits (did not beat the current score ${fmt(e.score_before)}):`
          : `Rejected edits (score ${fmt(e.score_before)} → ${fmt(e.score_after)}):`,
      );
      e.rejected_edits.forEach((r, i) => {
        if ("op" in r) lines.push(`${i + 1}. [${r.op}]${r.target ? ` target="${r.target}"` : ""} → "${r.content}"`);
        else if ("instruction" in r) lines.push(`${i + 1}. [${r.type}] "${r.title}" → "${r.instruction}"`);
        else lines.push(`${i + 1}. [candidate] "${r.title ?? ""}"`);
      });
    }
    if (e.failed_edits?.length) {
      lines.push("Edits that did not apply as written:");
      e.failed_edits.forEach((f, i) => {
        lines.push(`${i + 1}. [${f.op}] target="${f.target}" — ${f.status}${f.reason ? `: ${f.reason}` : ""}`);
      });
    }
  }
  return lines.join("\n");
}

function fmt(x: number | undefined): string {
  return x === undefined ? "?" : x.toFixed(4);
}
