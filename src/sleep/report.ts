import { escapeMarkdownCell, escapeMarkdownProse, redactSecrets, sanitizeLine as sanitize } from "../lib/index.ts";
import type { LedgerEntry } from "./store-port.ts";
import { type LessonCard, renderCards } from "./lessons.ts";
import type { GateDecision } from "../engine/index.ts";
import type { ConsolidateResult, EditRecord, GateTrial } from "./types.ts";

/** Δ with its always-valid bounds, the tasks used, the flips and the verdict of one gate trial. */
export function gateLine(g: GateDecision): string {
  const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;
  return `Δ ${pts(g.delta)} pts, ${Math.round(g.confidence * 100)} % bounds [${pts(g.ci[0])}, ${pts(g.ci[1])}] on ${g.n_used}/${g.n_total} held-out tasks, \
+${g.flips.gained}/−${g.flips.lost} tasks; ${g.rule} gate verdict: \
**${g.verdict}**${g.verdict === "undecided" ? " (too few held-out tasks to tell — the current version stays)" : ""}${
    g.paired_verdict
      ? ` (paired test on the \
same tasks: ${g.paired_verdict})`
      : ""
  }`;
}

/** Where a night's tasks came from: mined from the sessions, a --tasks-file, or a handoff round's sealed pin. */
export type TasksSource = "mined" | "tasks_file" | "handoff_pin";

/** `report.json` (spec §7.6), with our additive `backend`, `replay_mode` and `budget`. */
export interface SleepReport {
  night: number;
  project: string;
  started_at: string;
  ended_at: string;
  backend: string;
  replay_mode: string;
  n_sessions: number;
  n_tasks: number;
  /** Where the tasks came from (additive). */
  tasks_source: TasksSource;
  n_replayed: number;
  baseline_score: number | null;
  candidate_score: number | null;
  accepted: boolean;
  gate_action: string;
  holdout_leaked: boolean;
  no_edits_reason: string;
  edits: EditRecord[];
  rejected_edits: EditRecord[];
  unmatched_edits: EditRecord[];
  skill_groups: unknown[];
  tokens_used: number;
  notes: string[];
  gate_no_regression: boolean;
  gate_trials: GateTrial[];
  budget: { calls: number; tokens: number; cost_usd: number; seconds: number; stages: LedgerEntry[] };
  /** Evidence cards of the staged memory lesson edits (additive). */
  lessons?: LessonCard[];
  /** Evidence cards of the staged, gated consolidation edits (additive). */
  edit_evidence?: LessonCard[];
}

/** Build the report of a consolidated night. */
export function buildReport(
  r: ConsolidateResult,
  meta: Omit<
    SleepReport,
    | "baseline_score"
    | "candidate_score"
    | "accepted"
    | "gate_action"
    | "holdout_leaked"
    | "no_edits_reason"
    | "edits"
    | "rejected_edits"
    | "unmatched_edits"
    | "skill_groups"
    | "notes"
    | "gate_trials"
  >,
): SleepReport {
  return finite({
    ...meta,
    baseline_score: r.baseline,
    candidate_score: r.candidate,
    accepted: r.accepted,
    gate_action: r.gateAction,
    holdout_leaked: r.holdoutLeaked,
    no_edits_reason: r.noEditsReason,
    edits: r.applied,
    rejected_edits: r.rejected,
    unmatched_edits: r.unmatched,
    skill_groups: [],
    notes: r.notes,
    gate_trials: redactSecrets(r.gateTrials),
  });
}

/** Non-finite numbers become null everywhere (spec §2.8). */
export function finite<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (_k, x) => (typeof x === "number" && !Number.isFinite(x) ? null : x))) as T;
}

/** One terminal-safe line (spec §1.7): redacted, no ANSI, no control/format chars, collapsed spaces. */
export const sanitizeLine = sanitize;
const cell = escapeMarkdownCell;
const prose = escapeMarkdownProse;
const score = (x: number | null) => (x === null || !Number.isFinite(x) ? "—" : x.toFixed(3));

const TASKS_SOURCE_TEXT: Record<TasksSource, string> = {
  mined: "the sessions",
  tasks_file: "a tasks file",
  handoff_pin: "this handoff round's sealed pin",
};

