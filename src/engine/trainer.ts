import { BudgetError, type BudgetFacts, budgetMessage, stopMessage } from "../lib/index.ts";
import { epochBoundary } from "./boundary.ts";
import { finalEvaluation } from "./final.ts";
import { firstN, type Loop, openLoop, type TrainDeps } from "./loop.ts";
import { planEpoch } from "./plan.ts";
import { afterPoolStep, beforePoolStep, type PoolEnv, startPool } from "./pool-step.ts";
import { objectiveOf } from "./search.ts";
import type { Summary } from "./records.ts";
import { UnusableWatch } from "./stage-context.ts";
import type { LoopState } from "./state.ts";
import { runStep } from "./step.ts";
import { stopConditionMet } from "./stops.ts";

export interface TrainResult {
  summary: Summary;
  state: LoopState;
  bestSkill: string;
  currentSkill: string;
}

/**
 * Run (or resume) a whole training run: start or resume (loop.ts) → epochs of steps (step.ts),
 * each committed → the epoch boundary (boundary.ts) → the final evaluation (final.ts). A budget
 * cap or a stop condition ends the steps at a step boundary; the test pass still runs.
 */
export async function train(deps: TrainDeps): Promise<TrainResult> {
  const { cfg } = deps;
  const loop = await openLoop(deps);
  const { sizes } = loop;
  if (cfg.optimizer.search === "pool") startPool(loop.state, loop.skills);
  // A model that cannot do the optimizer's job stops the run, loudly, before another step is paid for.
  const unusable = new UnusableWatch();
  outer: for (let epoch = 1; epoch <= cfg.train.num_epochs; epoch++) {
    if (loop.state.boundaryEpoch >= epoch) continue;
    const meta = startEpoch(loop, epoch);
    const batches = planEpoch(deps.splits.train, cfg, epoch, sizes);
    for (let k = 0; k < sizes.stepsPerEpoch; k++) {
      const global = (epoch - 1) * sizes.stepsPerEpoch + 1 + k;
      if (global <= loop.state.lastStep) continue;
      if (mustStop(loop)) break outer;
      const acc = cfg.train.accumulation;
      const step = { global, epoch, inEpoch: k, batches: batches.slice(k * acc, (k + 1) * acc) };
      if (!(await commitStep(loop, step, meta, unusable))) break outer;
    }
    if (mustStop(loop)) break;
    if (!(await boundaryOrStop(loop, epoch))) break;
  }
  const summary = await finalOrStop(loop, {
    state: loop.state,
    skills: loop.skills,
    ev: loop.ev,
    gate: loop.sc.gate,
    rule: loop.gate,
    benchmark: deps.bench.name,
    testItems: cfg.evaluation.eval_test ? firstN(deps.splits.test, cfg.evaluation.test_env_num) : [],
    epochs: cfg.train.num_epochs,
    totalSteps: sizes.totalSteps,
    selectionItems: loop.selection.length,
    accounting: deps.accounting,
    events: deps.events,
    wallSeconds: loop.elapsed,
    commit: loop.commit,
    search: { mode: cfg.optimizer.search, objective: objectiveOf(cfg.evaluation) },
  });
  const { state, skills } = loop;
  return { summary, state, bestSkill: skills.get(state.best.hash)!, currentSkill: skills.get(state.current.hash)! };
}

/**
 * The epoch boundary; a budget cap met inside it (its rollouts, the gated slow update) stops the
 * run as at a step boundary: nothing of the boundary is kept, and a resume with a higher cap redoes it.
 */
async function boundaryOrStop(loop: Loop, epoch: number): Promise<boolean> {
  const saved = structuredClone(loop.state);
  try {
    await epochBoundary(loop, epoch);
    return true;
  } catch (err) {
    if (!(err instanceof BudgetError)) throw err;
    loop.state = saved;
    budgetStop(loop, err.data);
    return false;
  }
}

/**
 * The final evaluation; a budget cap met inside its test pass stops the run as a budget stop does
 * (the test pass is skipped, the run resumable), rather than failing a run whose steps all committed.
 */
async function finalOrStop(loop: Loop, input: Parameters<typeof finalEvaluation>[0]): Promise<Summary> {
  try {
    return await finalEvaluation(input);
  } catch (err) {
    if (!(err instanceof BudgetError)) throw err;
    budgetStop(loop, err.data);
    loop.state.stopCondition = undefined;
    return finalEvaluation({ ...input, state: loop.state });
  }
}

