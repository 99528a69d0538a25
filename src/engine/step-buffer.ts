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

/** Failure patterns and edits listed for the summarised older steps (newest first past the cap). */
const SUMMARY_PATTERNS = 10;
const SUMMARY_REJECTED = 24;
const SUMMARY_FAILED = 12;

/**
 * Render the buffer for analyst / LR / rewrite prompts; empty buffer → "" (section omitted).
 *
 * The reference shows every earlier step of the epoch in full (spec §2.9), so a call late in a long
 * epoch carries hundreds of entries: its tokens, and the run's cost, grow with the square of the
 * epoch's length. With `window` set, the last `window` entries are shown in full and the earlier
 * ones as one bounded summary (what they did, the most frequent failure patterns, the most recent
 * rejected and unapplied edits), so the section stops growing. With no more entries than `window`
 * (every upstream configuration: at most 10 steps per epoch) the text is the reference's.
 */
export function renderStepBuffer(entries: readonly StepBufferEntry[], window: number | null = null): string {
  if (!entries.length) return "";
  const lines = [
    "Summary of the previous steps in this epoch. Avoid repeating edits that were rejected or did not apply, and prioritise patterns that are still unsolved.",
  ];
  const cut = window === null ? 0 : Math.max(0, entries.length - window);
  if (cut > 0) summariseOlder(entries.slice(0, cut), lines);
  for (const e of entries.slice(cut)) {
    lines.push("", `### Step ${e.step} — ${e.action.toUpperCase()} (${e.n_fail}/${e.n_total} failed)`);
    for (const p of e.failure_patterns) lines.push(`- "${p.pattern}" (×${p.count}, tasks: ${p.task_ids.join(", ")})`);
    if (e.rejected_edits?.length) {
      lines.push(
        e.score_after === undefined
          ? `Rejected edits (did not beat the current score ${fmt(e.score_before)}):`
          : `Rejected edits (score ${fmt(e.score_before)} → ${fmt(e.score_after)}):`,
      );
      e.rejected_edits.forEach((r, i) => {
        lines.push(`${i + 1}. ${rejectedLine(r)}`);
      });
    }
    if (e.failed_edits?.length) {
      lines.push("Edits that did not apply as written:");
      e.failed_edits.forEach((f, i) => {
        lines.push(`${i + 1}. ${failedLine(f)}`);
      });
    }
  }
  return lines.join("\n");
}

/** The older entries as one summary whose size does not depend on how many there are. */
function summariseOlder(older: readonly StepBufferEntry[], lines: string[]): void {
  const first = older[0]!.step;
  const last = older[older.length - 1]!.step;
  const actions = new Map<string, number>();
  const patterns = new Map<string, { count: number; steps: number }>();
  let fail = 0;
  let total = 0;
  for (const e of older) {
    actions.set(e.action, (actions.get(e.action) ?? 0) + 1);
    fail += e.n_fail;
    total += e.n_total;
    for (const p of e.failure_patterns) {
      const g = patterns.get(p.pattern) ?? { count: 0, steps: 0 };
      g.count += p.count;
      g.steps += 1;
      patterns.set(p.pattern, g);
    }
  }
  const did = [...actions].map(([a, n]) => `${n} ${a.toUpperCase()}`).join(", ");
  const span = first === last ? `Step ${first}` : `Steps ${first}–${last}`;
  lines.push("", `### ${span}, summarised (${steps(older.length)}: ${did}; ${fail}/${total} failed)`);
  // Most frequent first; ties keep first-seen order (Array.prototype.sort is stable).
  const top = [...patterns].sort((a, b) => b[1].count - a[1].count);
  for (const [p, g] of top.slice(0, SUMMARY_PATTERNS)) lines.push(`- "${p}" (×${g.count} in ${steps(g.steps)})`);
  if (top.length > SUMMARY_PATTERNS) lines.push(`- … and ${top.length - SUMMARY_PATTERNS} rarer patterns`);
  const newestFirst = [...older].reverse();
  listRecent(
    lines,
    "Edits rejected in those steps, most recent first:",
    newestFirst.flatMap((e) => (e.rejected_edits ?? []).map((r) => `step ${e.step}: ${rejectedLine(r)}`)),
    SUMMARY_REJECTED,
    "earlier rejected edits",
  );
  listRecent(
    lines,
    "Edits that did not apply as written in those steps, most recent first:",
    newestFirst.flatMap((e) => (e.failed_edits ?? []).map((f) => `step ${e.step}: ${failedLine(f)}`)),
    SUMMARY_FAILED,
    "earlier edits that did not apply",
  );
}

/** Up to `cap` lines, numbered, the same edit repeated in several steps listed once (its latest). */
function listRecent(lines: string[], title: string, items: readonly string[], cap: number, rest: string): void {
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const item of items) {
    const edit = item.slice(item.indexOf(": ") + 2);
    if (seen.has(edit)) continue;
    seen.add(edit);
    unique.push(item);
  }
  if (!unique.length) return;
  lines.push(title);
  unique.slice(0, cap).forEach((item, i) => {
    lines.push(`${i + 1}. ${item}`);
  });
  if (unique.length > cap) lines.push(`… and ${unique.length - cap} ${rest}`);
}

const steps = (n: number) => (n === 1 ? "1 step" : `${n} steps`);

function rejectedLine(r: Record<string, unknown>): string {
  if ("op" in r) return `[${r.op}]${r.target ? ` target="${r.target}"` : ""} → "${r.content}"`;
  if ("instruction" in r) return `[${r.type}] "${r.title}" → "${r.instruction}"`;
  return `[candidate] "${r.title ?? ""}"`;
}

function failedLine(f: NonNullable<StepBufferEntry["failed_edits"]>[number]): string {
  return `[${f.op}] target="${f.target}" — ${f.status}${f.reason ? `: ${f.reason}` : ""}`;
}

function fmt(x: number | undefined): string {
  return x === undefined ? "?" : x.toFixed(4);
}
