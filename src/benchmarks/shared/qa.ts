import type { BenchmarkContext, ChatMessage, RolloutResult, TrajectoryEntry } from "../../engine/ports.ts";
import { callTarget, contentText } from "./chat.ts";

/** A single- or multi-turn chat attempt at one question. */
export interface QaPlan {
  system: string;
  user: ChatMessage["content"];
  maxTurns: number;
  /** The whole message list for turn t ≥ 1, given the previous reply. */
  nextTurn?: (previous: string, turn: number) => ChatMessage[];
  /** Stop after turn t (0-based)? Default: a turn after the first that contains an answer tag. */
  stopAfter?: (text: string, turn: number) => boolean;
}

export interface QaOutcome {
  /** Text of the last reply ("" when no reply came). */
  text: string;
  nTurns: number;
  /** Set when a call failed; the task is then a scored failure. */
  error?: string;
  trajectory: TrajectoryEntry[];
  finishReason?: string;
}

const hasAnswer = (t: string) => /<answer>/i.test(t);

/** Run the plan's turns through the target; never throws for a per-task failure. */
export async function runQa(ctx: BenchmarkContext, plan: QaPlan, sampleIndex: number): Promise<QaOutcome> {
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
      content: `${contentText(plan.user)}\n\n## Previous Answer\n${previous}\n\nCheck the previous answer against the material above. If it is right, repeat it; if not, correct it. Put the final answer inside <answer></answer> tags.`,
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
  return { id, hard: 0, soft: 0, trajectory: [{ role: "system", content: `Task failed: ${reason}` }], fail_reason: reason, agent_ok: false, n_turns: 0, ...extra };
}
