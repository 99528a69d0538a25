import type { LoopState } from "./state.ts";

/**
 * The deployed cost of a skill: what a task costs the target with it loaded (prompt + completion
 * tokens of every target call, and their price), measured on the selection items from the usage
 * the target reports. A skill's tokens are paid on every call of every task, and a skill can also
 * make answers longer or shorter, so this is the cost the weighted objective charges where it is
 * known; where the target reports no usage, the skill's own estimated tokens stand in.
 */

/** What a selection item cost, by skill hash and selection index (the first sample measured). */
export function rememberUsage(
  state: LoopState,
  hash: string,
  index: number,
  size: number,
  cost: { task_tokens: number; task_cost_usd: number | null },
): void {
  state.selUsage ??= {};
  const row = state.selUsage[hash] ?? Array.from({ length: size }, () => null);
  state.selUsage[hash] = row;
  if (index < row.length && !row[index]) row[index] = [cost.task_tokens, cost.task_cost_usd];
}

/** A pass's per-item costs, in item order (undefined when none was measured). */
export function usageRow(results: readonly Record<string, unknown>[]): ([number, number | null] | null)[] | undefined {
  const row = results.map((r) =>
    typeof r.task_tokens === "number"
      ? ([r.task_tokens, typeof r.task_cost_usd === "number" ? r.task_cost_usd : null] as [number, number | null])
      : null,
  );
  return row.some(Boolean) ? row : undefined;
}

interface TaskCost {
  /** Mean prompt + completion tokens per task. */
  tokens: number;
  /** Mean dollars per task; null when a price is unknown. */
  costUsd: number | null;
}

/**
 * A skill's mean cost per task on the selection split, paired with the baseline: the baseline's
 * mean over the items it was measured on, plus the skill's mean difference from it on the items
 * both were measured on. Tasks differ in length far more than skills do, so a candidate the gate
 * stopped early (measured on a few items) is compared on those items, not on an easier subset.
 */
export function taskCostOf(state: LoopState, hash: string): TaskCost | undefined {
  const base = state.selUsage?.[state.baseline.hash];
  const own = state.selUsage?.[hash];
  if (!base || !own) return undefined;
  let baseTokens = 0;
  let baseCost: number | null = 0;
  let baseN = 0;
  let dTokens = 0;
  let dCost: number | null = 0;
  let n = 0;
  for (let i = 0; i < base.length; i++) {
    const b = base[i];
    if (!b) continue;
    baseTokens += b[0];
    baseCost = baseCost === null || b[1] === null ? null : baseCost + b[1];
    baseN += 1;
    const a = own[i];
    if (!a) continue;
    dTokens += a[0] - b[0];
    dCost = dCost === null || a[1] === null || b[1] === null ? null : dCost + a[1] - b[1];
    n += 1;
  }
  if (!baseN || !n) return undefined;
  const costUsd = baseCost === null || dCost === null ? null : Math.max(0, baseCost / baseN + dCost / n);
  return {
    tokens: Math.max(0, Math.round(baseTokens / baseN + dTokens / n)),
    costUsd: costUsd === null ? null : Math.round(costUsd * 1e8) / 1e8,
  };
}

/** The skills the objective compares: the pool's members, or a single run's baseline, best and current. */
function compared(state: LoopState): string[] {
  if (state.pool) return state.pool.entries.filter((e) => e.status === "member").map((e) => e.hash);
  return [state.baseline.hash, state.best.hash, state.current.hash];
}

/**
 * Deployed cost per task of every skill the objective compares, or undefined when any of them
 * was not measured (the target reports no usage, or a run resumed from a state stored before):
 * measured costs and estimated skill sizes never mix in one comparison.
 */
export function taskCosts(state: LoopState | undefined): Map<string, TaskCost> | undefined {
  if (!state?.selUsage) return undefined;
  const out = new Map<string, TaskCost>();
  for (const h of compared(state)) {
    const c = taskCostOf(state, h);
    if (!c) return undefined;
    out.set(h, c);
  }
  return out;
}
