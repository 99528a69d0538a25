import type { BenchmarkContext, ChatMessage, ChatResponse, ToolSpec } from "../../engine/index.ts";
import { BackendError, errorMessage, SkilloptError } from "../../lib/index.ts";
import { EnvReader } from "./env.ts";

/** The `{skill_section}` of every target system prompt: "## Skill\n<skill>\n\n", or "" for an empty skill. */
export function skillSection(skill: string): string {
  const s = skill.trim();
  return s ? `## Skill\n${s}\n\n` : "";
}

/** A target system prompt template with its `{skill_section}` filled; an empty skill leaves the section out. */
export function fillSkill(template: string, skill: string): string {
  return template.replace("{skill_section}", skillSection(skill));
}

type TargetCall = { ok: true; response: ChatResponse } | { ok: false; error: string; timedOut: boolean };

/**
 * Errors that stop the whole run rather than one task: bad credentials, an unknown model, an
 * exhausted budget, or the run itself being cancelled. Everything else is a per-task failure.
 */
export function isSystemic(err: unknown, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted) return true;
  if (err instanceof BackendError) return err.kind === "auth" || err.kind === "not_found";
  // A failed write of our own records (ledger, cache, run store: disk full) is never a task's failure.
  // A configuration refused mid-run (model.batch_required) and a request a batch could not answer
  // under model.batch_fallback=stop stop the run too.
  if (err instanceof SkilloptError)
    return ["budget", "internal", "store", "config", "no_answer", "model_unfit"].includes(err.code);
  const code = (err as { code?: unknown } | null)?.code;
  if (
    typeof code === "string" &&
    (/^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/.test(code) || ["ENOSPC", "EDQUOT", "EROFS", "EIO"].includes(code))
  )
    return true;
  return false;
}

/**
 * One target call for a rollout: stage "rollout", the config's target settings, the task's
 * sampleIndex, and `exec_timeout` seconds as its deadline. Per-task failures come back as data;
 * systemic ones are rethrown.
 */
export async function callTarget(
  ctx: BenchmarkContext,
  messages: ChatMessage[],
  opts: { sampleIndex: number; tools?: ToolSpec[]; timeoutS?: number },
): Promise<TargetCall> {
  const env = new EnvReader(ctx.env, "benchmark");
  const timeoutS = opts.timeoutS ?? env.num("exec_timeout", 120);
  const signals: AbortSignal[] = [];
  if (ctx.signal) signals.push(ctx.signal);
  const deadline = timeoutS > 0 ? AbortSignal.timeout(timeoutS * 1000) : undefined;
  if (deadline) signals.push(deadline);
  const signal = signals.length === 0 ? undefined : signals.length === 1 ? signals[0] : AbortSignal.any(signals);
  try {
    const response = await ctx.model.chat(
      "target",
      {
        messages,
        stage: "rollout",
        model: ctx.target.model || undefined,
        maxTokens: env.int("max_completion_tokens", ctx.target.maxTokens),
        reasoningEffort: ctx.target.reasoningEffort || undefined,
        temperature: ctx.target.temperature,
        tools: opts.tools && opts.tools.length > 0 ? opts.tools : undefined,
        sampleIndex: opts.sampleIndex,
      },
      signal ? { signal } : undefined,
    );
    return { ok: true, response };
  } catch (err) {
    if (isSystemic(err, ctx.signal)) throw err;
    const timedOut = Boolean(deadline?.aborted);
    return {
      ok: false,
      error: timedOut ? `task-timeout-${timeoutS}s` : `llm-call-failed: ${errorMessage(err)}`,
      timedOut,
    };
  }
}

/** Plain text of a message's content (image parts shown as a placeholder). */
export function contentText(content: ChatMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "[image]")).join("\n");
}
