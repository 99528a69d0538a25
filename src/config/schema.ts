import * as v from "valibot";
import {
  bool,
  nonNegInt,
  nullableInt,
  nullableNum,
  nullablePosInt,
  num,
  pick,
  posInt,
  str,
  strList,
} from "./fields.ts";
import { ALFWORLD_KEYS, ALFWORLD_PYTHON_KEYS } from "../benchmarks/alfworld/env-keys.ts";
import { DOCVQA_KEYS } from "../benchmarks/docvqa/env-keys.ts";
import { LMB_KEYS } from "../benchmarks/livemathematicianbench/env-keys.ts";
import { OFFICEQA_KEYS } from "../benchmarks/officeqa/env-keys.ts";
import { SPREADSHEETBENCH_KEYS } from "../benchmarks/spreadsheetbench/env-keys.ts";
import { TASKS_KEYS } from "../benchmarks/tasks/env-keys.ts";
import { TRIGGER_KEYS } from "../benchmarks/trigger/env-keys.ts";
import { CONVENTIONS_KEYS } from "../benchmarks/conventions/env-keys.ts";
import { ModelSchema } from "./schema-model.ts";

export { ModelSchema } from "./schema-model.ts";

/** `train:` — epochs and batches (engine.md §3.2, §1.14). */
const TrainSchema = v.strictObject({
  num_epochs: posInt(4, "Passes over the train split. DL: epochs"),
  train_size: nonNegInt(0, "0 = derive from the train split; > 0 must equal the loaded size"),
  steps_per_epoch: v.optional(
    v.pipe(
      v.nullable(v.pipe(v.number("expected an integer"), v.integer("expected an integer"))),
      v.description(
        "Derived, as upstream: always ⌈train items ÷ (batch_size × accumulation)⌉; a value given here is overwritten",
      ),
    ),
    null,
  ),
  batch_size: posInt(40, "Training items rolled out per step. DL: batch size"),
  accumulation: posInt(1, "Batches per step (their patches are pooled). DL: gradient accumulation"),
  seed: v.optional(
    v.pipe(
      v.number("expected an integer"),
      v.integer("expected an integer"),
      v.description("Master seed of every sampled choice (batches, splits, the simulator). DL: random seed"),
    ),
    42,
  ),
  max_wall_seconds: nullableNum(
    "Stop at the next step boundary once the run has taken this many seconds of wall time, summed over resumes (null = no limit). Resumable",
  ),
  patience: nullablePosInt(
    "Stop once this many steps in a row found no better skill on selection (null = never). DL: early-stopping patience",
  ),
  target_score: v.optional(
    v.pipe(
      v.nullable(
        v.pipe(
          v.number("expected a number from 0 to 1 or null"),
          v.minValue(0, "expected a number from 0 to 1 or null"),
          v.maxValue(1, "expected a number from 0 to 1 or null"),
        ),
      ),
      v.description("Stop once the best skill's selection score reaches this (null = never)"),
    ),
    null,
  ),
});

/** `gradient:` — reflection (engine.md §2.3). */
const GradientSchema = v.strictObject({
  minibatch_size: posInt(8, "Trajectories per analyst call. DL: micro-batch of the backward pass"),
  merge_batch_size: v.optional(
    v.pipe(
      v.number("expected an integer ≥ 2"),
      v.integer("expected an integer ≥ 2"),
      v.minValue(2, "expected an integer ≥ 2"),
      v.description("Patches per merge call. DL: fan-in of the gradient reduction"),
    ),
    8,
  ),
  analyst_workers: posInt(16, "Concurrent analyst and merge calls"),
  failure_only: bool(false, "Reflect on failed trajectories only (skip success analysts). DL: hard-example mining"),
  max_analyst_rounds: v.optional(
    v.pipe(v.unknown(), v.description("Retired upstream option: accepted and ignored with one warning")),
  ),
});

