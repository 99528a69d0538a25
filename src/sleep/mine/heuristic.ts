import { redactText, sha256 } from "../../lib/index.ts";
import type { TaskRecord } from "../types.ts";
import { findCorrection } from "./corrections.ts";
import { sessionOutcome } from "./feedback.ts";

/** The digest fields mining reads (spec §3.1). */
export interface DigestLike {
  session_id: string;
  project: string;
  git_branch: string;
  user_prompts: readonly string[];
  assistant_finals: readonly string[];
  tools_used: readonly string[];
  skills_used: readonly string[];
  feedback_signals: readonly string[];
  n_user_turns: number;
}

/**
 * Redact, strip and cut to n chars with a trailing " …". Redaction comes first: a secret straddling
 * the cut would otherwise leave a fragment (`sk-ab…`) that no pattern recognises any more.
 */
export function truncate(s: string, n: number): string {
  const t = redactText(s).trim();
  return t.length > n ? `${t.slice(0, n)} …` : t;
}

/** Heuristic task id (spec §4.1). */
function heuristicTaskId(project: string, intent: string): string {
  return `task_${sha256(`${project}::${intent}`).slice(0, 12)}`;
}

/** The unique skill a session invoked, else "". */
export function sessionSkillHint(d: DigestLike): string {
  const names = [...new Set(d.skills_used.map((s) => s.trim()).filter(Boolean))];
  return names.length === 1 ? names[0]! : "";
}

/**
 * One task per digest (spec §4.3). When a follow-up carries a "use X instead of Y" correction the
 * task is checkable: a rule judge requiring X and forbidding Y, tagged `correction`; the intent is
 * the request the user was correcting.
 */
export function heuristicTask(d: DigestLike): TaskRecord | undefined {
  const prompts = d.user_prompts.map((p) => p.trim()).filter(Boolean);
  if (prompts.length === 0) return undefined;
  const correction = findCorrection(prompts.slice(1));
  const intentIndex = correction ? correction.index : 0;
  const intent = truncate(prompts[intentIndex]!, 800);
  if (intent.length < 8) return undefined;
  const followUps = prompts.slice(intentIndex + 1, intentIndex + 4);
  const context = followUps.length
    ? truncate(
        ["Follow-up constraints from the same session:", ...followUps.map((p) => `- ${truncate(p, 200)}`)].join("\n"),
        600,
      )
    : "";
  const tags: string[] = [];
  if (d.tools_used.length) tags.push(`tools:${d.tools_used.slice(0, 4).join("+")}`);
  if (d.git_branch) tags.push(`branch:${d.git_branch}`);
  const base: TaskRecord = {
    id: heuristicTaskId(d.project, intent),
    project: d.project,
    intent,
    context_excerpt: context,
    system: "",
    attempted_solution: truncate(d.assistant_finals[d.assistant_finals.length - 1] ?? "", 600),
    outcome: sessionOutcome(prompts.slice(1), d.n_user_turns),
    reference_kind: "none",
    reference: "",
    judge: {},
    tags,
    source_sessions: [d.session_id],
    split: "train",
    origin: "real",
    derived_from: "",
    skill_hint: sessionSkillHint(d),
  };
  if (!correction) return base;
  const checks = [
    ...correction.prefer.map((arg) => ({ op: "contains", arg })),
    ...correction.avoid.map((arg) => ({ op: "not_contains", arg })),
  ];
  return {
    ...base,
    // The follow-ups after the correction would give the answer away; keep only the ones before.
    context_excerpt: "",
    outcome: "fail",
    reference_kind: "rule",
    judge: { kind: "rule", checks },
    tags: ["correction", ...tags],
  };
}

/** Heuristic miner over digests, stopping at maxTasks. */
export function heuristicMine(digests: readonly DigestLike[], maxTasks: number): TaskRecord[] {
  const out: TaskRecord[] = [];
  for (const d of digests) {
    if (out.length >= maxTasks) break;
    const t = heuristicTask(d);
    if (t) out.push(t);
  }
  return out;
}