/** `report.md` (spec §7.5). */
export function renderReportMd(r: SleepReport, gateOn: boolean): string {
  const lines: string[] = [
    `# SkillOpt-Sleep — night ${r.night}`,
    "",
    `- project: ${prose(r.project)}`,
    `- backend: ${prose(r.backend)} (replay: ${prose(r.replay_mode)})`,
    `- sessions harvested: ${r.n_sessions}`,
    `- tasks mined: ${r.n_tasks} (replayed: ${r.n_replayed}; from: ${TASKS_SOURCE_TEXT[r.tasks_source] ?? "the sessions"})`,
    // Nothing replayed is no score (not 0.000 → 0.000).
    `- held-out: ${r.n_replayed === 0 ? "not scored (nothing was replayed)" : `${score(r.baseline_score)} -> ${score(r.candidate_score)}`}`,
    `- gate: **${r.gate_action}** (accepted=${r.accepted})`,
    `- no-regression gate: ${r.gate_no_regression ? "enabled" : "disabled"}`,
    `- tokens used: ${r.tokens_used}; model calls: ${r.budget.calls}; cost: $${r.budget.cost_usd.toFixed(4)}`,
  ];
  const unverified = r.holdout_leaked && gateOn;
  lines.push("");
  if (unverified)
    lines.push(
      "**Not validated:** the held-out tasks overlap the tasks the edits came from, so no improvement is claimed.",
      "",
    );
  const trials = r.gate_trials.filter((t) => t.task_deltas.length > 0);
  if (trials.length) {
    lines.push(
      "## Held-out task changes",
      "",
      "_Changes are observations on held-out tasks, not causal attributions._",
      "",
    );
    for (const t of trials) {
      // "undecided": the held-out tasks could not tell; the edit is not kept, and not called worse.
      const verdict = t.accepted
        ? "accepted"
        : t.gate?.verdict === "undecided" && !t.blocked_by_regression
          ? "undecided (not kept)"
          : "rejected";
      lines.push(
        `### \`${cell(t.target)}\` candidate — ${verdict}${t.blocked_by_regression ? " (task regression)" : ""} (${score(t.baseline_score)} → \
${score(t.candidate_score)})`,
        "",
      );
      if (t.gate) lines.push(gateLine(t.gate), "");
      if (t.edits?.length)
        lines.push(
          `Edits in this trial: ${t.edits.map((e) => `[${e.target}/${e.op}] ${prose(e.content).slice(0, 80)}`).join("; ")}`,
          "",
        );
      lines.push("| Task | Tags | Baseline | Candidate | Change |", "|---|---|---|---|---|");
      for (const d of t.task_deltas)
        lines.push(
          `| ${cell(d.task_id)} | ${cell(d.tags.join(", "))} | ${score(d.baseline_score)} | ${score(d.candidate_score)} | ${d.status} |`,
        );
      lines.push("");
    }
  }
  const editLines = (edits: readonly EditRecord[], withAnchor = false) =>
    edits.flatMap((e) => [
      `- \\[${e.target}/${e.op}\\] ${prose(e.content)}${withAnchor && e.anchor ? ` (anchor: ${prose(e.anchor)})` : ""}`,
      ...(e.rationale ? [`  _why: ${prose(e.rationale)}_`] : []),
    ]);
  if (r.edits.length) lines.push("## Accepted edits", "", ...editLines(r.edits), "");
  if (r.rejected_edits.length)
    lines.push(
      unverified ? "## Unverified suggestions" : "## Rejected by gate (kept as negative feedback)",
      "",
      ...editLines(r.rejected_edits),
      "",
    );
  if (r.unmatched_edits.length)
    lines.push(
      "## Proposed but changed nothing (never reached the gate)",
      "",
      ...editLines(r.unmatched_edits, true),
      "",
    );
  if (r.edit_evidence?.length) {
    lines.push(
      "## Evidence for the gated edits",
      "",
      "_Δ is the held-out change per task (candidate − baseline), paired over the gate's tasks._",
      "",
    );
    lines.push(...renderCards(r.edit_evidence, prose));
  }
  if (r.lessons?.length) {
    lines.push(
      "## Memory lessons (evidence)",
      "",
      "_Recurring corrections and stated preferences from your sessions. **Unverified** means no replay was run: adopt only what you agree with._",
      "",
    );
    lines.push(...renderCards(r.lessons, prose));
  }
  if (r.no_edits_reason) lines.push(`_No edits: ${prose(r.no_edits_reason)}._`, "");
  if (r.notes.length) lines.push("## Notes", "", ...r.notes.map((n) => `- ${prose(n)}`), "");
  lines.push(
    "_Review with `skillopt sleep diff`, then `skillopt sleep adopt` to apply, or `skillopt sleep reject` to discard (the rejected edits are remembered)._",
  );
  return `${lines.join("\n")}\n`;
}