/** `optimizer:` — learning rate, update mode, slow update, meta skill (engine.md §2.6–2.12). */
const OptimizerSchema = v.strictObject({
  learning_rate: posInt(
    4,
    "Max edits per step (edit_budget) and per-analyst cap. DL: learning rate (a step counted in edits, not a scale)",
  ),
  min_learning_rate: posInt(2, "Floor of decaying lr schedules. DL: minimum learning rate"),
  meta_learning_rate: nullablePosInt("Accepted for upstream compatibility; unused"),
  lr_scheduler: pick(
    ["constant", "linear", "cosine", "autonomous"],
    "cosine",
    "How the edit budget changes over steps. DL: LR schedule",
  ),
  lr_control_mode: pick(
    ["fixed", "autonomous", "none", "auto", "llm", "model", "scheduler", "schedule", "off", "disabled", "unlimited"],
    "fixed",
    "fixed (scheduler), autonomous (the optimizer picks the count), none. DL: LR control (autonomous is a learned step size)",
  ),
  skill_update_mode: pick(
    [
      "patch",
      "rewrite_from_suggestions",
      "rewrite",
      "suggestions",
      "full_rewrite",
      "full_rewrite_minibatch",
      "minibatch_full_rewrite",
    ],
    "patch",
    "patch, rewrite_from_suggestions or full_rewrite_minibatch (aliases accepted). DL: patch is the SGD step; a rewrite is a re-initialisation " +
      "guided by the gradient",
  ),
  use_slow_update: bool(true, "Epoch-boundary slow update from longitudinal pairs. DL: slow weights (Lookahead)"),
  slow_update_samples: nonNegInt(20, "Training items sampled for the slow update and meta skill"),
  slow_update_gate_with_selection: bool(false, "Gate the slow-update candidate on the selection split"),
  longitudinal_pair_policy: pick(
    ["mixed", "changed", "unchanged"],
    "mixed",
    "Which longitudinal pairs the slow update sees",
  ),
  use_meta_skill: bool(true, "Optimizer-side memory across epochs. DL: optimizer state (momentum)"),
  use_skill_aware_reflection: bool(false, "Split failures into skill defects and execution lapses"),
  skill_aware_appendix_source: pick(["both", "failure_only"], "both", "Which analysts emit appendix notes"),
  skill_aware_consolidate_threshold: nonNegInt(
    0,
    "Consolidate the appendix when it has more notes than this (0 = off)",
  ),
  step_buffer_window: nullablePosInt(
    "Earlier steps of the epoch shown in full to the analysts, learning rate and rewrite; older ones are summarised in a bounded " +
      "section (null = all in full, as the reference does; upstream's configurations never have more than 10 steps per epoch). " +
      "DL: truncated backpropagation through time",
    16,
  ),
  search: pick(
    ["single", "pool"],
    "single",
    "single: one current skill, each step improves it (the reference); pool: a bounded pool of gated candidates, each step improves a " +
      "parent sampled from the per-item Pareto frontier (docs/search.md). DL: one hill-climber vs a population",
  ),
  pool_size: posInt(
    8,
    "search: pool — the most candidates the pool keeps (the baseline and the objective's best always stay)",
  ),
  merge: bool(
    true,
    "search: pool — after a step, merge two frontier candidates that win different selection items (a line-level three-way merge, " +
      "no model call), gated like any candidate",
  ),
  shorten: bool(
    false,
    "search: pool with evaluation.objective: weighted — ask the optimizer, once per member, to shorten the pool's best (restated and " +
      "empty lines out, no rule changed); the shorter skill joins the pool unless the longer one proves its tokens are worth it",
  ),
  max_skill_tokens: nullablePosInt(
    "Reject candidates whose body exceeds this many tokens (null = no limit). DL: a hard cap on model size",
  ),
  skill_files: pick(
    ["train", "carry"],
    "train",
    "A skill folder's Markdown and text files beside SKILL.md: train = the optimizer may edit them and propose new ones; carry = they " +
      "reach the target unchanged and the optimizer edits SKILL.md only (docs/packages.md)",
  ),
  max_file_tokens: nullablePosInt(
    "Reject candidates with a package file (other than SKILL.md) over this many tokens (null = no limit)",
    8000,
  ),
  max_package_tokens: nullablePosInt(
    "Reject candidates whose whole skill package (SKILL.md and its text files) exceeds this many tokens (null = no limit)",
    40000,
  ),
});

/** `evaluation:` — the gate and final evaluation (engine.md §2.8, §5). */
const EvaluationSchema = v.strictObject({
  use_gate: bool(
    true,
    "false = force-accept every candidate (validation still runs). DL: validation-based checkpoint selection",
  ),
  gate_metric: pick(
    ["hard", "soft", "mixed"],
    "hard",
    "Gate score: hard, soft, or mixed = (1-w)·hard + w·soft. DL: validation metric",
  ),
  gate_mixed_weight: num(0.5, "Soft weight of the mixed gate metric", 0, 1),
  use_semantic_density: bool(false, "Add weight·density to gate scores"),
  semantic_density_weight: num(0.05, "Weight of the semantic-density bonus", 0),
  leading_words: v.optional(v.nullable(strList([], "Leading words for semantic density")), null),
  sel_env_num: nonNegInt(0, "Selection items (first N of val); 0 = all. DL: validation set size"),
  test_env_num: nonNegInt(0, "Test items (first N); 0 = all. DL: held-out test set size"),
  eval_test: bool(true, "Run the final validation, promotion and test evaluation"),
  early_reject: bool(true, "Stop a candidate's selection rollouts once it can no longer beat the current score"),
  gate_rule: pick(
    ["strict", "paired", "posterior", "auto"],
    "strict",
    "strict: candidate mean above current mean (the reference rule); paired: sequential test on per-item differences with accept / reject / " +
      "undecided; posterior: posterior probability of a gain with a prior from the run's history; auto: paired or posterior by the " +
      "selection split's size and noise floor (docs/gate.md)",
  ),
  gate_confidence: num(0.95, "Paired gate: confidence of each decision (1 − false-accept risk)", 0.5, 0.999),
  gate_min_effect: num(
    0.02,
    "Paired gate: the smallest mean gain worth accepting (0.02 = 2 points). DL: min_delta of early stopping",
    0,
    1,
  ),
  gate_max_regressions: nullableInt(
    "No-regression veto: reject a candidate that fails more than this many items the current passes (null = off)",
  ),
  objective: pick(
    ["score", "weighted"],
    "score",
    "Which skill is best: score (the selection score) or weighted (score − token_weight × deployed tokens per task ÷ 1000: the " +
      "target's reported prompt + completion tokens per selection task, or the skill's size where it reports no usage). Decides " +
      "best_skill.md under search: pool; the frontier is reported either way",
  ),
  token_weight: num(
    0.02,
    "objective: weighted — selection-score points given up per 1000 deployed tokens (0.02 = 2 points)",
    0,
  ),
  noise_floor_items: nonNegInt(
    32,
    "Re-sample the initial skill on this many selection items to measure the flip rate (0 = off). DL: measuring seed variance before comparing runs",
  ),
});

