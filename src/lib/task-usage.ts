import { AsyncLocalStorage } from "node:async_hooks";

/**
 * What one task costs the target when a skill is deployed: the prompt and completion tokens of
 * every target call the task made, and their price. A call served from the cache counts as it
 * would cost live (deployment pays it), so a resumed or cached run measures the same. The tally
 * is kept per task through an AsyncLocalStorage scope the evaluator opens around each rollout,
 * which the model layer adds to as it accounts each call.
 */
export interface TaskUsage {
  /** Prompt + completion tokens of the target's calls. */
  tokens: number;
  /** Their price in dollars; null when any call's price is unknown. */
  costUsd: number | null;
  /** Target calls (or agent CLI runs) the task made. */
  calls: number;
  /** Calls that reported no token counts (a provider without usage, a cache entry stored before usage was kept). */
  unmeasured: number;
}

const scopes = new AsyncLocalStorage<TaskUsage>();

/** Run `fn` as one task; returns its value and what its target calls cost. */
export async function measureTask<T>(fn: () => Promise<T>): Promise<{ value: T; usage: TaskUsage }> {
  const usage: TaskUsage = { tokens: 0, costUsd: 0, calls: 0, unmeasured: 0 };
  const value = await scopes.run(usage, fn);
  return { value, usage };
}

/**
 * Add one target call to the current task's tally (outside a task scope this does nothing).
 * `tokens` is undefined when the call reported no usage.
 */
export function noteTaskCall(tokens: number | undefined, costUsd: number | null): void {
  const u = scopes.getStore();
  if (!u) return;
  u.calls += 1;
  if (tokens === undefined) u.unmeasured += 1;
  else u.tokens += tokens;
  u.costUsd = u.costUsd === null || costUsd === null ? null : u.costUsd + costUsd;
}

/** A task's tally as a rollout result carries it, or undefined when any of its calls went unmeasured (or it made none). */
export function taskUsageFields(u: TaskUsage): { task_tokens: number; task_cost_usd: number | null } | undefined {
  if (!u.calls || u.unmeasured) return undefined;
  return { task_tokens: u.tokens, task_cost_usd: u.costUsd === null ? null : Math.round(u.costUsd * 1e8) / 1e8 };
}