/** An epoch's start: its first skill noted, the step buffer emptied, the previous epoch's meta skill read. */
function startEpoch(loop: Loop, epoch: number): string {
  const { cfg, events } = loop.deps;
  const state = loop.state;
  events.emit({ type: "epoch_start", epoch, epochs: cfg.train.num_epochs });
  state.epochStart[String(epoch)] ??= state.current.hash;
  if (state.bufferEpoch !== epoch) {
    state.bufferEpoch = epoch;
    state.stepBuffer = [];
    state.stepBufferOlder = undefined;
  }
  const meta = cfg.optimizer.use_meta_skill ? (state.meta[String(epoch - 1)] ?? "") : "";
  if (meta) events.emit({ type: "meta_loaded", epoch: epoch - 1, chars: meta.length });
  return meta;
}

/** A budget stop ends this invocation (a resume with a higher cap continues). */
function budgetStop(loop: Loop, { limit, spent, cap, at }: BudgetFacts): void {
  loop.state.stopped = budgetMessage({ limit, spent, cap, at });
  loop.deps.events.emit({ type: "warning", code: "budget_stop", limit, spent, cap, at });
}

/** At a step boundary: a budget cap reached, or a stop condition of train: met (the loop ends; the test pass still runs). */
function mustStop(loop: Loop): boolean {
  const why = loop.deps.accounting.budgetExceeded();
  if (why) {
    budgetStop(loop, why);
    return true;
  }
  const met = stopConditionMet(loop.deps.cfg.train, loop.state, loop.elapsed());
  if (!met) return false;
  loop.state.stopped = stopMessage(met);
  loop.state.stopCondition = met.condition;
  loop.deps.events.emit({ type: "warning", code: "stop_condition", ...met });
  return true;
}

/**
 * Run one step on a copy of the loop state and commit it; false when a budget error stopped it
 * (nothing of the step is kept). A step whose optimizer answers were all unusable is not
 * committed either: the error stops the run and a resume with another model redoes it.
 */
async function commitStep(
  loop: Loop,
  step: Parameters<typeof runStep>[2],
  meta: string,
  unusable: UnusableWatch,
): Promise<boolean> {
  const { events } = loop.deps;
  const { sc, scheduler, sizes } = loop;
  events.emit({
    type: "step_start",
    step: step.global,
    total: sizes.totalSteps,
    epoch: step.epoch,
    stepInEpoch: step.inEpoch,
  });
  const work = structuredClone(loop.state);
  loop.live = work;
  sc.tally = new Map();
  let outcome: Awaited<ReturnType<typeof runStep>>;
  try {
    // optimizer.search: pool — the step improves a parent drawn from the pool's frontier, and its gated candidate joins the pool.
    const pool: PoolEnv | undefined = work.pool ? poolEnv(loop) : undefined;
    const before = pool ? await beforePoolStep(pool, work, step.global) : undefined;
    const parent = work.pool?.entries.find((e) => e.hash === work.current.hash);
    const bestBefore = { hash: work.best.hash, step: work.best.step };
    outcome = await runStep(loop, work, step, meta);
    if (pool && parent) {
      const after = await afterPoolStep(pool, work, step.global, parent, {
        action: outcome.record.action,
        candidate: outcome.record.candidate_hash,
        bestBefore,
      });
      // The record names the skills as the pool left them (its best on the objective is current and best).
      Object.assign(outcome.record, {
        current_score: work.current.score,
        best_score: work.best.score,
        best_step: work.best.step,
        current_origin: work.current.origin,
        best_origin: work.best.origin,
        current_hash: work.current.hash,
      });
      for (const w of [before!, after]) {
        outcome.newSkills.push(...w.newSkills);
        outcome.evaluations.push(...w.evaluations);
      }
    }
  } catch (err) {
    loop.live = undefined;
    scheduler.current = loop.state.schedulerStep;
    if (err instanceof BudgetError) {
      budgetStop(loop, err.data);
      return false;
    }
    throw err;
  }
  loop.live = undefined;
  const unfit = unusable.afterStep(sc.tally);
  sc.tally = undefined;
  if (unfit) {
    scheduler.current = loop.state.schedulerStep;
    throw unfit;
  }
  loop.state = work;
  work.lastStep = step.global;
  loop.commit({
    kind: "step",
    step: step.global,
    epoch: step.epoch,
    skills: outcome.newSkills,
    record: outcome.record,
    evaluations: outcome.evaluations,
    artifacts: outcome.artifacts,
  });
  events.emit({ type: "step_done", step: step.global, total: sizes.totalSteps, record: outcome.record });
  return true;
}

/** What the pool's hooks read of the loop. */
function poolEnv(loop: Loop): PoolEnv {
  const cfg = loop.deps.cfg;
  return {
    cfg,
    sc: loop.sc,
    ev: loop.ev,
    gate: loop.sc.gate,
    decider: loop.gate,
    objective: objectiveOf(cfg.evaluation, () => loop.live ?? loop.state),
    pairedOrder: loop.pairedOrder,
    skills: loop.skills,
  };
}