/** `env:` — the benchmark and its data; each built-in benchmark's own keys come from its env-keys.ts (src/benchmarks/<name>/). */
export const EnvSchema = v.strictObject({
  name: str("", "Benchmark name (see docs/benchmarks.md)"),
  skill_init: str(
    "",
    "Initial skill: a file, or a skill folder (its SKILL.md is trained, its other files come back in best_skill/). DL: weight initialisation",
  ),
  split_mode: pick(
    ["ratio", "split_dir"],
    "ratio",
    "ratio: split data_path by split_ratio; split_dir: read train/ val/ test/",
  ),
  split_seed: v.optional(
    v.pipe(
      v.number("expected an integer"),
      v.integer("expected an integer"),
      v.description("Seed of the ratio-mode shuffle"),
    ),
    42,
  ),
  split_dir: str("", "Directory holding train/ val/ test/"),
  data_path: str("", "Raw data for ratio mode: a JSON/JSONL file or a directory with exactly one"),
  split_output_dir: str("", "Where ratio mode writes its splits"),
  split_ratio: v.optional(
    v.pipe(
      v.union([v.string(), v.array(v.number())], 'expected a ratio like "2:1:7"'),
      v.transform((x) => (Array.isArray(x) ? x.join(":") : x)),
      v.regex(/^\d+:\d+:\d+$/, 'expected a ratio of three positive integers like "2:1:7"'),
      v.description("train:val:test proportions of ratio mode. DL: train/validation/test split"),
    ),
    "2:1:7",
  ),
  exec_timeout: num(120, "Per-task / per-call timeout in seconds", 0),
  out_root: str("", "Output directory; empty → outputs/<env>_<timestamp>"),
  limit: nonNegInt(0, "Truncate each split to its first N items (debugging)"),
  workers: nullablePosInt("Concurrent rollouts (null → the benchmark's default)"),
  max_completion_tokens: posInt(16384, "Output cap per target call"),
  max_turns: nullablePosInt("Max target turns per task"),
  ...ALFWORLD_KEYS,
  ...DOCVQA_KEYS,
  ...LMB_KEYS,
  ...OFFICEQA_KEYS,
  ...SPREADSHEETBENCH_KEYS,
  python: str("", "Python interpreter for code-executing benchmarks; empty → python3 on PATH"),
  ...ALFWORLD_PYTHON_KEYS,
  judge_model: str("", "Judge model (user tasks with evaluator: judge)"),
  judge_max_completion_tokens: nullablePosInt("Judge output cap"),
  judge_retries: nullablePosInt("Accepted for upstream compatibility"),
  ...TASKS_KEYS,
  ...TRIGGER_KEYS,
  sim_lapse_rate: nullableNum("Simulator: probability that the target ignores the skill"),
  sim_noise_rate: nullableNum("Simulator: probability that the optimizer proposes a wrong or vague rule"),
  sim_temperature: nullableNum(
    "Simulator: stochastic target temperature (0/null = off); answers are draws with exactly known success probability",
  ),
  ...CONVENTIONS_KEYS,
  train_items: nullablePosInt("Generated benchmarks: train items"),
  val_items: nullablePosInt("Generated benchmarks: val items"),
  test_items: nullablePosInt("Generated benchmarks: test items"),
});

/** The whole training/eval configuration (structured form). */
export const TrainConfigSchema = v.strictObject({
  model: v.optional(ModelSchema, {}),
  train: v.optional(TrainSchema, {}),
  gradient: v.optional(GradientSchema, {}),
  optimizer: v.optional(OptimizerSchema, {}),
  evaluation: v.optional(EvaluationSchema, {}),
  env: v.optional(EnvSchema, {}),
});

export type TrainConfig = v.InferOutput<typeof TrainConfigSchema>;

/** Section names of the structured format. */
export const SECTIONS = ["model", "train", "gradient", "optimizer", "evaluation", "env"] as const;
export type Section = (typeof SECTIONS)[number];

/** The object schema of each section, for key lookups and did-you-mean. */
export const SECTION_SCHEMAS = {
  model: ModelSchema,
  train: TrainSchema,
  gradient: GradientSchema,
  optimizer: OptimizerSchema,
  evaluation: EvaluationSchema,
  env: EnvSchema,
} as const;
