import type { BenchmarkContext, ChatMessage, RolloutResult, TrajectoryEntry } from "../../engine/index.ts";
import { errorMessage, UnsupportedError } from "../../lib/index.ts";
import { callTarget, contentText, isSystemic } from "./chat.ts";

/** A single- or multi-turn chat attempt at one question. */
interface QaPlan {
  system: string;
  user: ChatMessage["content"];
  maxTurns: number;
  /** The whole message list for turn t ≥ 1, given the previous reply. */
  nextTurn?: (previous: string, turn: number) => ChatMessage[];
  /** Stop after turn t (0-based)? Default: a turn after the first that contains an answer tag. */
  stopAfter?: (text: string, turn: number) => boolean;
}

interface QaOutcome {
  /** Text of the last reply ("" when no reply came). */
  text: string;
  nTurns: number;
  /** Set when a call failed; the task is then a scored failure. */
  error?: string;
  trajectory: TrajectoryEntry[];
  finishReason?: string;
}

const hasAnswer = (t: string) => /<answer>/i.test(t);

/** Exec-target settings of a QA plan: what the agent is told and which files it gets. */
interface ExecPlan {
  id: string;
  skill: string;
  /** Files for the workspace besides task.md (e.g. the DocVQA image). */
  files?: Record<string, string | Uint8Array>;
  description: string;
  /** The task framing for the agent: the system prompt without the skill (the skill is installed separately). */
  instructions: string;
}

/**
 * An exec target (claude_code_exec, codex_exec, …) attempts the task in a workspace: the skill is
 * installed where the agent reads skills, task.md holds the task text, and the final message is
 * the reply (engine.md §6.1, §7.6). Failures are data, like chat failures.
 */
async function runExec(ctx: BenchmarkContext, plan: QaPlan, exec: ExecPlan): Promise<QaOutcome> {
  const runner = ctx.model.taskRunner()!;
  const task = `${exec.instructions.trim()}\n\n${contentText(plan.user)}\n`;
  const trajectory: TrajectoryEntry[] = [{ role: "user", content: contentText(plan.user) }];
  const prompt =
    "Use the skill installed for this task. Read task.md in the working directory, solve it, and end your final message with the answer inside " +
    "<answer></answer> tags.";
  try {
    const t = await runner.runTask(
      exec.skill,
      { id: exec.id, prompt, files: { "task.md": task, ...(exec.files ?? {}) }, skillDescription: exec.description },
      ctx.signal ? { signal: ctx.signal } : undefined,
    );
    for (const step of t.steps)
      trajectory.push({
        role: step.role === "tool" ? `tool${step.toolName ? `:${step.toolName}` : ""}` : step.role,
        content: step.content,
      });
    if (t.error || t.timedOut) {
      const error = t.timedOut ? "exec-timeout" : `exec-failed: ${t.error}`;
      trajectory.push({ role: "system", content: `Agent run failed: ${error}` });
      return { text: t.finalAnswer, nTurns: 1, error, trajectory };
    }
    if (!t.steps.some((s) => s.role === "assistant" && s.content === t.finalAnswer))
      trajectory.push({ role: "assistant", content: t.finalAnswer });
    return { text: t.finalAnswer, nTurns: 1, trajectory };
  } catch (err) {
    if (isSystemic(err, ctx.signal)) throw err;
    return { text: "", nTurns: 1, error: `exec-failed: ${errorMessage(err)}`, trajectory };
  }
}

/** Run the plan's turns through the target (or the exec harness when the target is one); never throws for a per-task failure. */
export async function runQa(
  ctx: BenchmarkContext,
  plan: QaPlan,
  sampleIndex: number,
  exec?: ExecPlan,
): Promise<QaOutcome> {
  if (exec && ctx.model.taskRunner()) return runExec(ctx, plan, exec);
  const trajectory: TrajectoryEntry[] = [];
  let messages: ChatMessage[] = [
    { role: "system", content: plan.system },
    { role: "user", content: plan.user },
  ];
  let text = "";
  let finishReason: string | undefined;
  const stop = plan.stopAfter ?? ((t: string, turn: number) => turn > 0 && hasAnswer(t));
  for (let turn = 0; turn < Math.max(1, plan.maxTurns); turn++) {
    if (turn > 0) messages = plan.nextTurn ? plan.nextTurn(text, turn) : defaultRefinement(plan, text);
    const last = messages[messages.length - 1]!;
    trajectory.push({ role: "user", content: contentText(last.content) });
    const call = await callTarget(ctx, messages, { sampleIndex });
    if (!call.ok) {
      trajectory.push({ role: "system", content: `Target call failed: ${call.error}` });
      return { text, nTurns: turn, error: call.error, trajectory, finishReason };
    }
    text = call.response.text;
    finishReason = call.response.finishReason;
    trajectory.push({ role: "assistant", content: text });
    if (stop(text, turn)) return { text, nTurns: turn + 1, trajectory, finishReason };
  }
  return { text, nTurns: Math.max(1, plan.maxTurns), trajectory, finishReason };
}

function defaultRefinement(plan: QaPlan, previous: string): ChatMessage[] {
  return [
    { role: "system", content: plan.system },
    {
      role: "user",
      content: `${contentText(plan.user)}\n\n## Previous Answer\n${previous}\n\nCheck the previous answer against the material above. If it is right, \
repeat it; if not, correct it. Put the final answer inside <answer></answer> tags.`,
    },
  ];
}

/** The evaluation entry appended to every trajectory, so the optimizer sees predicted vs gold. */
export function evaluationEntry(lines: Record<string, unknown>): TrajectoryEntry {
  const body = Object.entries(lines)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("\n");
  return { role: "system", content: `Evaluation result\n${body}` };
}

/** A failed result for a task that could not be attempted at all. */
export function failedResult(id: string, reason: string, extra: Partial<RolloutResult> = {}): RolloutResult {
  return {
    id,
    hard: 0,
    soft: 0,
    trajectory: [{ role: "system", content: `Task failed: ${reason}` }],
    fail_reason: reason,
    agent_ok: false,
    n_turns: 0,
    ...extra,
  };
}

/** Refuse an exec target (agent CLI) for a benchmark that has no exec path. */
export function refuseExecTarget(ctx: BenchmarkContext, bench: string): void {
  if (ctx.model.taskRunner()) {
    throw new UnsupportedError(
      `${bench} cannot run on an exec target (agent CLI) yet; use a chat target backend such as openai_compatible`,
      { feature: `${bench} on an exec target`, role: "target", needs: "a chat target backend" },
    );
  }
}
