import { planCalls } from "./plan.ts";
import type { Splits } from "./ports.ts";
import { deriveSizes, type EngineConfig, normalizeLrControl, normalizeUpdateMode } from "./settings.ts";
import { firstN } from "./loop.ts";

/** Dollars per million tokens of one role's model, or null when its price is unknown. */
interface RolePrice {
  input_per_mtok: number;
  output_per_mtok: number;
}

interface EstimateInput {
  cfg: EngineConfig;
  splits: Splits;
  /** The initial skill's text (its length sizes the assumed prompts). */
  initialSkill: string;
  prices: { optimizer: RolePrice | null; target: RolePrice | null };
  /**
   * model.batch per role and each role's Batch API price: the estimate then gives the cost with
   * the batched stages at that price beside the all-live cost, and the rounds that wait on a batch.
   */
  batch?: {
    modes: Record<"optimizer" | "target", "off" | "eval" | "all">;
    prices: { optimizer: RolePrice | null; target: RolePrice | null };
  };
}

/** Optimizer stages whose prompt holds the epoch's step buffer (spec §2.9; not merge or ranking). */
const BUFFER_STAGES = new Set(["analyst", "lr_autonomous", "rewrite"]);
/**
 * Prompt tokens one step-buffer entry shown in full adds to such a call, and the summary of the
 * older entries once an epoch outgrows `optimizer.step_buffer_window`. Measured on the quickstart
 * on the simulator: an analyst call grew by about 80 tokens per entry shown (1 550 prompt tokens at
 * 4 steps per epoch, 11 600 at 256 with every entry in full), and the summary added about 750
 * (3 600 at 256 steps per epoch with a window of 16). Real models' rejected edits are longer.
 */
const STEP_BUFFER_ENTRY_TOKENS = 100;
const STEP_BUFFER_SUMMARY_TOKENS = 1000;

// Target stages that `model.batch: eval` sends through a batch (evaluations nothing waits on).
const EVAL_STAGES = new Set(["final_test"]);

const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

/**
 * What `skillopt train --dry-run` prints about a run before it starts (a pure function of the
 * config, the loaded splits and the prices): its sizes, the predicted calls per role and stage
 * (upper bounds, from planCalls) and a rough cost from assumed tokens per call.
 */
