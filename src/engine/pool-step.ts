import type { CheckpointContent, EvaluationRow } from "./checkpoint.ts";
import { type Evaluator, meanScores, requireAnswers, skillHash } from "./evaluate.ts";
import { decide, type Gate, type GateSettings, gateScore, type ItemScores, itemScore, passed } from "./gate.ts";
import { rememberUsage } from "./deployed.ts";
import { mergeSkills } from "./merge.ts";
import { skillSection, userMessage } from "./messages.ts";
import { restoreFiles } from "./package.ts";
import { type PairedOrder, pairedGate, rememberItems } from "./paired-gate.ts";
import { ShortenSchema } from "./schemas.ts";
import {
  admit,
  itemFrontier,
  mergePair,
  type Objective,
  costOf,
  objectiveOf,
  objectiveValue,
  pickParent,
  poolBest,
} from "./search.ts";
import type { EngineConfig } from "./settings.ts";
import { APPENDIX_END, APPENDIX_START, SLOW_END, SLOW_START } from "./skill-doc.ts";
import { estimateTokens } from "./skill-format.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";
import type { LoopState, PoolEntry, PoolState } from "./state.ts";

/**
 * The training loop's hooks for optimizer.search: pool (the pool itself is search.ts). Before a
 * step: re-decide the oldest undecided entry on a fresh answer sample, then make a frontier member
 * the step's current skill. After it: the gated candidate joins the pool (accepted as a member,
 * undecided as undecided), one merge of two frontier members that win different items is gated
 * against the better of them, under `weighted` the pool's best is offered to the optimizer to shorten,
 * and the pool's best on the objective becomes the current and best skill.
 */
export interface PoolEnv {
  cfg: EngineConfig;
  /** The optimizer's stage context (the shorten call). */
  sc: StageContext;
  ev: Evaluator;
  gate: GateSettings;
  decider: Gate;
  objective: Objective;
  pairedOrder: PairedOrder;
  skills: Map<string, string>;
}

/** What a pool hook adds to the step's checkpoint. */
interface PoolWork {
  newSkills: CheckpointContent["skills"];
  evaluations: EvaluationRow[];
}

/** Undecided entries get at most this many extra answer samples before they leave the pool. */
const MAX_EXTRA_SAMPLES = 2;

/**
 * A member whose record stands after this many of its candidates were turned down in a row gets
 * one more answer sample on every selection item, averaged into its record (at most
 * MAX_RESAMPLES times). A member admitted on a lucky sample turns down its children and stays the
 * best; its record regresses to its true score as the samples grow (docs/search.md).
 */
const STALL_STEPS = 2;
const MAX_RESAMPLES = 2;
/** Resamples use answer samples from here on, apart from the re-decisions' (1, 2, …). */
const RESAMPLE_BASE = 100;

const ref = (e: PoolEntry) => ({ hash: e.hash, hard: e.hard, soft: e.soft, score: e.score, origin: e.origin });

/** Start the pool with the run's current skill (after the baseline, or on a resume of a run stored without one). */
export function startPool(state: LoopState, skills: ReadonlyMap<string, string>): void {
  if (state.pool) return;
  const c = state.current;
  state.pool = {
    entries: [{ ...c, step: 0, parents: [], tokens: estimateTokens(skills.get(c.hash) ?? ""), status: "member" }],
    lineage: {},
    merged: [],
    log: [],
  };
}

/**
 * At an epoch boundary: the slow update built on the current skill (the pool's best) joins the
 * pool once the boundary kept it, exactly when a single run would make it its current skill: under
 * optimizer.slow_update_gate_with_selection through the run's gate against that skill, otherwise
 * measured on the whole selection split and kept (the reference's rule, and a single run's).
 * Its per-item scores are a fresh sample, so it also gives the pool a member whose selection score
 * was not picked by a gate; without it a pool spent a boundary's calls and threw its result away.
 */
export function admitSlowUpdate(
  cfg: EngineConfig,
  gate: GateSettings,
  state: LoopState,
  u: { base: string; hash: string; text: string; origin: string },
): void {
  const pool = state.pool;
  if (!pool) return;
  const kept = state.current.hash === u.hash && u.hash !== u.base;
  pool.log.push({
    step: state.lastStep,
    kind: "slow_update",
    parents: [u.base],
    hash: u.hash,
    verdict: kept ? "accept" : "reject",
  });
  if (!kept) return;
  admit(
    state,
    { ...state.current, step: state.lastStep, parents: [u.base], tokens: estimateTokens(u.text), status: "member" },
    cfg.optimizer.pool_size,
    gate,
    objectiveOf(cfg.evaluation, () => state),
  );
}

