import type { TrainConfig } from "../config/index.ts";
import { ConfigError } from "../lib/index.ts";

/**
 * The part of the training configuration the engine reads (the structured sections with
 * upstream's key names, engine.md §3.2): the loaded config's own types, inferred from its schemas.
 */
export type EngineConfig = Pick<TrainConfig, "model" | "train" | "gradient" | "optimizer" | "evaluation" | "env">;

export type UpdateMode = "patch" | "rewrite_from_suggestions" | "full_rewrite_minibatch";
export type LrControlMode = "fixed" | "autonomous" | "none";

type Optimizer = EngineConfig["optimizer"];

/** What each skill_update_mode spelling the config accepts means (spec §2.7.4). */
const UPDATE_MODES: Record<Optimizer["skill_update_mode"], UpdateMode> = {
  patch: "patch",
  rewrite_from_suggestions: "rewrite_from_suggestions",
  rewrite: "rewrite_from_suggestions",
  suggestions: "rewrite_from_suggestions",
  full_rewrite: "full_rewrite_minibatch",
  full_rewrite_minibatch: "full_rewrite_minibatch",
  minibatch_full_rewrite: "full_rewrite_minibatch",
};

/** What each lr_control_mode spelling the config accepts means (spec §2.1). */
const LR_CONTROL_MODES: Record<Optimizer["lr_control_mode"], LrControlMode> = {
  fixed: "fixed",
  scheduler: "fixed",
  schedule: "fixed",
  autonomous: "autonomous",
  auto: "autonomous",
  llm: "autonomous",
  model: "autonomous",
  none: "none",
  off: "none",
  disabled: "none",
  unlimited: "none",
};

/** The update mode a config spelling names. */
export function normalizeUpdateMode(mode: Optimizer["skill_update_mode"]): UpdateMode {
  return UPDATE_MODES[mode];
}

/** The lr control mode a config spelling names; full-rewrite mode forces `none`. */
export function normalizeLrControl(mode: Optimizer["lr_control_mode"], update: UpdateMode): LrControlMode {
  return update === "full_rewrite_minibatch" ? "none" : LR_CONTROL_MODES[mode];
}

/** Derived sizes of a run (spec §1.14). */
export interface RunPlanSizes {
  trainSize: number;
  stepsPerEpoch: number;
  batchesPerEpoch: number;
  totalSteps: number;
}

/** Validate the loop sizes against the loaded train split. */
export function deriveSizes(cfg: EngineConfig, loadedTrain: number): RunPlanSizes {
  const { batch_size, accumulation, train_size, num_epochs } = cfg.train;
  if (!(batch_size > 0))
    throw new ConfigError(`train.batch_size must be a positive integer (got ${batch_size})`, {
      key: "train.batch_size",
    });
  if (!(accumulation > 0))
    throw new ConfigError(`train.accumulation must be a positive integer (got ${accumulation})`, {
      key: "train.accumulation",
    });
  if (cfg.gradient.merge_batch_size < 2)
    throw new ConfigError(`gradient.merge_batch_size must be at least 2 (got ${cfg.gradient.merge_batch_size})`, {
      key: "gradient.merge_batch_size",
    });
  if (train_size > 0 && loadedTrain > 0 && train_size !== loadedTrain) {
    throw new ConfigError(`train.train_size=${train_size} but the train split has ${loadedTrain} items`, {
      key: "train.train_size",
      hint: "set train.train_size=0 to use the split's size",
    });
  }
  const trainSize = loadedTrain || train_size;
  if (trainSize <= 0)
    throw new ConfigError("the train split is empty and train.train_size is 0", {
      key: "train.train_size",
      hint: "check env.* data settings",
    });
  const stepsPerEpoch = Math.ceil(trainSize / (batch_size * accumulation));
  return {
    trainSize,
    stepsPerEpoch,
    batchesPerEpoch: stepsPerEpoch * accumulation,
    totalSteps: num_epochs * stepsPerEpoch,
  };
}
