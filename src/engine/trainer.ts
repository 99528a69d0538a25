import * as v from "valibot";
import { BudgetError, type BudgetFacts, budgetMessage, DataError, stopMessage } from "../lib/index.ts";
import { comparePairs, metaSkillCall, slowUpdateCall } from "./boundary.ts";
import { Evaluator, meanScores, requireAnswers, skillHash } from "./evaluate.ts";
import type { EngineEvents, StageEvent } from "./events.ts";
import {
  chooseRule,
  decide,
  type Gate,
  gateScore,
  gateSettings,
  type ItemScores,
  itemScore,
  makeGate,
  semanticDensity,
} from "./gate.ts";
import { adoptAccepted, type PairedOrder, pairedGate, partialRow, pruneItems, rememberItems } from "./paired-gate.ts";
import { seededShuffle } from "./random.ts";
import { detectableGain, type GateDecision } from "./sequential.ts";
import type { PromptSet } from "./messages.ts";
import { planEpoch } from "./plan.ts";
import type { Benchmark, BenchmarkContext, CallAccounting, Clock, RolloutResult, Splits, TaskItem } from "./ports.ts";
import { LrScheduler } from "./schedule.ts";
import { deriveSizes, type EngineConfig, normalizeLrControl, normalizeUpdateMode } from "./settings.ts";
import { ensureSlowUpdatePlaceholder, setAppendix, setSlowUpdate } from "./skill-doc.ts";
import { type StageContext, UnusableWatch } from "./stage-context.ts";
import { type LoopState, LoopStateSchema } from "./state.ts";
import { type BoundaryAction, type BoundaryRecord, recordIssue, type Summary } from "./records.ts";
import { runStep } from "./step.ts";
import { stopConditionMet } from "./stops.ts";
import type { CheckpointContent, EvaluationRow, RunRecorder } from "./checkpoint.ts";
import { finalEvaluation } from "./final.ts";

interface TrainDeps {
  cfg: EngineConfig;
  bench: Benchmark;
  ctx: BenchmarkContext;
  splits: Splits;
  initialSkill: string;
  prompts: PromptSet;
  recorder: RunRecorder;
  accounting: CallAccounting;
  events: EngineEvents;
  clock: Clock;
  signal?: AbortSignal;
}

export interface TrainResult {
  summary: Summary;
  state: LoopState;
  bestSkill: string;
  currentSkill: string;
}