/** Before a step: re-decide an undecided entry, then make the sampled frontier parent the current skill. */
export async function beforePoolStep(env: PoolEnv, state: LoopState, step: number): Promise<PoolWork> {
  const work: PoolWork = { newSkills: [], evaluations: [] };
  const pool = state.pool!;
  const u = pool.entries.find((e) => e.status === "undecided");
  if (u) await redecide(env, state, u, step, work);
  const frontier = itemFrontier(state, env.gate);
  const parent =
    pool.entries.find((e) => e.hash === pickParent(frontier, env.cfg.train.seed, step)) ??
    poolBest(pool, env.objective);
  state.current = ref(parent);
  return work;
}

/** After a step: admit its candidate by the gate's verdict, try one merge, and set current and best from the pool. */
export async function afterPoolStep(
  env: PoolEnv,
  state: LoopState,
  step: number,
  parent: PoolEntry,
  outcome: { action: string; candidate?: string | null; bestBefore?: { hash: string; step: number } },
): Promise<PoolWork> {
  const work: PoolWork = { newSkills: [], evaluations: [] };
  const pool = state.pool!;
  const h = outcome.candidate ?? undefined;
  const text = h ? env.skills.get(h) : undefined;
  const accepted = state.current.hash !== parent.hash;
  if (h && text !== undefined) {
    const verdict = accepted ? "accept" : outcome.action;
    pool.log.push({ step, kind: "step", parents: [parent.hash], hash: h, verdict });
    const held = pool.entries.find((e) => e.hash === parent.hash && e.status === "member");
    if (held) held.stalled = accepted ? 0 : (held.stalled ?? 0) + 1;
    if (accepted)
      put(env, state, {
        ...state.current,
        step,
        parents: [parent.hash],
        tokens: estimateTokens(text),
        status: "member",
      });
    else if (outcome.action === "undecided") {
      const est = state.selCache[h] ?? { hard: parent.hard, soft: parent.soft };
      put(env, state, {
        hash: h,
        origin: `step_${String(step).padStart(4, "0")}`,
        hard: est.hard,
        soft: est.soft,
        score: gateScore(env.gate, est.hard, est.soft, text),
        step,
        parents: [parent.hash],
        tokens: estimateTokens(text),
        status: "undecided",
      });
    }
  }
  // The step's gate made an accepted candidate above the best's score the best; the pool decides that (settle).
  if (outcome.bestBefore && state.best.hash !== outcome.bestBefore.hash) {
    const held = pool.entries.find((e) => e.hash === outcome.bestBefore!.hash && e.status === "member");
    if (held) state.best = { ...ref(held), step: outcome.bestBefore.step };
  }
  const stalled = pool.entries.find((e) => e.hash === parent.hash && e.status === "member");
  if (stalled && (stalled.stalled ?? 0) >= STALL_STEPS && (stalled.resampled ?? 0) < MAX_RESAMPLES)
    await resample(env, state, stalled, step, work);
  if (env.cfg.optimizer.merge) await tryMerge(env, state, step, work);
  await tryShorten(env, state, step, work);
  await cheaperContest(env, state, step, work);
  settle(env, state, step);
  return work;
}

/**
 * Under `weighted`, before a shorter member ahead on the objective replaces a longer best: each of
 * the two whose record is still the one sample it was admitted on gets one more sample (resample),
 * and the comparison is made again on the averages. Ahead on one sample is mostly luck on a small
 * selection split; the longer best is then kept unless the shorter one stays ahead on the objective
 * with its record grown (settle), up to three challengers a step.
 */
async function cheaperContest(env: PoolEnv, state: LoopState, step: number, work: PoolWork): Promise<void> {
  if (env.objective.kind !== "weighted" || !env.gate.useGate || !env.decider.itemwise) return;
  const pool = state.pool!;
  for (let round = 0; round < 3; round++) {
    const held = pool.entries.find((e) => e.hash === state.best.hash && e.status === "member");
    const top = held && cheaperChallenger(env, pool, held);
    if (!held || !top) return;
    const fresh = [top, held].filter((e) => (e.resampled ?? 0) < 1);
    if (!fresh.length) return;
    for (const e of fresh) await resample(env, state, e, step, work);
  }
}