export function estimateRun({ cfg, splits, initialSkill, prices, batch }: EstimateInput): Record<string, unknown> {
  const sizes = deriveSizes(cfg, splits.train.length);
  const mode = normalizeUpdateMode(cfg.optimizer.skill_update_mode);
  const lr = normalizeLrControl(cfg.optimizer.lr_control_mode, mode);
  const sel = firstN(splits.val, cfg.evaluation.sel_env_num).length;
  const test = firstN(splits.test, cfg.evaluation.test_env_num).length;
  const plan = planCalls(cfg, sizes, splits.train.length, sel, test, mode, lr);
  // Rough token sizes per call (the real figures come from the ledger after the run).
  const skillTok = Math.ceil((initialSkill.length / 4) * 1.5);
  // The analysts', autonomous learning rate's and rewrite's prompts carry the epoch's step buffer
  // (spec §2.9): at step k of an epoch, k entries, of which at most the window in full and the
  // rest as one summary. Averaged over the epoch's steps.
  const buffer = stepBufferShare(sizes.stepsPerEpoch, cfg.optimizer.step_buffer_window);
  const bufferEntries = buffer.entries;
  const bufferTokens = Math.round(
    buffer.entries * STEP_BUFFER_ENTRY_TOKENS + buffer.summarised * STEP_BUFFER_SUMMARY_TOKENS,
  );
  const optimizerPrompt = skillTok + cfg.gradient.minibatch_size * 600;
  const tokens = {
    target: { prompt: skillTok + 300, completion: Math.min(200, cfg.env.max_completion_tokens) },
    optimizer: { prompt: optimizerPrompt, completion: 1500 },
  };
  /** Prompt tokens of one call of a stage: the role's assumed size, plus the step buffer where it goes. */
  const promptOf = (r: "optimizer" | "target", stage: string) =>
    tokens[r].prompt + (r === "optimizer" && BUFFER_STAGES.has(stage) ? bufferTokens : 0);
  const stageCost = (r: "optimizer" | "target", stage: string, p: RolePrice) =>
    (promptOf(r, stage) * p.input_per_mtok + tokens[r].completion * p.output_per_mtok) / 1e6;
  const estimate = (r: "optimizer" | "target") => {
    const p = prices[r];
    if (!p) return null;
    let cost = 0;
    for (const [stage, n] of Object.entries(plan[r])) cost += n * stageCost(r, stage, p);
    return Math.round(cost * 1e4) / 1e4;
  };
  const costT = estimate("target");
  const costO = estimate("optimizer");
  const batched = (r: "optimizer" | "target") => {
    if (!batch) return null;
    const mode = batch.modes[r];
    const live = prices[r];
    const cheap = batch.prices[r];
    if (live === null || cheap === null) return null;
    let cost = 0;
    let calls = 0;
    for (const [stage, n] of Object.entries(plan[r])) {
      const viaBatch = mode === "all" || (mode === "eval" && r === "target" && EVAL_STAGES.has(stage));
      cost += n * stageCost(r, stage, viaBatch ? cheap : live);
      if (viaBatch) calls += n;
    }
    return { cost: Math.round(cost * 1e4) / 1e4, calls };
  };
  const bT = batched("target");
  const bO = batched("optimizer");
  const anyBatch = batch && (batch.modes.target !== "off" || batch.modes.optimizer !== "off");
  // Rounds that wait on a provider batch: the final test under eval; under all, every dependent
  // round of a step (rollouts, analysts, merge, ranking, selection) plus the baseline and the test.
  const rounds = !anyBatch
    ? 0
    : batch.modes.target === "all" || batch.modes.optimizer === "all"
      ? sizes.totalSteps * 5 + 2
      : plan.target.final_test
        ? 1
        : 0;
  const batchEstimate = anyBatch
    ? {
        modes: batch.modes,
        calls_through_batch: (bT?.calls ?? 0) + (bO?.calls ?? 0),
        target: bT?.cost ?? null,
        optimizer: bO?.cost ?? null,
        total: bT === null || bO === null ? null : Math.round((bT.cost + bO.cost) * 1e4) / 1e4,
        rounds_waiting_on_a_batch: rounds,
        wall_note: `each of these ${rounds} round(s) waits for its batch: commonly minutes, at most the providers' 24 h window; the rest of the run \
is as fast as live`,
      }
    : undefined;
  return {
    splits: {
      train: splits.train.length,
      val: splits.val.length,
      test: splits.test.length,
      selection: sel,
      test_items: test,
    },
    epochs: cfg.train.num_epochs,
    steps_per_epoch: sizes.stepsPerEpoch,
    total_steps: sizes.totalSteps,
    batch_size: cfg.train.batch_size,
    update_mode: mode,
    lr_control_mode: lr,
    edit_budgets: plan.budgets,
    predicted_calls: {
      target: { ...plan.target, total: sum(plan.target) },
      optimizer: { ...plan.optimizer, total: sum(plan.optimizer) },
    },
    prices_per_mtok: prices,
    estimated_cost_usd: {
      target: costT,
      optimizer: costO,
      total: costT === null || costO === null ? null : Math.round((costT + costO) * 1e4) / 1e4,
      assumes_tokens_per_call: tokens,
      assumes_step_buffer: {
        stages: [...BUFFER_STAGES],
        mean_entries: bufferEntries,
        tokens_per_entry: STEP_BUFFER_ENTRY_TOKENS,
        window: cfg.optimizer.step_buffer_window,
        share_with_summary: buffer.summarised,
        tokens_per_summary: STEP_BUFFER_SUMMARY_TOKENS,
        extra_prompt_tokens_per_call: bufferTokens,
      },
      ...(batchEstimate ? { with_batch: batchEstimate } : {}),
    },
    note:
      "Calls are upper bounds: the selection cache and early rejection lower target calls; optimizer counts assume both failures and successes " +
      "in every batch. The cost is a rough estimate from assumed tokens per call, the analysts' growing with the epoch's step buffer " +
      "(null where a price is unknown); the run reports the real cost.",
  };
}

/**
 * Over the steps of an epoch, the mean number of step-buffer entries shown in full and the share
 * of steps whose prompt also holds the summary of older ones (step k sees k earlier entries).
 */
function stepBufferShare(stepsPerEpoch: number, window: number | null): { entries: number; summarised: number } {
  const n = Math.max(0, Math.floor(stepsPerEpoch));
  if (!n) return { entries: 0, summarised: 0 };
  let entries = 0;
  let summarised = 0;
  for (let k = 0; k < n; k++) {
    entries += window === null ? k : Math.min(k, window);
    if (window !== null && k > window) summarised += 1;
  }
  return { entries: entries / n, summarised: summarised / n };
}
