import type { TaskItem } from "./ports.ts";
import { seededShuffle } from "./random.ts";
import type { EngineConfig, LrControlMode, RunPlanSizes, UpdateMode } from "./settings.ts";
import { budgetAt } from "./schedule.ts";
import type { BatchSpec } from "./stages.ts";

/**
 * The batches of one epoch (spec §2.2): train shuffled with seed + epoch·1000, cut into chunks of
 * batch_size; an empty chunk (tiny data with accumulation) is refilled from a reshuffle.
 */
export function planEpoch(
  train: readonly TaskItem[],
  cfg: EngineConfig,
  epoch: number,
  sizes: RunPlanSizes,
): BatchSpec[] {
  const { seed, batch_size } = cfg.train;
  const items = seededShuffle(seed + epoch * 1000, train);
  return Array.from({ length: sizes.batchesPerEpoch }, (_, idx) => {
    const batchSeed = seed + epoch * 1000 + idx + 1;
    let chunk = items.slice(idx * batch_size, (idx + 1) * batch_size);
    if (!chunk.length) chunk = seededShuffle(batchSeed, train).slice(0, batch_size);
    return { items: chunk, seed: batchSeed, index: idx };
  });
}

/** Merge calls of the hierarchical merge for P patches with batch size b (spec §2.5). */
export function mergeCallsFor(p: number, b: number): number {
  let calls = 0;
  let n = p;
  const w = Math.max(2, b);
  while (n > 1) {
    const groups = Math.ceil(n / w);
    calls += Math.floor(n / w) + (n % w > 1 ? 1 : 0);
    n = groups;
  }
  return calls;
}

interface CallPlan {
  steps: number;
  budgets: number[];
  /** Upper bounds of calls per role and stage over the whole run (spec §2.17). */
  target: Record<string, number>;
  optimizer: Record<string, number>;
}

/**
 * Predict the calls of a run before it starts. Target rollouts are exact upper bounds (early
 * rejection and the selection cache only lower them); optimizer counts assume every batch has
 * both failures and successes and every merged pool exceeds the budget (worst case).
 */
export function planCalls(
  cfg: EngineConfig,
  sizes: RunPlanSizes,
  trainLen: number,
  selection: number,
  test: number,
  mode: UpdateMode,
  lr: LrControlMode,
): CallPlan {
  const { batch_size, accumulation, num_epochs } = cfg.train;
  const M = cfg.gradient.minibatch_size;
  const target: Record<string, number> = {
    baseline_selection: selection,
    train_rollouts: 0,
    selection: 0,
    slow_update: 0,
    final_test: 0,
  };
  const optimizer: Record<string, number> = {
    analyst: 0,
    merge: 0,
    ranking: 0,
    lr_autonomous: 0,
    rewrite: 0,
    slow_update: 0,
    meta_skill: 0,
  };
  const budgets: number[] = [];
  for (let e = 1; e <= num_epochs; e++) {
    for (let s = 0; s < sizes.stepsPerEpoch; s++) {
      let n = 0;
      for (let a = 0; a < accumulation; a++) {
        const idx = s * accumulation + a;
        const b = Math.min(batch_size, Math.max(0, trainLen - idx * batch_size)) || Math.min(batch_size, trainLen);
        n += b;
        optimizer.analyst! += cfg.gradient.failure_only ? Math.ceil(b / M) : Math.min(Math.ceil(b / M) + 1, b);
      }
      target.train_rollouts! += n;
      target.selection! += selection;
      const analysts =
        accumulation *
        (cfg.gradient.failure_only ? Math.ceil(n / accumulation / M) : Math.ceil(n / accumulation / M) + 1);
      const fp = Math.ceil(analysts / 2);
      optimizer.merge! +=
        mergeCallsFor(fp, cfg.gradient.merge_batch_size) +
        mergeCallsFor(analysts - fp, cfg.gradient.merge_batch_size) +
        (analysts - fp > 0 && fp > 0 ? 1 : 0);
      if (mode !== "full_rewrite_minibatch") optimizer.ranking! += 1;
      if (lr === "autonomous") optimizer.lr_autonomous! += 1;
      if (mode === "rewrite_from_suggestions") optimizer.rewrite! += 1;
      if (mode !== "full_rewrite_minibatch" && lr !== "autonomous") {
        budgets.push(
          budgetAt(
            cfg.optimizer.lr_scheduler,
            cfg.optimizer.learning_rate,
            cfg.optimizer.min_learning_rate,
            sizes.totalSteps,
            budgets.length + 1,
          ),
        );
      }
    }
    if (e >= 2) {
      const k = Math.min(cfg.optimizer.slow_update_samples, trainLen);
      if (cfg.optimizer.use_slow_update || cfg.optimizer.use_meta_skill) target.slow_update! += 2 * k;
      if (cfg.optimizer.use_slow_update) {
        optimizer.slow_update! += 1;
        target.slow_update! += selection;
      }
      if (cfg.optimizer.use_meta_skill) optimizer.meta_skill! += 1;
    }
  }
  if (cfg.evaluation.eval_test) target.final_test = 3 * test;
  return { steps: sizes.totalSteps, budgets, target, optimizer };
}