/**
 * Under `weighted`, the member that challenges a longer best as the shorter one: the pool's best
 * on the objective when it is shorter than the best; when the pool's best is longer (it must prove
 * it is better, and mostly cannot), the member highest on the objective among those ahead of the
 * best on it and shorter. A shortening of the best with the same record is ahead of it by its
 * saving and would otherwise wait behind a longer member a few hundredths of a point above it.
 */
function cheaperChallenger(env: PoolEnv, pool: PoolState, held: PoolEntry): PoolEntry | undefined {
  const o = env.objective;
  if (o.kind !== "weighted") return undefined;
  const value = (e: PoolEntry) => objectiveValue(o, e.score, costOf(o, e));
  const [heldCost, heldValue] = [costOf(o, held), value(held)];
  const top = poolBest(pool, o);
  if (top.hash === held.hash) return undefined;
  if (costOf(o, top) < heldCost) return top;
  return pool.entries
    .filter((e) => e.status === "member" && costOf(o, e) < heldCost && value(e) > heldValue + 1e-12)
    .sort((a, b) => value(b) - value(a) || a.step - b.step)[0];
}

/**
 * One more answer sample of a member on every selection item, averaged into its per-item record
 * and its scores: the record it was admitted on was the sample the gate let through, so it leans
 * high; every decision after (parents' paired gates, the best, the frontier) reads the average.
 */
async function resample(env: PoolEnv, state: LoopState, e: PoolEntry, step: number, work: PoolWork): Promise<void> {
  const text = env.skills.get(e.hash);
  const record = state.selItems?.[e.hash];
  if (text === undefined || !record) return;
  const k = (e.resampled ?? 0) + 1;
  const sel = env.pairedOrder.selection;
  const out = await env.ev.run(text, sel, `pool resample step ${step}`, undefined, undefined, RESAMPLE_BASE + k);
  requireAnswers(out, `pool resample of ${e.origin}`, { strict: true });
  const fresh = out.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
  // The record holds the mean of k samples so far (the admitted one and k − 1 resamples).
  const avg = (old: ItemScores | null | undefined, x: ItemScores | undefined): ItemScores | null =>
    old && x ? [(old[0] * k + x[0]) / (k + 1), (old[1] * k + x[1]) / (k + 1)] : (old ?? x ?? null);
  const items = sel.map((_, i) => avg(record[i], fresh[i]));
  state.selItems![e.hash] = items;
  const mean = (j: 0 | 1) => {
    const xs = items.filter((x): x is ItemScores => x !== null);
    return xs.reduce((a, x) => a + x[j], 0) / Math.max(1, xs.length);
  };
  const [hard, soft] = [mean(0), mean(1)];
  const score = gateScore(env.gate, hard, soft, text);
  Object.assign(e, { hard, soft, score, resampled: k, stalled: 0 });
  state.selCache[e.hash] = { hard, soft };
  for (const r of [state.current, state.best]) if (r.hash === e.hash) Object.assign(r, { hard, soft, score });
  const m = meanScores(out.results);
  work.evaluations.push({
    kind: "pool",
    hash: e.hash,
    split: "val",
    hard: m.hard,
    soft: m.soft,
    score: null,
    evaluated: out.total,
    total: out.total,
    action: "resample",
  });
  state.pool!.log.push({ step, kind: "resample", parents: e.parents, hash: e.hash, verdict: "resampled" });
}

function put(env: PoolEnv, state: LoopState, e: PoolEntry): void {
  admit(state, e, env.cfg.optimizer.pool_size, env.gate, env.objective);
}

/**
 * The pool's best on the objective becomes the current skill and the best (with the step it became
 * so) once it beats the best so far under the run's rule, on the selection items both have scored
 * (no new rollout: members have full per-item scores). Taking the plain maximum of many noisy
 * means would favour the luckiest candidate; the strict rule compares means, as a single run does.
 */
function settle(env: PoolEnv, state: LoopState, step: number): void {
  const pool = state.pool!;
  const top = poolBest(pool, env.objective);
  const held = pool.entries.find((e) => e.hash === state.best.hash && e.status === "member");
  let b = top;
  if (held && top.hash !== held.hash && env.gate.useGate && env.decider.itemwise) {
    // Under `weighted` the price of tokens is known, not measured: a shorter skill ahead on the
    // objective takes over unless the longer one proves (under the run's rule) it is worth its
    // tokens; a longer one must prove it is better, and when it cannot, the shorter member
    // highest on the objective above the best still challenges it (cheaperChallenger). Under
    // `score`, the challenger must prove it.
    const cheaper = env.objective.kind === "weighted" && costOf(env.objective, top) < costOf(env.objective, held);
    if (cheaper) b = beats(env, state, held, top) ? held : top;
    else if (!beats(env, state, top, held)) {
      const c = cheaperChallenger(env, pool, held);
      b = c && !beats(env, state, held, c) ? c : held;
    }
  }
  state.current = ref(b);
  if (state.best.hash !== b.hash) state.best = { ...ref(b), step };
}

