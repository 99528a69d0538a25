import type { GateDecision } from "./sequential.ts";
import type { EngineConfig, LrControlMode, UpdateMode } from "./settings.ts";
import type {
  BoundaryAction,
  FormatViolation,
  NoiseFloor,
  StepAction,
  StepRecord,
  Summary,
  Warning,
} from "./records.ts";

type Metric = "hard" | "soft" | "mixed";

/** The run's plan as the trainer resolved it (printed once at the start). */
export interface PlanEvent {
  type: "plan";
  epochs: number;
  stepsPerEpoch: number;
  accumulation: number;
  batchSize: number;
  trainSize: number;
  totalSteps: number;
  lrScheduler: EngineConfig["optimizer"]["lr_scheduler"];
  editBudget: number;
  minEditBudget: number;
  updateMode: UpdateMode;
  lrControl: LrControlMode;
  gate: {
    metric: Metric;
    mixedWeight: number;
    useGate: boolean;
    earlyReject: boolean;
    /** The configured rule; `auto` is resolved after the noise floor (the gate_rule event). */
    rule: "strict" | "paired" | "posterior" | "auto";
    confidence: number;
    minEffect: number;
    maxRegressions: number | null;
  };
  /** Slow updates go through the selection gate (else force-accepted, then re-validated). */
  slowUpdateGated: boolean;
}

/**
 * What a step's evaluation decided. `format`: the candidate broke the skill format; `paired`: the
 * verdict of a gate that reads items one by one (the paired test or the posterior rule:
 * `gate.rule`); `early`: the strict gate stopped once the candidate could no longer beat the
 * current skill; `strict`: the strict gate compared means (or the gate is off).
 */
export type DecisionEvent = { type: "decision"; step: number; action: StepAction } & (
  | { rule: "format"; violation: FormatViolation }
  | { rule: "paired"; gate: GateDecision }
  | { rule: "early"; evaluated: number; total: number; current: number }
  | {
      rule: "strict";
      metric: Metric;
      mixedWeight: number;
      score: number;
      hard: number;
      soft: number;
      /** The current and best scores the candidate was compared with. */
      current: number;
      best: number;
      gate: GateDecision;
    }
);

/** A fault the run survives, or a stop (records.ts lists the codes); report/stage-text.ts words it (`warningText`). */
export type WarningEvent = { type: "warning" } & Warning;

/** The stages of a run as structured events; report/console.ts words them. */
export type StageEvent =
  | PlanEvent
  | { type: "resume"; step: number; current: number; best: number; origin: string }
  | { type: "baseline_start"; items: number }
  | { type: "baseline_done"; hard: number; soft: number; metric: Metric; score: number }
  | ({ type: "noise_floor" } & NoiseFloor)
  /** The rule that decides this run, and why (said once, before the first step). */
  | { type: "gate_rule"; rule: "strict" | "paired" | "posterior"; configured: string; why: string }
  | { type: "meta_loaded"; epoch: number; chars: number }
  | { type: "rollout_start"; step: number; items: number; batch: number; batchSeed: number }
  | { type: "rollout_done"; step: number; hard: number; soft: number }
  | {
      type: "reflect_start";
      step: number;
      /** The accumulation batch, when a step has more than one. */
      batch: number | null;
      failures: number;
      failureGroups: number;
      successes: number;
      successGroups: number;
      minibatch: number;
      lr: number;
      workers: number;
    }
  | { type: "reflect_done"; step: number; failurePatches: number; successPatches: number }
  | { type: "skip"; step: number; reason: "no_patches" | "no_rewrite" | "no_change" }
  | { type: "aggregate_start"; step: number; failure: number; success: number; workers: number }
  | {
      type: "aggregate_level";
      side: "failure" | "success";
      level: number;
      patches: number;
      groups: number;
      batchSize: number;
    }
  | { type: "aggregate_done"; step: number; merged: number; unit: "edits" | "items" }
  | {
      type: "select";
      step: number;
      merged: number;
      selected: number;
      unit: "edits" | "suggestions" | "candidates";
      budget: number | null;
      lrControl: LrControlMode;
    }
  | { type: "update"; step: number; before: number; after: number; applied: number | null; total: number | null }
  | {
      type: "evaluate_start";
      step: number;
      items: number;
      paired: boolean;
      cacheHit: { hash: string; hard: number } | null;
    }
  | DecisionEvent
  | { type: "slow_update_placeholder"; epoch: number }
  | { type: "slow_update_start"; epoch: number }
  | { type: "slow_update_pairs"; epoch: number; prevHard: number; currHard: number; pairs: number }
  | { type: "meta_skill"; epoch: number; chars: number | null }
  | {
      type: "slow_update_done";
      epoch: number;
      action: BoundaryAction;
      gate: GateDecision | null;
      current: number;
      best: number;
    }
  | { type: "test_start"; skills: number; items: number };

/** Events the engine emits; the CLI renders them (report/console.ts). The engine never prints. */
export type EngineEvent =
  | StageEvent
  | { type: "progress"; label: string; done: number; total: number }
  | { type: "step_start"; step: number; total: number; epoch: number; stepInEpoch: number }
  | { type: "step_done"; step: number; total: number; record: StepRecord }
  | { type: "epoch_start"; epoch: number; epochs: number }
  | WarningEvent
  | { type: "done"; summary: Summary };

export interface EngineEvents {
  emit(event: EngineEvent): void;
}

/** An event sink that drops everything. */
export const NO_EVENTS: EngineEvents = { emit: () => {} };
