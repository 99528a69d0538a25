import { seedOfLabel, mulberry32 } from "../lib/index.ts";
import { type GateMetric, type ItemScores, itemScore } from "./gate.ts";
import type { EngineConfig } from "./settings.ts";
import type { Summary } from "./records.ts";
import { taskCostOf, taskCosts } from "./deployed.ts";
import { estimateTokens } from "./skill-format.ts";
import type { LoopState, PoolEntry, PoolState } from "./state.ts";

/**
 * The candidate pool (optimizer.search: pool). Pure bookkeeping over the loop state: which
 * candidates are on the per-item Pareto frontier, which one a step improves, which two a merge
 * combines, which one is best on the run's objective. Every choice is a function of the committed
 * state and the seed, so a resumed run makes the same ones.
 */

/** How the run ranks skills: the selection score, or the score less a price per deployed token. */
export interface Objective {
  kind: "score" | "weighted";
  /** Score points given up per 1000 deployed tokens (weighted). */
  tokenWeight: number;
  /** The run's state, for the deployed cost per task measured from the target's usage (deployed.ts). */
  state?: () => LoopState | undefined;
}

export function objectiveOf(ev: EngineConfig["evaluation"], state?: () => LoopState | undefined): Objective {
  return { kind: ev.objective ?? "score", tokenWeight: ev.token_weight ?? 0.02, ...(state ? { state } : {}) };
}

/**
 * What a skill costs per task deployed, as the objective charges it: the prompt + completion
 * tokens measured on the selection items where every skill compared was measured, otherwise the
 * skill's own estimated tokens.
 */
export function costOf(o: Objective, e: { hash: string; tokens: number }): number {
  const state = o.state?.();
  const costs = taskCosts(state);
  if (!costs) return e.tokens;
  return (costs.get(e.hash) ?? taskCostOf(state!, e.hash))?.tokens ?? e.tokens;
}

/** A skill's value on the objective: its score, or its score less token_weight per 1000 tokens. */
export function objectiveValue(o: Objective, score: number, tokens: number): number {
  return o.kind === "weighted" ? score - (o.tokenWeight * tokens) / 1000 : score;
}

/** The pool's members (the gate admitted them); undecided entries are neither parents nor best. */
const members = (pool: PoolState) => pool.entries.filter((e) => e.status === "member");

/**
 * The per-item Pareto frontier: members that score best on at least one selection item, less any
 * another member dominates (at least as good on every item, better on one). Each is returned with
 * the items it is best on. A member without per-item scores (a run resumed from an older state)
 * competes on its mean score alone.
 */
export function itemFrontier(state: Pick<LoopState, "pool" | "selItems">, m: GateMetric): Map<string, number> {
  const pool = state.pool;
  const out = new Map<string, number>();
  if (!pool) return out;
  const ms = members(pool);
  const rows = ms.map((e) =>
    (state.selItems?.[e.hash] ?? []).map((x: ItemScores | null) => (x ? itemScore(m, x[0], x[1]) : null)),
  );
  const n = Math.max(0, ...rows.map((r) => r.length));
  const wins = ms.map(() => 0);
  for (let i = 0; i < n; i++) {
    let best = Number.NEGATIVE_INFINITY;
    for (const r of rows) if (r[i] !== null && r[i] !== undefined) best = Math.max(best, r[i]!);
    if (best === Number.NEGATIVE_INFINITY) continue;
    rows.forEach((r, k) => {
      if (r[i] !== null && r[i] !== undefined && r[i]! >= best - 1e-9) wins[k]! += 1;
    });
  }
  const dominates = (a: number, b: number) => {
    let strictly = false;
    for (let i = 0; i < n; i++) {
      const x = rows[a]![i] ?? null;
      const y = rows[b]![i] ?? null;
      if (x === null || y === null) return false;
      if (x < y - 1e-9) return false;
      if (x > y + 1e-9) strictly = true;
    }
    return strictly || (n === 0 && ms[a]!.score > ms[b]!.score);
  };
  ms.forEach((e, k) => {
    if (n > 0 && wins[k] === 0) return;
    if (ms.some((_, j) => j !== k && dominates(j, k))) return;
    // Identical per-item results: the earlier member stands for both.
    if (ms.some((_, j) => j < k && rows[j]!.length === rows[k]!.length && rows[j]!.every((x, i) => x === rows[k]![i])))
      return;
    out.set(e.hash, wins[k]!);
  });
  return out;
}

/** A seeded draw in [0,1) for a label (the run's seed and the step make it the same on resume). */
const drawOf = (seed: number, label: string) => mulberry32(seedOfLabel(`skillopt/search/${seed}/${label}`))();