/** Does `a` beat `b` under the run's rule, on their per-item objective differences (the price of a's extra tokens taken off each)? */
function beats(env: PoolEnv, state: LoopState, a: PoolEntry, b: PoolEntry): boolean {
  const xa = state.selItems?.[a.hash] ?? [];
  const xb = state.selItems?.[b.hash] ?? [];
  const o = env.objective;
  const price = o.kind === "weighted" ? (o.tokenWeight * (costOf(o, a) - costOf(o, b))) / 1000 : 0;
  const diffs: number[] = [];
  const regressed: boolean[] = [];
  for (const i of env.pairedOrder.order) {
    const p = xa[i];
    const q = xb[i];
    if (!p || !q) continue;
    diffs.push(itemScore(env.gate, p[0], p[1]) - itemScore(env.gate, q[0], q[1]) - price);
    regressed.push(passed(q) && !passed(p));
  }
  const ev = { flipRate: state.noiseFloor?.flip_rate, history: state.gateHistory ?? [] };
  return diffs.length > 0 && env.decider.onItems(diffs, regressed, ev).verdict === "accept";
}

async function tryMerge(env: PoolEnv, state: LoopState, step: number, work: PoolWork): Promise<void> {
  const pair = mergePair(state, env.gate, env.objective);
  if (!pair) return;
  const [anc, a, b] = [pair.ancestor, pair.a.hash, pair.b.hash].map((h) => env.skills.get(h));
  if (anc === undefined || a === undefined || b === undefined) return;
  const merged = mergeSkills(anc, a, b);
  const h = skillHash(merged.text);
  if (!merged.taken || h === pair.a.hash || h === pair.b.hash || state.pool!.entries.some((e) => e.hash === h)) {
    state.pool!.log.push({ step, kind: "merge", parents: [pair.a.hash, pair.b.hash], verdict: "nothing_to_merge" });
    return;
  }
  env.skills.set(h, merged.text);
  const origin = `merge_step_${String(step).padStart(4, "0")}`;
  work.newSkills.push({ hash: h, text: merged.text, origin });
  const g = await gateAgainst(env, state, pair.a, merged.text, `merge step ${step} selection`, work);
  state.pool!.log.push({ step, kind: "merge", parents: [pair.a.hash, pair.b.hash], hash: h, verdict: g.verdict });
  if (g.verdict === "reject") return;
  state.pool!.lineage[h] ??= pair.a.hash;
  put(env, state, {
    hash: h,
    origin,
    hard: g.hard,
    soft: g.soft,
    score: g.score,
    step,
    parents: [pair.a.hash, pair.b.hash],
    tokens: estimateTokens(merged.text),
    status: g.verdict === "accept" ? "member" : "undecided",
  });
}

/**
 * Under `weighted`, the pool's best on the objective is offered once to the optimizer to shorten:
 * restated lines, lines that instruct nothing and idle words out, no rule changed (prompts/shorten.md).
 * A shorter answer is measured on the selection split (one pass) and joins the pool unless the
 * longer member proves, under the run's rule, that its extra tokens are worth it (as `settle` asks
 * of a longer best; under `strict`, when it is not lower on the objective). An answer that
 * is not shorter, or lost one of the document's markers, is logged and dropped.
 */
