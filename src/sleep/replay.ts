import { NoAnswerError } from "../lib/index.ts";
import type { SleepBackend } from "./backend/types.ts";
import type { NightLedger } from "./budget.ts";
import type { Evidence } from "./evidence.ts";
import { requiredTools, scoreExact, scoreRuleJudge } from "./judges.ts";
import type { ReplayResult, TaskRecord } from "./types.ts";

/** Everything a replay needs besides the task and documents. */
export interface ReplayContext {
  backend: SleepBackend;
  ledger?: NightLedger;
  evidence?: Evidence;
  workers: number;
  signal?: AbortSignal;
  /** Replay progress of a phase, for the CLI's per-phase bar. */
  onProgress?: (phase: string, done: number, total: number) => void;
}

/** Replay one task under (skill, memory) and score it (spec §5.2). */
export async function replayOne(
  ctx: ReplayContext,
  task: TaskRecord,
  skill: string,
  memory: string,
  phase: string,
  sampleId = 0,
): Promise<ReplayResult> {
  ctx.ledger?.checkTime();
  const tools = requiredTools(task);
  const t0 = performance.now();
  const attempt = await ctx.backend.attempt(task, skill, memory, sampleId, tools);
  const latency = Math.round(performance.now() - t0);
  const response = attempt.text;
  const scored = attempt.error === undefined ? await scoreReply(ctx, task, response, attempt.toolsCalled) : undefined;
  const score = scored ?? { hard: 0, soft: 0, rationale: "", tokens: 0 };
  const error = attempt.error ?? scored?.error;
  const tokens =
    attempt.tokens + score.tokens ||
    Math.floor((skill.length + memory.length + task.intent.length + response.length) / 4);
  const result: ReplayResult = {
    id: task.id,
    hard: score.hard,
    soft: score.soft,
    response,
    fail_reason: error ?? (score.hard >= 1 ? "" : score.rationale || ctx.backend.lastError || "below threshold"),
    task_type: task.tags[0] ?? "task",
    judge_rationale: score.rationale,
    tools_called: attempt.toolsCalled,
    tokens,
    latency_ms: latency,
    ...(error === undefined ? {} : { error, error_role: attempt.error === undefined ? "optimizer" : "target" }),
  };
  ctx.evidence?.log("replay", "result", {
    phase,
    task_id: task.id,
    split: task.split,
    origin: task.origin,
    kind: task.reference_kind,
    sample_id: sampleId,
    ...(error === undefined ? { hard: result.hard, soft: result.soft } : { error }),
    why: result.judge_rationale,
    response_head: response.slice(0, 400),
    tools_called: result.tools_called,
    tokens,
    latency_ms: latency,
  });
  return result;
}

/** Score a reply: rule and exact references locally, the rest by the judge (whose `error` says it gave no verdict). */
async function scoreReply(
  ctx: ReplayContext,
  task: TaskRecord,
  response: string,
  toolsCalled: readonly string[],
): Promise<{ hard: number; soft: number; rationale: string; tokens: number; error?: string }> {
  if (task.reference_kind === "rule") return { ...scoreRuleJudge(task.judge, response, [...toolsCalled]), tokens: 0 };
  if (task.reference_kind === "exact" || task.reference_kind === "answer")
    return { ...scoreExact(task.reference, response), tokens: 0 };
  return ctx.backend.judge(task, response);
}

/**
 * Rule 4: a replay that got no answer is never a score. Whatever a phase's replays decide (the
 * gate, a reflection, a lesson's verdict, the held-out score) is not decided on a missing answer:
 * the phase throws, naming how many got none and the last reason, and the night ends failed.
 */
export function requireAnswered(results: readonly ReplayResult[], phase: string, backend: SleepBackend): void {
  const errored = results.filter((r) => r.error !== undefined);
  if (!errored.length) return;
  const last = errored[errored.length - 1]!;
  const reason = last.error!.length > 300 ? `${last.error!.slice(0, 300)}…` : last.error!;
  const role = last.error_role ?? "target";
  const who = backend.label?.(role) ?? role;
  const what = role === "optimizer" ? "judge verdict" : "answer";
  throw new NoAnswerError(
    `${who} gave no ${what} for ${errored.length} of ${results.length} replay(s) of the ${phase} phase, so nothing was decided on \
them; last error: ${reason}`,
    {
      hint: backend.remote
        ? "check the endpoint, model name and key of that role (sleep config target_* / optimizer_*); the night staged nothing"
        : "rewrite the answer file named above and run the same command again; the night staged nothing",
      data: { role, stage: `sleep_${phase}`, errored: errored.length, total: results.length, reason },
    },
  );
}

/**
 * Replay tasks with at most `workers` in flight, results in task order. With sleep.batch every
 * task of the phase starts at once and their calls go out as one provider batch.
 */
export function replayBatch(
  ctx: ReplayContext,
  tasks: readonly TaskRecord[],
  skill: string,
  memory: string,
  phase: string,
): Promise<ReplayResult[]> {
  const b = ctx.backend;
  if (!b.round || !b.batching?.("eval"))
    return replayPool(ctx, tasks, skill, memory, phase, ctx.workers, (run) => run());
  return b.round(
    "eval",
    (task) => replayPool(ctx, tasks, skill, memory, phase, Math.max(1, tasks.length), task),
    ctx.signal,
  );
}

async function replayPool(
  ctx: ReplayContext,
  tasks: readonly TaskRecord[],
  skill: string,
  memory: string,
  phase: string,
  workers: number,
  task: <R>(run: () => Promise<R>) => Promise<R>,
): Promise<ReplayResult[]> {
  const out: ReplayResult[] = new Array(tasks.length);
  let next = 0;
  let failed = false;
  let done = 0;
  ctx.onProgress?.(phase, 0, tasks.length);
  const worker = async () => {
    while (next < tasks.length && !failed) {
      const i = next++;
      try {
        out[i] = await task(() => replayOne(ctx, tasks[i]!, skill, memory, phase));
        ctx.onProgress?.(phase, ++done, tasks.length);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  // Settle every worker before failing, so calls already in flight are accounted for.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.max(1, Math.min(workers, tasks.length)) }, worker),
  );
  const rejected = settled.find((r) => r.status === "rejected");
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
  requireAnswered(out, phase, ctx.backend);
  return out;
}

/** Mean hard and soft scores (0, 0 for none). */
export function aggregateScores(results: readonly ReplayResult[]): { hard: number; soft: number } {
  if (results.length === 0) return { hard: 0, soft: 0 };
  const sum = results.reduce((a, r) => ({ hard: a.hard + r.hard, soft: a.soft + r.soft }), { hard: 0, soft: 0 });
  return { hard: sum.hard / results.length, soft: sum.soft / results.length };
}
