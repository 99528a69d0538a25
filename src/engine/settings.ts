import { ConfigError } from "../lib/index.ts";

/**
 * The part of the training configuration the engine reads (the structured sections with
 * upstream's key names, engine.md §3.2). The CLI passes the loaded TrainConfig, which has these.
 */
export interface EngineConfig {
  model: {
    optimizer: string;
    target: string;
    reasoning_effort: string;
    rewrite_reasoning_effort: string;
    rewrite_max_completion_tokens: number;
  };
  train: { num_epochs: number; train_size: number; batch_size: number; accumulation: number; seed: number };
  gradient: { minibatch_size: number; merge_batch_size: number; analyst_workers: number; failure_only: boolean };
  optimizer: {
    learning_rate: number;
    min_learning_rate: number;
    lr_scheduler: string;
    lr_control_mode: string;
    skill_update_mode: string;
    use_slow_update: boolean;
    slow_update_samples: number;
    slow_update_gate_with_selection: boolean;
    longitudinal_pair_policy: string;
    use_meta_skill: boolean;
    use_skill_aware_reflection: boolean;
    skill_aware_appendix_source: string;
    skill_aware_consolidate_threshold: number;
    max_skill_tokens: number | null;
  };
  evaluation: {
    use_gate: boolean;
    gate_metric: string;
    gate_mixed_weight: number;
    use_semantic_density: boolean;
    semantic_density_weight: number;
    leading_words: string[] | string | null;
    sel_env_num: number;
    test_env_num: number;
    eval_test: boolean;
    early_reject: boolean;
    gate_rule?: string;
    gate_confidence?: number;
    gate_min_effect?: number;
    gate_max_regressions?: number | null;
    noise_floor_items?: number;
  };
  env: { name: string; workers: number | null; max_completion_tokens: number };
}

export type UpdateMode = "patch" | "rewrite_from_suggestions" | "full_rewrite_minibatch";
export type LrControlMode = "fixed" | "autonomous" | "none";

/** Update-mode aliases (spec §2.7.4); unknown → patch. */
export function normalizeUpdateMode(mode: string): UpdateMode {
  const m = mode.trim().toLowerCase();
  if (["rewrite", "rewrite_from_suggestions", "suggestions", "rewrite_suggestions"].includes(m)) return "rewrite_from_suggestions";
  if (["full_rewrite", "full_rewrite_minibatch", "minibatch_full_rewrite", "skill_rewrite_minibatch"].includes(m)) return "full_rewrite_minibatch";
  return "patch";
}

/** lr_control_mode aliases (spec §2.1); full-rewrite mode forces `none`. */
export function normalizeLrControl(mode: string, update: UpdateMode): LrControlMode {
  if (update === "full_rewrite_minibatch") return "none";
  const m = mode.trim().toLowerCase();
  if (["fixed", "manual", "scheduler", "scheduled", "schedule"].includes(m)) return "fixed";
  if (["autonomous", "auto", "optimizer", "llm", "model"].includes(m)) return "autonomous";
  if (["none", "off", "no_lr", "disabled", "unlimited"].includes(m)) return "none";
  throw new ConfigError(`optimizer.lr_control_mode: unknown value "${mode}" (use fixed, autonomous or none)`);
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
  if (!(batch_size > 0)) throw new ConfigError(`train.batch_size must be a positive integer (got ${batch_size})`);
  if (!(accumulation > 0)) throw new ConfigError(`train.accumulation must be a positive integer (got ${accumulation})`);
  if (cfg.gradient.merge_batch_size < 2) throw new ConfigError(`gradient.merge_batch_size must be at least 2 (got ${cfg.gradient.merge_batch_size})`);
  if (train_size > 0 && loadedTrain > 0 && train_size !== loadedTrain) {
    throw new ConfigError(`train.train_size=${train_size} but the train split has ${loadedTrain} items`, {
      hint: "set train.train_size=0 to use the split's size",
    });
  }
  const trainSize = loadedTrain || train_size;
  if (trainSize <= 0) throw new ConfigError("the train split is empty and train.train_size is 0", { hint: "check env.* data settings" });
  const stepsPerEpoch = Math.ceil(trainSize / (batch_size * accumulation));
  return { trainSize, stepsPerEpoch, batchesPerEpoch: stepsPerEpoch * accumulation, totalSteps: num_epochs * stepsPerEpoch };
}