async function tryShorten(env: PoolEnv, state: LoopState, step: number, work: PoolWork): Promise<void> {
  if (env.objective.kind !== "weighted" || !env.cfg.optimizer.shorten) return;
  const pool = state.pool!;
  const top = poolBest(pool, env.objective);
  const text = env.skills.get(top.hash);
  pool.shortened ??= [];
  if (text === undefined || pool.shortened.includes(top.hash)) return;
  pool.shortened.push(top.hash);
  const log = (verdict: string, hash?: string): void => {
    pool.log.push({ step, kind: "shorten", parents: [top.hash], ...(hash ? { hash } : {}), verdict });
  };
  const user = userMessage(
    [
      skillSection(text),
      { title: "Its size", body: `About ${top.tokens} tokens, paid on every task it is loaded into.` },
    ],
    { stage: "shorten", tokens: top.tokens },
  );
  const value = await askOptimizer(env.sc, "shorten", env.sc.prompts.shorten, user, ShortenSchema, { maxTokens: 8192 });
  if (!value?.skill.trim()) return log("no_answer");
  const short = `${restoreFiles(text, value.skill).trimEnd()}\n`;
  const h = skillHash(short);
  const tokens = estimateTokens(short);
  const marks = (t: string) => [SLOW_START, SLOW_END, APPENDIX_START, APPENDIX_END].map((m) => t.split(m).length);
  if (marks(short).join() !== marks(text).join()) return log("markers_lost");
  if (tokens >= top.tokens || pool.entries.some((e) => e.hash === h)) return log("not_shorter");
  env.skills.set(h, short);
  const origin = `shorten_step_${String(step).padStart(4, "0")}`;
  work.newSkills.push({ hash: h, text: short, origin });
  const m = await measure(env, state, short, `shorten step ${step} selection`, work);
  const cand: PoolEntry = { hash: h, origin, ...m, step, parents: [top.hash], tokens, status: "member" };
  // The member's record is the sample a gate let through, which leans high; it grows by one more
  // sample (resample) before the shorter one's fresh sample is compared with it.
  if ((top.resampled ?? 0) < 1) await resample(env, state, top, step, work);
  // Non-inferiority: the saving is known, the scores are measured. The shorter one joins unless the
  // longer proves on the paired items, under the run's rule, that it scores more than its extra
  // tokens are worth; on a split of a dozen items a shorter rewrite is never "ahead" for sure, and
  // asking it to be ahead on one sample dropped about half of the rewrites that kept every rule.
  const kept = !(env.gate.useGate && env.decider.itemwise)
    ? objectiveValue(env.objective, m.score, costOf(env.objective, cand)) >=
      objectiveValue(env.objective, top.score, costOf(env.objective, top))
    : !beats(env, state, top, cand);
  log(kept ? "accept" : "reject", h);
  if (!kept) return;
  pool.lineage[h] ??= top.hash;
  put(env, state, cand);
}

/** One selection pass of a skill: its per-item record and scores kept, like a gated candidate's. */
async function measure(
  env: PoolEnv,
  state: LoopState,
  text: string,
  label: string,
  work: PoolWork,
): Promise<{ hard: number; soft: number; score: number }> {
  const out = await env.ev.run(text, env.pairedOrder.selection, label);
  requireAnswers(out, `selection pass of ${label}`, { strict: true });
  const { hard, soft } = meanScores(out.results);
  const score = gateScore(env.gate, hard, soft, text);
  const h = skillHash(text);
  state.selCache[h] = { hard, soft };
  rememberItems(
    state,
    h,
    out.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const),
  );
  // A text measured before (a rejected merge can be the same text as a later shortening) is served
  // from the evaluator's memory, which reports no usage: its cost is read from the results it kept.
  const at = new Map(env.pairedOrder.selection.map((it, i) => [it.id, i] as const));
  for (const r of out.results)
    if (typeof r.task_tokens === "number" && at.has(r.id))
      rememberUsage(state, h, at.get(r.id)!, at.size, {
        task_tokens: r.task_tokens,
        task_cost_usd: typeof r.task_cost_usd === "number" ? r.task_cost_usd : null,
      });
  work.evaluations.push({
    kind: "pool",
    hash: h,
    split: "val",
    hard,
    soft,
    score,
    evaluated: out.total,
    total: out.total,
    action: "shorten",
  });
  return { hard, soft, score };
}