/** First N items of a split, N = 0 meaning all (spec §2.2 eval batches: file order, no shuffle). */
export function firstN(items: readonly TaskItem[], n: number): TaskItem[] {
  return n > 0 && n < items.length ? items.slice(0, n) : [...items];
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** Run (or resume) a whole training run. */
export async function train(deps: TrainDeps): Promise<TrainResult> {
  const { cfg, bench, events, clock, recorder, accounting } = deps;
  const startedAt = clock.now();
  const emit = (e: StageEvent) => events.emit(e);
  const mode = normalizeUpdateMode(cfg.optimizer.skill_update_mode);
  const lrControl = normalizeLrControl(cfg.optimizer.lr_control_mode, mode);
  const gate = gateSettings(cfg.evaluation);
  const sizes = deriveSizes(cfg, deps.splits.train.length);
  const selection = firstN(deps.splits.val, cfg.evaluation.sel_env_num);
  if (!selection.length) {
    throw new DataError(`the selection split (val) of ${bench.name} is empty`, {
      data: { split: "val", problem: "empty_split" },
    });
  }
  const sc: StageContext = {
    cfg,
    mode,
    lrControl,
    model: deps.ctx.model,
    prompts: deps.prompts,
    bench,
    events,
    gate,
    signal: deps.signal,
  };
  const ev = new Evaluator(bench, deps.ctx, cfg.env.workers ?? 16, events);
  // The paired gate reads the selection split in a seeded random order, so a split stored
  // sorted (by topic, by difficulty) does not bias the sequential test's early items.
  const pairedOrder: PairedOrder = {
    selection,
    order: seededShuffle(
      cfg.train.seed,
      selection.map((_, i) => i),
    ),
  };
  const scoresOf = (rs: readonly { hard?: unknown; soft?: unknown }[]): ItemScores[] =>
    rs.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
  const skills = new Map<string, string>();
  const scheduler = new LrScheduler(
    cfg.optimizer.lr_scheduler,
    cfg.optimizer.learning_rate,
    cfg.optimizer.min_learning_rate,
    sizes.totalSteps,
  );

  emit({
    type: "plan",
    epochs: cfg.train.num_epochs,
    stepsPerEpoch: sizes.stepsPerEpoch,
    accumulation: cfg.train.accumulation,
    batchSize: cfg.train.batch_size,
    trainSize: sizes.trainSize,
    totalSteps: sizes.totalSteps,
    lrScheduler: cfg.optimizer.lr_scheduler,
    editBudget: cfg.optimizer.learning_rate,
    minEditBudget: cfg.optimizer.min_learning_rate,
    updateMode: mode,
    lrControl,
    gate: {
      metric: gate.metric,
      mixedWeight: gate.mixedWeight,
      useGate: gate.useGate,
      earlyReject: gate.earlyReject,
      rule: gate.configured,
      confidence: 1 - gate.sequential.alpha,
      minEffect: gate.sequential.minEffect,
      maxRegressions: gate.sequential.maxRegressions,
    },
    slowUpdateGated: cfg.optimizer.slow_update_gate_with_selection,
  });

  let state: LoopState;
  const resumed = recorder.resume();
  const stored = resumed ? v.safeParse(LoopStateSchema, resumed.state) : undefined;
  if (stored && !stored.success) {
    throw new DataError(
      `the run store holds a loop state this version cannot read (${recordIssue("loop state", stored.issues)})`,
      {
        hint: "start a new run with a different --out",
        data: { path: recorder.path, field: "loop_state", problem: "unreadable_state" },
      },
    );
  }
  const elapsedBefore = stored?.output.elapsedS ?? 0;
  /** Wall seconds of the run over all its invocations. */
  const elapsed = () => elapsedBefore + (clock.now() - startedAt) / 1000;
  const commit = (cp: CheckpointContent) => {
    state.elapsedS = Math.round(elapsed() * 10) / 10;
    // The recorder serializes (or copies) what it keeps before commit returns: no clone here.
    recorder.commit({ ...cp, state });
    // What a later step can still use stays in memory; everything else is in the store.
    const live = new Set([
      state.current.hash,
      state.best.hash,
      state.baseline.hash,
      ...Object.values(state.epochStart),
    ]);
    ev.retain(live);
    for (const h of skills.keys()) if (!live.has(h)) skills.delete(h);
  };

  if (resumed && stored?.success) {
    state = stored.output;
    // A budget stop ends one invocation, not the run: a resume with a higher cap continues.
    delete state.stopped;
    delete state.stopCondition;
    for (const [h, t] of Object.entries(resumed.skills)) skills.set(h, t);
    scheduler.current = state.schedulerStep;
    emit({
      type: "resume",
      step: state.lastStep,
      current: state.current.score,
      best: state.best.score,
      origin: state.current.origin,
    });
  } else {
    let initial = deps.initialSkill;
    const hash0 = skillHash(initial);
    skills.set(hash0, initial);
    emit({ type: "baseline_start", items: selection.length });
    const out = await ev.run(initial, selection, "baseline selection");
    // The canary: a baseline without answers stops the run before any optimizer call is paid.
    requireAnswers(out, "baseline selection pass (stopped before any optimizer call)", { strict: true });
    const { hard, soft } = meanScores(out.results);
    const score = gateScore(gate, hard, soft, initial);
    emit({ type: "baseline_done", hard, soft, metric: gate.metric, score });
    const ref = { hash: hash0, hard, soft, score, origin: "initial_skill" };
    state = {
      version: 1,
      lastStep: 0,
      boundaryEpoch: 0,
      finished: false,
      current: ref,
      best: { ...ref, step: 0 },
      baseline: ref,
      schedulerStep: 0,
      bufferEpoch: 0,
      stepBuffer: [],
      selCache: { [hash0]: { hard, soft } },
      selItems: { [hash0]: scoresOf(out.results) },
      meta: {},
      epochStart: {},
      counts: { accepted: 0, rejected: 0, rejected_early: 0, skipped: 0 },
      selectionSaved: 0,
      errored: {},
    };
    const newSkills = [{ hash: hash0, text: initial, origin: "initial_skill" }];
    if (cfg.optimizer.use_skill_aware_reflection) {
      // An empty appendix region changes no instruction; the score carries over.
      initial = setAppendix(initial, []);
      const h = skillHash(initial);
      skills.set(h, initial);
      state.current = { ...ref, hash: h };
      state.selCache[h] = { hard, soft };
      rememberItems(state, h, state.selItems![hash0]!);
      newSkills.push({ hash: h, text: initial, origin: "initial_skill+appendix" });
    }
    state.noiseFloor = await noiseFloor(deps.initialSkill, out.results);
    // The rule is chosen once, here: `auto` reads the split size and the noise floor just measured.
    state.gateRule =
      gate.configured === "auto"
        ? {
            ...chooseRule(
              selection.length,
              gate.useGate && gate.noiseFloorItems > 0 ? state.noiseFloor?.flip_rate : undefined,
              1 - gate.sequential.alpha,
            ),
            configured: "auto",
          }
        : { rule: gate.configured, configured: gate.configured, why: "configured" };
    commit({
      kind: "baseline",
      step: 0,
      epoch: 0,
      skills: newSkills,
      evaluations: [
        { kind: "baseline", hash: hash0, split: "val", hard, soft, score, evaluated: out.evaluated, total: out.total },
      ],
    });
  }

  // A run stored before the choice existed was decided by its configured rule (strict under auto).
  gate.rule = state.gateRule?.rule ?? gate.rule;
  const decider: Gate = makeGate(gate.rule, gate.sequential);
  if (gate.useGate)
    emit({
      type: "gate_rule",
      rule: gate.rule,
      configured: gate.configured,
      why: state.gateRule?.why ?? "configured",
    });

  const stop = ({ limit, spent, cap, at }: BudgetFacts) => {
    state.stopped = budgetMessage({ limit, spent, cap, at });
    events.emit({ type: "warning", code: "budget_stop", limit, spent, cap, at });
  };
  // A model that cannot do the optimizer's job stops the run, loudly, before another step is paid for.
  const unusable = new UnusableWatch();
  /** A stop condition of train: met at this step boundary: the loop ends here, the test pass still runs. */
  const conditionStop = (): boolean => {
    const met = stopConditionMet(cfg.train, state, elapsed());
    if (!met) return false;
    state.stopped = stopMessage(met);
    state.stopCondition = met.condition;
    events.emit({ type: "warning", code: "stop_condition", ...met });
    return true;
  };
  let global = 0;
  outer: for (let epoch = 1; epoch <= cfg.train.num_epochs; epoch++) {
    const firstStep = (epoch - 1) * sizes.stepsPerEpoch + 1;
    const lastStep = epoch * sizes.stepsPerEpoch;
    if (state.boundaryEpoch >= epoch) {
      global = lastStep;
      continue;
    }
    events.emit({ type: "epoch_start", epoch, epochs: cfg.train.num_epochs });
    state.epochStart[String(epoch)] ??= state.current.hash;
    if (state.bufferEpoch !== epoch) {
      state.bufferEpoch = epoch;
      state.stepBuffer = [];
      state.stepBufferOlder = undefined;
    }
    const meta = cfg.optimizer.use_meta_skill ? (state.meta[String(epoch - 1)] ?? "") : "";
    if (meta) emit({ type: "meta_loaded", epoch: epoch - 1, chars: meta.length });
    const batches = planEpoch(deps.splits.train, cfg, epoch, sizes);
    for (let k = 0; k < sizes.stepsPerEpoch; k++) {
      global = firstStep + k;
      if (global <= state.lastStep) continue;
      const why = accounting.budgetExceeded();
      if (why) {
        stop(why);
        break outer;
      }
      if (conditionStop()) break outer;
      events.emit({ type: "step_start", step: global, total: sizes.totalSteps, epoch, stepInEpoch: k });
      const work = structuredClone(state);
      sc.tally = new Map();
      let outcome: Awaited<ReturnType<typeof runStep>>;
      try {
        outcome = await runStep(
          {
            sc,
            ev,
            skills,
            selection,
            scheduler,
            accounting,
            clock,
            totalSteps: sizes.totalSteps,
            pairedOrder,
            decider,
          },
          work,
          {
            global,
            epoch,
            inEpoch: k,
            batches: batches.slice(k * cfg.train.accumulation, (k + 1) * cfg.train.accumulation),
          },
          meta,
        );
      } catch (err) {
        scheduler.current = state.schedulerStep;
        if (err instanceof BudgetError) {
          stop(err.data);
          break outer;
        }
        throw err;
      }
      // The step whose answers were all unusable is not committed: a resume with another model redoes it.
      const unfit = unusable.afterStep(sc.tally);
      sc.tally = undefined;
      if (unfit) {
        scheduler.current = state.schedulerStep;
        throw unfit;
      }
      state = work;
      state.lastStep = global;
      commit({
        kind: "step",
        step: global,
        epoch,
        skills: outcome.newSkills,
        record: outcome.record,
        evaluations: outcome.evaluations,
        artifacts: outcome.artifacts,
      });
      events.emit({ type: "step_done", step: global, total: sizes.totalSteps, record: outcome.record });
    }
    const why = accounting.budgetExceeded();
    if (why) {
      stop(why);
      break;
    }
    if (conditionStop()) break;
    await epochBoundary(epoch);
  }

  async function epochBoundary(epoch: number): Promise<void> {
    const tag = pad2(epoch);
    const record: BoundaryRecord = { epoch, step: state.lastStep };
    const evaluations: EvaluationRow[] = [];
    const newSkills: CheckpointContent["skills"] = [];
    const curr = skills.get(state.current.hash)!;
    if (epoch === 1 || !(cfg.optimizer.use_slow_update || cfg.optimizer.use_meta_skill)) {
      if (cfg.optimizer.use_slow_update) {
        const next = ensureSlowUpdatePlaceholder(curr);
        const h = skillHash(next);
        if (h !== state.current.hash) {
          // An empty marker pair changes no instruction; the measured score carries over.
          skills.set(h, next);
          state.selCache[h] = { hard: state.current.hard, soft: state.current.soft };
          if (state.selItems?.[state.current.hash]) rememberItems(state, h, state.selItems[state.current.hash]!);
          state.current = { ...state.current, hash: h, origin: `slow_update_placeholder_epoch_${tag}` };
          pruneItems(state);
          newSkills.push({ hash: h, text: next, origin: state.current.origin });
        }
        emit({ type: "slow_update_placeholder", epoch });
        record.slow_update = { action: "inject_placeholder", epoch };
      }
      if (cfg.optimizer.use_meta_skill) record.meta_skill = { action: "skip_first_epoch", epoch };
      state.boundaryEpoch = epoch;
      commit({ kind: "boundary", step: state.lastStep, epoch, skills: newSkills, record, evaluations });
      return;
    }
    const prev = skills.get(state.epochStart[String(epoch)] ?? state.current.hash)!;
    emit({ type: "slow_update_start", epoch });
    const { pairs, prevHard, currHard } = await comparePairs(sc, ev, prev, curr, deps.splits.train, epoch);
    emit({ type: "slow_update_pairs", epoch, prevHard, currHard, pairs: pairs.length });
    const prevMeta = state.meta[String(epoch - 1)] ?? "";
    const [slow, meta] = await Promise.all([
      cfg.optimizer.use_slow_update ? slowUpdateCall(sc, prev, curr, pairs) : Promise.resolve(undefined),
      cfg.optimizer.use_meta_skill ? metaSkillCall(sc, prev, curr, prevMeta, pairs) : Promise.resolve(undefined),
    ]);
    record.pairs = pairs.map((p) => ({ id: p.id, category: p.category, prev: p.prev, curr: p.curr }));
    if (cfg.optimizer.use_meta_skill) {
      if (meta) state.meta[String(epoch)] = meta.content;
      record.meta_skill = meta
        ? { action: "write_meta_skill", meta_skill_content: meta.content, reasoning: meta.reasoning }
        : { action: "no_content" };
      emit({ type: "meta_skill", epoch, chars: meta ? meta.content.length : null });
    }
    if (cfg.optimizer.use_slow_update) {
      if (!slow) record.slow_update = { action: "no_content", prev_hard: prevHard, curr_hard: currHard };
      else {
        const cand = setSlowUpdate(curr, slow.content);
        const h = skillHash(cand);
        skills.set(h, cand);
        newSkills.push({ hash: h, text: cand, origin: `slow_update_epoch_${tag}` });
        const gated = cfg.optimizer.slow_update_gate_with_selection && gate.useGate;
        // The record and event of the slow update's outcome: the paired verdict, or the selection scores.
        const settle = (
          action: BoundaryAction,
          verdict: GateDecision | null,
          selection: { hard: number; soft: number } | undefined,
        ) => {
          record.slow_update = {
            action,
            prev_hard: prevHard,
            curr_hard: currHard,
            candidate_hash: h,
            slow_update_content: slow.content,
            reasoning: slow.reasoning,
            ...(verdict ? { gate: verdict } : {}),
            ...(selection ? { selection_hard: selection.hard, selection_soft: selection.soft } : {}),
          };
          emit({
            type: "slow_update_done",
            epoch,
            action,
            gate: verdict,
            current: state.current.score,
            best: state.best.score,
          });
        };
        if (gated && decider.itemwise) {
          const p = await pairedGate(
            ev,
            gate,
            decider,
            state,
            pairedOrder,
            cand,
            curr,
            `slow update epoch ${epoch} selection`,
          );
          const d = p.decision;
          state.selectionSaved += p.out.total - p.out.launched;
          const action = p.action;
          evaluations.push(partialRow("slow_update", h, p.out, action));
          if (d.verdict === "accept") adoptAccepted(state, h, `slow_update_epoch_${tag}`, p, state.lastStep);
          pruneItems(state);
          settle(action, d, undefined);
          state.boundaryEpoch = epoch;
          commit({ kind: "boundary", step: state.lastStep, epoch, skills: newSkills, record, evaluations });
          return;
        }
        let scores = state.selCache[h];
        let early = false;
        if (!scores) {
          const bonus = gate.densityWeight ? gate.densityWeight * semanticDensity(cand, gate.leadingWords) : 0;
          const out = await ev.run(
            cand,
            selection,
            `slow update epoch ${epoch} selection`,
            gated && gate.earlyReject ? { gate, mustBeat: state.current.score, bonus } : undefined,
          );
          requireAnswers(out, `slow-update selection pass of epoch ${epoch}`, { strict: true });
          if (out.complete) {
            scores = meanScores(out.results);
            state.selCache[h] = scores;
            rememberItems(state, h, scoresOf(out.results));
          } else {
            early = true;
            state.selectionSaved += out.total - out.launched;
            evaluations.push(partialRow("slow_update", h, out, "reject_early"));
          }
        }
        let action: BoundaryAction;
        if (early || !scores) action = "reject_early";
        else {
          const score = gateScore(gate, scores.hard, scores.soft, cand);
          const d = gated
            ? decide(gate, score, state.current.score, state.best.score)
            : { action: "force_accept" as const, newBest: score > state.best.score };
          action = d.action;
          evaluations.push({
            kind: "slow_update",
            hash: h,
            split: "val",
            hard: scores.hard,
            soft: scores.soft,
            score,
            evaluated: selection.length,
            total: selection.length,
            action,
          });
          if (action !== "reject") {
            state.current = {
              hash: h,
              hard: scores.hard,
              soft: scores.soft,
              score,
              origin: `slow_update_epoch_${tag}`,
            };
            if (d.newBest) state.best = { ...state.current, step: state.lastStep };
          }
          pruneItems(state);
        }
        settle(action, null, scores);
      }
    }
    state.boundaryEpoch = epoch;
    commit({ kind: "boundary", step: state.lastStep, epoch, skills: newSkills, record, evaluations });
  }

  /**
   * The noise floor: the initial skill re-sampled (sample index 1) on the first items of the
   * selection split; an item flips when its two samples score differently. Its calls go through
   * the call cache like every other, so a later run with the same target and benchmark pays
   * nothing for it. Warns when the split is too small to detect the configured minimum effect.
   */
  async function noiseFloor(skill: string, first: readonly RolloutResult[]): Promise<LoopState["noiseFloor"]> {
    const m = Math.min(gate.noiseFloorItems, selection.length);
    if (!gate.useGate || m <= 0) return undefined;
    const out = await ev.run(skill, selection.slice(0, m), "noise floor", undefined, undefined, 1);
    // Only items answered both times count (a missing answer is no flip and no agreement).
    const before = new Map(first.map((r) => [String(r.id), r]));
    let flips = 0;
    let compared = 0;
    for (const r of out.results) {
      const a = before.get(String(r.id));
      if (!a) continue;
      compared += 1;
      if (
        Math.abs(
          itemScore(gate, Number(r.hard) || 0, Number(r.soft) || 0) -
            itemScore(gate, Number(a.hard) || 0, Number(a.soft) || 0),
        ) > 1e-9
      )
        flips += 1;
    }
    const rate = compared ? flips / compared : 0;
    const confidence = 1 - gate.sequential.alpha;
    const mde = detectableGain(selection.length, rate, confidence);
    const nf = {
      items: compared,
      flips,
      flip_rate: rate,
      detectable_gain: mde,
      selection_items: selection.length,
      min_effect: gate.sequential.minEffect,
      confidence,
    };
    emit({ type: "noise_floor", ...nf });
    return nf;
  }

  const testItems = cfg.evaluation.eval_test ? firstN(deps.splits.test, cfg.evaluation.test_env_num) : [];
  const summary = await finalEvaluation({
    state,
    skills,
    ev,
    gate,
    benchmark: bench.name,
    testItems,
    epochs: cfg.train.num_epochs,
    totalSteps: sizes.totalSteps,
    selectionItems: selection.length,
    accounting,
    events,
    wallSeconds: elapsed,
    commit,
  });
  return { summary, state, bestSkill: skills.get(state.best.hash)!, currentSkill: skills.get(state.current.hash)! };
}
