import * as v from "valibot";
import { DataError } from "../lib/index.ts";
import type { CheckpointContent, RunRecorder } from "./checkpoint.ts";
import { Evaluator, meanScores, requireAnswers, skillHash } from "./evaluate.ts";
import type { EngineEvents, PlanEvent } from "./events.ts";
import { countFlips } from "./compare.ts";
import { rememberUsage, usageRow } from "./deployed.ts";
import { type GateSettings, gateScore, gateSettings, makeGate, ruleFor } from "./gate.ts";
import { itemScoresOf } from "./gate-pass.ts";
import type { PromptSet } from "./messages.ts";
import { type PairedOrder, rememberItems } from "./paired-gate.ts";
import type { Benchmark, BenchmarkContext, CallAccounting, Clock, RolloutResult, Splits, TaskItem } from "./ports.ts";
import { seededShuffle } from "./random.ts";
import { recordIssue } from "./records.ts";
import { LrScheduler } from "./schedule.ts";
import { detectableGain } from "./sequential.ts";
import {
  deriveSizes,
  type EngineConfig,
  type LrControlMode,
  normalizeLrControl,
  normalizeUpdateMode,
  type RunPlanSizes,
  type UpdateMode,
} from "./settings.ts";
import { setAppendix } from "./skill-doc.ts";
import type { StageContext } from "./stage-context.ts";
import type { StepEnv } from "./stages.ts";
import { type LoopState, LoopStateSchema } from "./state.ts";