/** Gate a candidate against a pool member with the run's rule (the paired test, or the strict mean comparison). */
async function gateAgainst(
  env: PoolEnv,
  state: LoopState,
  parent: PoolEntry,
  text: string,
  label: string,
  work: PoolWork,
): Promise<{ verdict: "accept" | "reject" | "undecided"; hard: number; soft: number; score: number }> {
  const h = skillHash(text);
  const parentText = env.skills.get(parent.hash)!;
  const saved = state.current;
  state.current = ref(parent);
  try {
    if (env.gate.useGate && env.decider.itemwise) {
      const p = await pairedGate(env.ev, env.gate, env.decider, state, env.pairedOrder, text, parentText, label);
      state.selectionSaved += p.out.total - p.out.launched;
      const verdict = p.decision.verdict;
      if (verdict === "accept") {
        state.selCache[h] = { hard: p.estimate.hard, soft: p.estimate.soft };
        rememberItems(state, h, p.candidateItems);
      } else if (verdict === "undecided") state.selCache[h] = { hard: p.estimate.hard, soft: p.estimate.soft };
      const { hard, soft } = meanScores(p.out.results);
      work.evaluations.push({
        kind: "pool",
        hash: h,
        split: "val",
        hard,
        soft,
        score: null,
        evaluated: p.out.evaluated,
        total: p.out.total,
        action: verdict,
      });
      return { verdict, ...p.estimate };
    }
    const out = await env.ev.run(text, env.pairedOrder.selection, label);
    requireAnswers(out, `selection pass of ${label}`, { strict: true });
    const { hard, soft } = meanScores(out.results);
    const score = gateScore(env.gate, hard, soft, text);
    state.selCache[h] = { hard, soft };
    rememberItems(
      state,
      h,
      out.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const),
    );
    const d = decide(env.gate, score, parent.score, state.best.score);
    const verdict = d.action === "reject" ? "reject" : "accept";
    work.evaluations.push({
      kind: "pool",
      hash: h,
      split: "val",
      hard,
      soft,
      score,
      evaluated: out.total,
      total: out.total,
      action: verdict,
    });
    return { verdict, hard, soft, score };
  } finally {
    state.current = saved;
  }
}

/**
 * An undecided entry's evidence grows by one more answer sample of it and its parent on every
 * selection item; the run's rule decides on all samples' paired differences together. Still
 * undecided after MAX_EXTRA_SAMPLES, or with its parent gone from the pool, it leaves the pool.
 */
async function redecide(env: PoolEnv, state: LoopState, u: PoolEntry, step: number, work: PoolWork): Promise<void> {
  const pool = state.pool!;
  const parent = pool.entries.find((e) => e.hash === u.parents[0] && e.status === "member");
  const text = env.skills.get(u.hash);
  const parentText = parent ? env.skills.get(parent.hash) : undefined;
  const drop = (verdict: string) => {
    pool.entries = pool.entries.filter((e) => e !== u);
    pool.log.push({ step, kind: "redecide", parents: u.parents, hash: u.hash, verdict });
  };
  if (!parent || text === undefined || parentText === undefined) return drop("parent_gone");
  const k = (u.samples ?? 0) + 1;
  const sel = env.pairedOrder.selection;
  const diffs: number[] = [];
  const regressed: boolean[] = [];
  let first: ItemScores[] = [];
  for (let s = 0; s <= k; s++) {
    const c = await env.ev.run(text, sel, `pool re-decision step ${step} sample ${s}`, undefined, undefined, s);
    const p = await env.ev.run(parentText, sel, `pool re-decision step ${step} sample ${s}`, undefined, undefined, s);
    requireAnswers(c, `pool re-decision of ${u.origin}`, { strict: true });
    requireAnswers(p, `pool re-decision of ${u.origin}`, { strict: true });
    const cs = c.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
    const ps = p.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
    if (s === 0) first = cs;
    for (const i of env.pairedOrder.order) {
      if (!cs[i] || !ps[i]) continue;
      diffs.push(itemScore(env.gate, cs[i][0], cs[i][1]) - itemScore(env.gate, ps[i][0], ps[i][1]));
      regressed.push(passed(ps[i]) && !passed(cs[i]));
    }
  }
  const d = env.decider.onItems(diffs, regressed, {
    flipRate: state.noiseFloor?.flip_rate,
    history: state.gateHistory ?? [],
  });
  const mean = (j: 0 | 1) => first.reduce((a, x) => a + x[j], 0) / Math.max(1, first.length);
  const [hard, soft] = [mean(0), mean(1)];
  work.evaluations.push({
    kind: "pool",
    hash: u.hash,
    split: "val",
    hard,
    soft,
    score: null,
    evaluated: diffs.length,
    total: diffs.length,
    action: d.verdict,
  });
  if (d.verdict === "reject") return drop("reject");
  if (d.verdict === "undecided" && k >= MAX_EXTRA_SAMPLES) return drop("undecided_dropped");
  if (d.verdict === "undecided") {
    u.samples = k;
    pool.log.push({ step, kind: "redecide", parents: u.parents, hash: u.hash, verdict: "undecided" });
    return;
  }
  state.selCache[u.hash] = { hard, soft };
  rememberItems(state, u.hash, first);
  Object.assign(u, { hard, soft, score: gateScore(env.gate, hard, soft, text), status: "member", samples: k });
  pool.log.push({ step, kind: "redecide", parents: u.parents, hash: u.hash, verdict: "accept" });
}
