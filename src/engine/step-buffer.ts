import type { EditReportRow } from "./edits.ts";
import { isFailure } from "./evaluate.ts";
import type { RolloutResult } from "./ports.ts";
import type { FailurePattern, StepBufferEntry, StepBufferSummary } from "./state.ts";

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

/** What the summary of older steps lists: patterns, rejected and unapplied edits. */
const SUMMARY_PATTERNS = 10;
const SUMMARY_REJECTED = 24;
const SUMMARY_FAILED = 12;
/** Distinct failure patterns the summary keeps counting (reasons can be free text). */
const KEPT_PATTERNS = 64;

/** The epoch's buffer as the loop state keeps it: the last steps in full, the older ones folded. */
export interface StepBufferState {
  stepBuffer: StepBufferEntry[];
  stepBufferOlder?: StepBufferSummary | undefined;
}

/**
 * Append a step's entry; with a window, fold the entries past it into the summary. The reference
 * keeps every entry of the epoch (spec §2.9), so a prompt late in a long epoch, the loop state and
 * every checkpoint grow with the epoch's length; folded, they stop growing. With no more entries
 * than the window (every upstream configuration: at most 10 steps per epoch) nothing is folded.
 */
export function pushStepBuffer(state: StepBufferState, entry: StepBufferEntry, window: number | null): void {
  state.stepBuffer.push(entry);
  if (window === null) return;
  while (state.stepBuffer.length > window)
    state.stepBufferOlder = foldEntry(state.stepBufferOlder, state.stepBuffer.shift()!);
}

/** The summary with one more (newer) entry folded in. */
function foldEntry(prev: StepBufferSummary | undefined, e: StepBufferEntry): StepBufferSummary {
  const s: StepBufferSummary = prev ?? {
    first: e.step,
    last: e.step,
    steps: 0,
    actions: {},
    n_fail: 0,
    n_total: 0,
    patterns: [],
    rarer: 0,
    rejected: [],
    rejected_more: 0,
    failed: [],
    failed_more: 0,
  };
  s.last = e.step;
  s.steps += 1;
  s.actions[e.action] = (s.actions[e.action] ?? 0) + 1;
  s.n_fail += e.n_fail;
  s.n_total += e.n_total;
  for (const p of e.failure_patterns) {
    const known = s.patterns.find((q) => q.pattern === p.pattern);
    if (known) {
      known.count += p.count;
      known.steps += 1;
      continue;
    }
    if (s.patterns.length >= KEPT_PATTERNS) {
      // Let the least frequent go (the earliest on a tie) to make room.
      let low = 0;
      for (let i = 1; i < s.patterns.length; i++) if (s.patterns[i]!.count < s.patterns[low]!.count) low = i;
      s.patterns.splice(low, 1);
      s.rarer += 1;
    }
    s.patterns.push({ pattern: p.pattern, count: p.count, steps: 1 });
  }
  s.rejected_more += addRecent(s.rejected, e.step, (e.rejected_edits ?? []).map(rejectedLine), SUMMARY_REJECTED);
  s.failed_more += addRecent(s.failed, e.step, (e.failed_edits ?? []).map(failedLine), SUMMARY_FAILED);
  return s;
}

/**
 * Put a step's edits at the front of a newest-first list, each edit listed once (at its latest
 * step), and cut the list to `cap`; returns how many edits the cut let go.
 */
function addRecent(
  list: { step: number; text: string }[],
  step: number,
  texts: readonly string[],
  cap: number,
): number {
  const mine = [...new Set(texts)];
  for (const text of mine) {
    const at = list.findIndex((x) => x.text === text);
    if (at >= 0) list.splice(at, 1);
  }
  list.unshift(...mine.map((text) => ({ step, text })));
  return list.length > cap ? list.splice(cap).length : 0;
}

/**
 * Render the buffer for analyst / LR / rewrite prompts; empty buffer → "" (section omitted).
 * The older steps, when there are any, come first as one summary of bounded size.
 */
export function renderStepBuffer(buffer: StepBufferState): string {
  const { stepBuffer: entries, stepBufferOlder: older } = buffer;
  if (!entries.length && !older) return "";
  const lines = [
    "Summary of the previous steps in this epoch. Avoid repeating edits that were rejected or did not apply, and prioritise patterns that are still unsolved.",
  ];
  if (older) renderSummary(older, lines);
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

function renderSummary(s: StepBufferSummary, lines: string[]): void {
  const did = Object.entries(s.actions)
    .map(([a, n]) => `${n} ${a.toUpperCase()}`)
    .join(", ");
  const span = s.first === s.last ? `Step ${s.first}` : `Steps ${s.first}–${s.last}`;
  lines.push("", `### ${span}, summarised (${steps(s.steps)}: ${did}; ${s.n_fail}/${s.n_total} failed)`);
  // Most frequent first; ties keep first-seen order (Array.prototype.sort is stable).
  const top = [...s.patterns].sort((a, b) => b.count - a.count);
  for (const p of top.slice(0, SUMMARY_PATTERNS)) lines.push(`- "${p.pattern}" (×${p.count} in ${steps(p.steps)})`);
  const rarer = Math.max(0, top.length - SUMMARY_PATTERNS) + s.rarer;
  if (rarer) lines.push(`- … and ${rarer} rarer patterns`);
  listEdits(
    lines,
    "Edits rejected in those steps, most recent first:",
    s.rejected,
    s.rejected_more,
    "earlier rejected edits",
  );
  listEdits(
    lines,
    "Edits that did not apply as written in those steps, most recent first:",
    s.failed,
    s.failed_more,
    "earlier edits that did not apply",
  );
}

function listEdits(
  lines: string[],
  title: string,
  list: readonly { step: number; text: string }[],
  more: number,
  rest: string,
): void {
  if (!list.length) return;
  lines.push(title);
  list.forEach((x, i) => {
    lines.push(`${i + 1}. step ${x.step}: ${x.text}`);
  });
  if (more) lines.push(`… and ${more} ${rest}`);
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