export interface TrainDeps {
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

/**
 * What the whole run shares: the step environment (stage context, evaluator, skills by hash, the
 * selection split and its gate order, the lr scheduler, the Gate), the loop state and its commit.
 */
export interface Loop extends StepEnv {
  deps: TrainDeps;
  sizes: RunPlanSizes;
  /** The loop state as last committed (a step works on a copy and replaces it on commit). */
  state: LoopState;
  /** The copy a step is working on, until it commits (what the objective and the usage record read and write). */
  live?: LoopState | undefined;
  /** Wall seconds of the run over all its invocations. */
  elapsed(): number;
  /** Commit a checkpoint with the current loop state; skills no later step can use leave memory. */
  commit(cp: CheckpointContent): void;
}

/** First N items of a split, N = 0 meaning all (spec §2.2 eval batches: file order, no shuffle). */
export function firstN(items: readonly TaskItem[], n: number): TaskItem[] {
  return n > 0 && n < items.length ? items.slice(0, n) : [...items];
}

/**
 * Start a run (the initial skill's selection pass, the noise floor, the gate rule chosen once) or
 * resume it from its last commit; either way the plan event comes first and the gate rule event
 * last.
 */
export async function openLoop(deps: TrainDeps): Promise<Loop> {
  const { cfg, bench, events, clock, recorder } = deps;
  const startedAt = clock.now();
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
  const scheduler = new LrScheduler(
    cfg.optimizer.lr_scheduler,
    cfg.optimizer.learning_rate,
    cfg.optimizer.min_learning_rate,
    sizes.totalSteps,
  );
  events.emit(planEvent(cfg, sizes, gate, mode, lrControl));

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
  const skills = new Map<string, string>();
  const loop: Loop = {
    deps,
    sizes,
    sc,
    ev,
    skills,
    selection,
    scheduler,
    accounting: deps.accounting,
    clock,
    totalSteps: sizes.totalSteps,
    pairedOrder,
    // Replaced once the rule is known (a fresh run chooses it after the noise floor).
    gate: makeGate("strict", gate.sequential),
    state: undefined as unknown as LoopState,
    elapsed: () => elapsedBefore + (clock.now() - startedAt) / 1000,
    commit(cp) {
      const state = loop.state;
      state.elapsedS = Math.round(loop.elapsed() * 10) / 10;
      // The recorder serializes (or copies) what it keeps before commit returns: no clone here.
      recorder.commit({ ...cp, state });
      // What a later step can still use stays in memory; everything else is in the store.
      const live = new Set([
        state.current.hash,
        state.best.hash,
        state.baseline.hash,
        ...Object.values(state.epochStart),
        ...(state.pool?.entries.map((e) => e.hash) ?? []),
      ]);
      ev.retain(live);
      for (const h of skills.keys()) if (!live.has(h)) skills.delete(h);
    },
  };

  // What each selection rollout cost deployed goes into the state the run is working on (the
  // baseline pass, before there is one, is recorded from its results in startFresh).
  const selIndex = new Map(selection.map((it, i) => [it.id, i] as const));
  ev.onMeasured = (hash, id, cost) => {
    const i = selIndex.get(id);
    const target = loop.live ?? (loop.state as LoopState | undefined);
    if (i !== undefined && target) rememberUsage(target, hash, i, selection.length, cost);
  };

  if (resumed && stored?.success) {
    loop.state = stored.output;
    // A budget stop ends one invocation, not the run: a resume with a higher cap continues.
    delete loop.state.stopped;
    delete loop.state.stopCondition;
    for (const [h, t] of Object.entries(resumed.skills)) skills.set(h, t);
    scheduler.current = loop.state.schedulerStep;
    events.emit({
      type: "resume",
      step: loop.state.lastStep,
      current: loop.state.current.score,
      best: loop.state.best.score,
      origin: loop.state.current.origin,
    });
  } else await startFresh(loop);

  // The rule is chosen once (startFresh); a run stored before the choice existed was decided by
  // its configured rule (strict under auto).
  const configured = gate.configured === "auto" ? "strict" : gate.configured;
  loop.gate = makeGate(loop.state.gateRule?.rule ?? configured, gate.sequential);
  if (gate.useGate)
    events.emit({
      type: "gate_rule",
      rule: loop.gate.rule,
      configured: gate.configured,
      why: loop.state.gateRule?.why ?? "configured",
    });
  return loop;
}

/** The run's plan, the first event of every invocation. */
function planEvent(
  cfg: EngineConfig,
  sizes: RunPlanSizes,
  gate: GateSettings,
  mode: UpdateMode,
  lrControl: LrControlMode,
): PlanEvent {
  return {
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
  };
}

/** A fresh run: the initial skill's selection pass (the canary), the noise floor and the gate rule. */
async function startFresh(loop: Loop): Promise<void> {
  const { cfg, initialSkill } = loop.deps;
  const { ev, selection, skills, sc } = loop;
  const gate = sc.gate;
  const emit = (e: Parameters<typeof sc.events.emit>[0]) => sc.events.emit(e);
  let initial = initialSkill;
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
  const usage0 = usageRow(out.results);
  const state: LoopState = {
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
    selItems: { [hash0]: itemScoresOf(out.results) },
    ...(usage0 ? { selUsage: { [hash0]: usage0 } } : {}),
    meta: {},
    epochStart: {},
    counts: { accepted: 0, rejected: 0, rejected_early: 0, skipped: 0 },
    selectionSaved: 0,
    errored: {},
  };
  loop.state = state;
  const newSkills = [{ hash: hash0, text: initial, origin: "initial_skill" }];
  if (cfg.optimizer.use_skill_aware_reflection) {
    // An empty appendix region changes no instruction; the score carries over.
    initial = setAppendix(initial, []);
    const h = skillHash(initial);
    skills.set(h, initial);
    state.current = { ...ref, hash: h };
    state.selCache[h] = { hard, soft };
    rememberItems(state, h, state.selItems![hash0]!);
    if (state.selUsage?.[hash0]) state.selUsage[h] = [...state.selUsage[hash0]];
    newSkills.push({ hash: h, text: initial, origin: "initial_skill+appendix" });
  }
  state.noiseFloor = await noiseFloor(loop, initialSkill, out.results);
  // The rule is chosen once, here: `auto` reads the split size and the noise floor just measured.
  const flipRate = gate.useGate && gate.noiseFloorItems > 0 ? state.noiseFloor?.flip_rate : undefined;
  state.gateRule = { ...ruleFor(gate, selection.length, flipRate), configured: gate.configured };
  loop.commit({
    kind: "baseline",
    step: 0,
    epoch: 0,
    skills: newSkills,
    evaluations: [
      { kind: "baseline", hash: hash0, split: "val", hard, soft, score, evaluated: out.evaluated, total: out.total },
    ],
  });
}

/**
 * The noise floor: the initial skill re-sampled (sample index 1) on the first items of the
 * selection split; an item flips when its two samples score differently. Its calls go through
 * the call cache like every other, so a later run with the same target and benchmark pays
 * nothing for it. Warns when the split is too small to detect the configured minimum effect.
 */
async function noiseFloor(
  loop: Loop,
  skill: string,
  first: readonly RolloutResult[],
): Promise<LoopState["noiseFloor"]> {
  const { ev, selection } = loop;
  const gate = loop.sc.gate;
  const m = Math.min(gate.noiseFloorItems, selection.length);
  if (!gate.useGate || m <= 0) return undefined;
  const out = await ev.run(skill, selection.slice(0, m), "noise floor", undefined, undefined, 1);
  // Only items answered both times count (a missing answer is no flip and no agreement).
  const { compared, flips } = countFlips(gate, first, out.results);
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
  loop.sc.events.emit({ type: "noise_floor", ...nf });
  return nf;
}