/** The parent a step improves: a frontier member drawn with probability proportional to the items it is best on. */
export function pickParent(frontier: ReadonlyMap<string, number>, seed: number, step: number): string | undefined {
  const xs = [...frontier].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const total = xs.reduce((a, [, w]) => a + Math.max(1, w), 0);
  let u = drawOf(seed, `parent/${step}`) * total;
  for (const [h, w] of xs) {
    u -= Math.max(1, w);
    if (u < 0) return h;
  }
  return xs.at(-1)?.[0];
}

/** The ancestors of a hash through the lineage, nearest first (the hash itself included). */
function ancestry(pool: PoolState, hash: string): string[] {
  const out = [hash];
  for (let h = pool.lineage[hash]; h && !out.includes(h); h = pool.lineage[h]) out.push(h);
  return out;
}

/** The nearest common ancestor of two candidates that is still in the pool (the baseline always is). */
function commonAncestor(pool: PoolState, a: string, b: string): string | undefined {
  const bs = new Set(ancestry(pool, b));
  const inPool = new Set(pool.entries.map((e) => e.hash));
  return ancestry(pool, a).find((h) => bs.has(h) && inPool.has(h));
}

const pairKey = (a: string, b: string) => [a, b].sort().join("+");

/**
 * Two frontier members worth merging: each wins selection items the other loses (the pair with
 * the most such items on its weaker side), neither descends from the other, and their merge was
 * not tried before. `a` is the one higher on the objective (its wording wins a conflict).
 */
export function mergePair(
  state: Pick<LoopState, "pool" | "selItems">,
  m: GateMetric,
  o: Objective,
): { a: PoolEntry; b: PoolEntry; ancestor: string } | undefined {
  const pool = state.pool;
  if (!pool) return undefined;
  const frontier = itemFrontier(state, m);
  const fs = members(pool).filter((e) => frontier.has(e.hash));
  const scores = (h: string) => (state.selItems?.[h] ?? []).map((x) => (x ? itemScore(m, x[0], x[1]) : null));
  let best: { a: PoolEntry; b: PoolEntry; ancestor: string; gain: number } | undefined;
  for (let i = 0; i < fs.length; i++) {
    for (let j = i + 1; j < fs.length; j++) {
      const [x, y] = [fs[i]!, fs[j]!];
      if (pool.merged.includes(pairKey(x.hash, y.hash))) continue;
      if (ancestry(pool, x.hash).includes(y.hash) || ancestry(pool, y.hash).includes(x.hash)) continue;
      const sx = scores(x.hash);
      const sy = scores(y.hash);
      let xWins = 0;
      let yWins = 0;
      for (let k = 0; k < Math.min(sx.length, sy.length); k++) {
        if (sx[k] === null || sy[k] === null) continue;
        if (sx[k]! > sy[k]! + 1e-9) xWins += 1;
        else if (sy[k]! > sx[k]! + 1e-9) yWins += 1;
      }
      const gain = Math.min(xWins, yWins);
      if (gain < 1 || (best && gain <= best.gain)) continue;
      const ancestor = commonAncestor(pool, x.hash, y.hash);
      if (!ancestor) continue;
      const [a, b] =
        objectiveValue(o, x.score, costOf(o, x)) >= objectiveValue(o, y.score, costOf(o, y)) ? [x, y] : [y, x];
      best = { a, b, ancestor, gain };
    }
  }
  if (!best) return undefined;
  pool.merged.push(pairKey(best.a.hash, best.b.hash));
  return { a: best.a, b: best.b, ancestor: best.ancestor };
}

/** The member best on the objective (ties: the higher score, then the fewer tokens, then the earlier). */
export function poolBest(pool: PoolState, o: Objective): PoolEntry {
  let best: PoolEntry | undefined;
  for (const e of members(pool)) {
    if (!best) best = e;
    else {
      const [ce, cb] = [costOf(o, e), costOf(o, best)];
      const d = objectiveValue(o, e.score, ce) - objectiveValue(o, best.score, cb);
      const tie = Math.abs(d) <= 1e-12;
      const ds = e.score - best.score;
      if (d > 1e-12 || (tie && ds > 1e-12) || (tie && Math.abs(ds) <= 1e-12 && ce < cb)) best = e;
    }
  }
  return best!;
}

/** Members no other member beats on both score (higher) and deployed tokens (fewer): the cost frontier, fewest tokens first. */
export function tokenFrontier(pool: PoolState, obj: Objective): PoolEntry[] {
  const ms = members(pool);
  const cost = new Map(ms.map((e) => [e.hash, costOf(obj, e)]));
  const c = (e: PoolEntry) => cost.get(e.hash)!;
  return ms
    .filter((e) => !ms.some((o) => o !== e && o.score >= e.score && c(o) <= c(e) && (o.score > e.score || c(o) < c(e))))
    .sort((a, b) => c(a) - c(b) || b.score - a.score);
}

