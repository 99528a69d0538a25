import type { Benchmark, RolloutResult, TrajectoryEntry } from "./ports.ts";
import { hasFiles, optimizerView } from "./package.ts";

/** Names of the prompt files the engine uses (src/prompts/<name>.md). */
const PROMPT_NAMES = [
  "analyst_failure",
  "analyst_success",
  "format_patch",
  "format_rewrite",
  "format_full_rewrite",
  "sar_failure",
  "sar_success",
  "merge",
  "merge_final",
  "merge_format_patch",
  "merge_format_rewrite",
  "merge_format_full_rewrite",
  "ranking",
  "rewrite",
  "lr_autonomous",
  "slow_update",
  "meta_skill",
  "appendix_consolidate",
  "shorten",
] as const;
type PromptName = (typeof PROMPT_NAMES)[number];
export type PromptSet = Readonly<Record<PromptName, string>>;

/** Fill `{{name}}` placeholders. */
export function fill(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m));
}

interface Section {
  title: string;
  body: string;
}

/**
 * A user message: titled sections, then every structured input as one fenced JSON block, so a
 * model (and the simulator) reads it unambiguously.
 */
export function userMessage(sections: readonly (Section | undefined | false)[], data: Record<string, unknown>): string {
  const parts = sections.filter((s): s is Section => Boolean(s)).map((s) => `## ${s.title}\n\n${s.body.trim()}`);
  parts.push(`## Structured input\n\n\`\`\`json\n${JSON.stringify(data, null, 2)}\n\`\`\``);
  return `${parts.join("\n\n")}\n`;
}

/** The current skill, delimited so its own headings cannot be confused with the message's. */
export function skillSection(skill: string, title = "Current Skill"): Section {
  const body = `<current_skill>\n${optimizerView(skill).trimEnd()}\n</current_skill>`;
  return { title, body: hasFiles(skill) ? `${PACKAGE_NOTE}\n\n${body}` : body };
}

/** What the optimizer is told about a skill package (a skill with files beside SKILL.md). */
const PACKAGE_NOTE = `This skill is a folder: SKILL.md first, then each other file between \`<!-- SKILLOPT_FILE path -->\` and \
\`<!-- SKILLOPT_FILE_END -->\`. The agent reads SKILL.md, and a file only when SKILL.md (or a file it reads) names the file's path. \
An edit to a file other than SKILL.md gives its path in "file" (targets are quoted from that file); an append with a new "file" path \
under references/ creates the file. Leave "file" out to edit SKILL.md. A file marked (fixed) cannot be edited. Never write the markers.`;

/** Meta-skill memory block (spec §2.3 item 4). */
export function metaSection(meta: string): Section | undefined {
  if (!meta.trim()) return undefined;
  return {
    title: "Optimizer Meta Skill",
    body: `Memory distilled from earlier epochs of this run about which edits helped. Prefer it when the evidence is ambiguous; do not follow it \
against clear evidence.\n\n${meta.trim()}`,
  };
}

const MAX_ENTRY_CHARS = 6000;
/** Budget of the trajectories of one optimizer prompt (≈ 60k tokens). */
const MAX_TRAJECTORY_CHARS = 240_000;

function clip(text: string, max = MAX_ENTRY_CHARS): string {
  if (text.length <= max) return text;
  const keep = Math.floor(max / 2);
  return `${text.slice(0, keep)}\n[… ${text.length - 2 * keep} characters omitted …]\n${text.slice(-keep)}`;
}

function entryJson(e: TrajectoryEntry, max: number): Record<string, unknown> {
  const c = (t: string) => clip(t, max);
  if ("type" in e && e.type === "tool_call") return { type: "tool_call", cmd: c(e.cmd), obs: c(e.obs) };
  if ("step" in e)
    return {
      step: e.step,
      action: c(e.action),
      env_feedback: c(e.env_feedback),
      ...(e.reasoning ? { reasoning: c(e.reasoning) } : {}),
    };
  const r = e as { role: string; content: string };
  return { role: r.role === "system" ? "verification" : r.role, content: c(String(r.content)) };
}

/**
 * One trajectory for the optimizer. The target's system prompt is left out: it is the current
 * skill, already shown once (spec §10.18), and long entries are clipped in the middle.
 */
export function trajectoryJson(
  r: RolloutResult,
  index: number,
  bench: Benchmark,
  max = MAX_ENTRY_CHARS,
): Record<string, unknown> {
  const task = String(r.task_description ?? r.question ?? r.instruction ?? "");
  return {
    index,
    id: r.id,
    task_type: r.task_type ?? "other",
    task: clip(task, Math.max(max, 2000)),
    outcome: Number(r.hard) >= 1e-9 ? "pass" : "fail",
    hard: r.hard,
    soft: r.soft,
    ...(r.fail_reason ? { fail_reason: r.fail_reason } : {}),
    ...(r.predicted_answer !== undefined ? { predicted_answer: r.predicted_answer } : {}),
    ...(r.reference_text ? { hidden_reference: clip(String(r.reference_text), max) } : {}),
    ...(bench.formatForOptimizer ? { rendered: clip(bench.formatForOptimizer(r), max) } : {}),
    trajectory: (r.trajectory ?? [])
      .filter((e) => !("role" in e && e.role === "user" && String(e.content) === task))
      .map((e) => entryJson(e, max)),
  };
}

/**
 * The trajectories of one prompt within MAX_TRAJECTORY_CHARS: entries are clipped harder until
 * the whole block fits (spec §10.18: upstream sent everything and overflowed long episodes).
 */
export function trajectoriesWithinBudget(
  results: readonly RolloutResult[],
  bench: Benchmark,
  budget = MAX_TRAJECTORY_CHARS,
): Record<string, unknown>[] {
  let max = MAX_ENTRY_CHARS;
  let out = results.map((r, i) => trajectoryJson(r, i + 1, bench, max));
  for (let round = 0; round < 4; round++) {
    const size = JSON.stringify(out).length;
    if (size <= budget || max <= 200) break;
    max = Math.max(200, Math.floor((max * budget) / size / 1.1));
    out = results.map((r, i) => trajectoryJson(r, i + 1, bench, max));
  }
  return out;
}

/** A short text index of the trajectories (the JSON block carries their content). */
export function trajectoryIndex(items: readonly Record<string, unknown>[]): string {
  return items
    .map(
      (t) =>
        `- Trajectory ${t.index} (id=${t.id}, type=${t.task_type}): ${String(t.outcome).toUpperCase()}${t.fail_reason ? ` — ${t.fail_reason}` : ""}`,
    )
    .join("\n");
}