/**
 * Admit an entry (or update the one with its hash) and keep the pool within `size`: first the
 * oldest undecided entries go, then the members off the per-item frontier lowest on the objective,
 * then frontier members lowest on the objective. The baseline, the run's best and the objective's best always stay.
 */
export function admit(
  state: Pick<LoopState, "pool" | "selItems" | "baseline" | "best">,
  entry: PoolEntry,
  size: number,
  m: GateMetric,
  o: Objective,
): string[] {
  const pool = state.pool!;
  const at = pool.entries.findIndex((e) => e.hash === entry.hash);
  if (at >= 0) pool.entries[at] = entry;
  else pool.entries.push(entry);
  if (entry.parents[0] && entry.hash !== entry.parents[0]) pool.lineage[entry.hash] ??= entry.parents[0];
  const dropped: string[] = [];
  while (pool.entries.length > Math.max(2, size)) {
    const keep = new Set([state.baseline.hash, state.best.hash, poolBest(pool, o).hash]);
    const frontier = itemFrontier(state, m);
    const value = (e: PoolEntry) => objectiveValue(o, e.score, costOf(o, e));
    const candidates = pool.entries.filter((e) => !keep.has(e.hash));
    const undecided = candidates.filter((e) => e.status === "undecided");
    const off = candidates.filter((e) => e.status === "member" && !frontier.has(e.hash));
    const on = candidates.filter((e) => e.status === "member" && frontier.has(e.hash));
    const lowest = (xs: PoolEntry[]) => xs.reduce((a, b) => (value(b) < value(a) ? b : a));
    const victim = undecided[0] ?? (off.length ? lowest(off) : on.length ? lowest(on) : undefined);
    if (!victim) break;
    pool.entries = pool.entries.filter((e) => e !== victim);
    dropped.push(victim.hash);
  }
  return dropped;
}

const r4 = (x: number) => Math.round(x * 1e4) / 1e4;

/**
 * summary.json's `search`: the cost frontier with the chosen (best) skill marked, and under `pool`
 * the pool with the items each member is best on. A single-candidate run's frontier is drawn from
 * its baseline, best and final skills.
 */
export function searchSummary(
  state: LoopState,
  skills: ReadonlyMap<string, string>,
  mode: "single" | "pool",
  o: Objective,
  m: GateMetric,
): NonNullable<Summary["search"]> {
  const pool: PoolState = state.pool ?? {
    entries: [state.baseline, state.best, state.current]
      .filter((e, i, xs) => xs.findIndex((x) => x.hash === e.hash) === i)
      .map((e) => ({
        ...e,
        step: 0,
        parents: [],
        tokens: estimateTokens(skills.get(e.hash) ?? ""),
        status: "member" as const,
      })),
    lineage: {},
    merged: [],
    log: [],
  };
  const chosen = state.best.hash;
  const obj: Objective = { ...o, state: () => state };
  const costs = taskCosts(state);
  const measured = (e: PoolEntry) => {
    const c = costs ? (costs.get(e.hash) ?? taskCostOf(state, e.hash)) : undefined;
    return c ? { task_tokens: c.tokens, task_cost_usd: c.costUsd } : {};
  };
  const frontier = tokenFrontier(pool, obj);
  if (!frontier.some((e) => e.hash === chosen)) {
    const c = pool.entries.find((e) => e.hash === chosen);
    if (c) frontier.push(c);
    frontier.sort((a, b) => costOf(obj, a) - costOf(obj, b) || b.score - a.score);
  }
  const out: NonNullable<Summary["search"]> = {
    mode,
    objective: o.kind,
    token_weight: o.tokenWeight,
    cost_basis: costs ? "task" : "skill",
    chosen,
    frontier: frontier.map((e) => ({
      hash: e.hash,
      origin: e.origin,
      score: r4(e.score),
      skill_tokens: e.tokens,
      ...measured(e),
      objective: r4(objectiveValue(o, e.score, costOf(obj, e))),
      chosen: e.hash === chosen,
    })),
  };
  if (state.pool) {
    const wins = itemFrontier(state, m);
    out.pool = state.pool.entries.map((e) => ({
      hash: e.hash,
      origin: e.origin,
      step: e.step,
      status: e.status,
      parents: e.parents,
      score: r4(e.score),
      skill_tokens: e.tokens,
      ...measured(e),
      items_best: wins.get(e.hash) ?? 0,
    }));
    const merges = state.pool.log.filter((l) => l.kind === "merge" && l.hash);
    out.merges = { tried: merges.length, accepted: merges.filter((l) => l.verdict === "accept").length };
    const shortened = state.pool.log.filter((l) => l.kind === "shorten");
    if (shortened.length)
      out.shortened = { tried: shortened.length, accepted: shortened.filter((l) => l.verdict === "accept").length };
    out.decisions = state.pool.log;
  }
  return out;
}
