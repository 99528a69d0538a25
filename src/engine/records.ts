import * as v from "valibot";
import { BACKEND_ERROR_KINDS } from "../lib/index.ts";
import type { EditReportRow } from "./edits.ts";
import type { Patch } from "./schemas.ts";

/*
 * The records a training run produces: one step record per step, one boundary record per epoch
 * boundary, and the summary at the end. The engine builds them (their types are inferred from
 * these schemas), src/run writes them to the run folder, and every reader (report, dashboard,
 * `skillopt runs`) parses them with these schemas. Disk format: snake_case keys, a version tag.
 */

export const STEP_RECORD_SCHEMA = "skillopt.step/1";
export const SUMMARY_SCHEMA = "skillopt.summary/1";
export const WARNING_RECORD_SCHEMA = "skillopt.warning/1";

const num = v.number();
const optNum = v.optional(num);
const counts = v.record(v.string(), num);

/**
 * Why a candidate breaks the skill format (engine/skill-format.ts decides; report words it): the
 * SKILL.md frontmatter is missing or unclosed, has no `name` or `description`, the description is
 * longer than `max` characters, or the body is about `tokens` tokens, over optimizer.max_skill_tokens (`max`).
 */
const FormatViolationSchema = v.variant("kind", [
  v.object({ kind: v.literal("frontmatter_missing") }),
  v.object({ kind: v.literal("no_name") }),
  v.object({ kind: v.literal("no_description") }),
  v.object({ kind: v.literal("description_too_long"), chars: num, max: num }),
  v.object({ kind: v.literal("too_many_tokens"), tokens: num, max: num }),
  /** The candidate changes a part the benchmark may not train (Benchmark.editScope); `scope` names the part. */
  v.object({ kind: v.literal("out_of_scope"), scope: v.string() }),
  /** A file of a skill package over optimizer.max_file_tokens, the package over optimizer.max_package_tokens. */
  v.object({ kind: v.literal("file_too_large"), file: v.string(), tokens: num, max: num }),
  v.object({ kind: v.literal("package_too_large"), tokens: num, max: num }),
  /** A package file that may not be so: a bad new path, a carried file changed, a file dropped. */
  v.object({ kind: v.literal("bad_file"), file: v.string(), reason: v.string() }),
]);
export type FormatViolation = v.InferOutput<typeof FormatViolationSchema>;

/** The paired gate's (or the strict gate's paired view of its) decision on one candidate. */
export const GateDecisionSchema = v.object({
  rule: v.picklist(["strict", "paired", "posterior"]),
  verdict: v.picklist(["accept", "reject", "undecided"]),
  reason: v.picklist([
    "better",
    "dominates",
    "not_better",
    "below_min_effect",
    "cannot_reach",
    "futile",
    "regressions",
    "end_of_split",
  ]),
  /** Mean difference candidate − current over the items used. */
  delta: num,
  /** Always-valid confidence bounds for the mean difference (each one-sided at `confidence`). */
  ci: v.tuple([num, num]),
  confidence: num,
  min_effect: num,
  n_used: num,
  n_total: num,
  /** Items the candidate scores higher than the current (gained) and lower (lost). */
  flips: v.object({ gained: num, lost: num }),
  /** Under the strict rule: what the paired test says on the same evidence. */
  paired_verdict: v.optional(v.picklist(["accept", "reject", "undecided"])),
  /** Posterior rule: the posterior probability of a gain, and the prior mean it started from. */
  prob_gain: v.optional(num),
  prior_mean: v.optional(num),
  /** An accept whose always-valid lower bound is not above 0: the paired test would not have made it. */
  low_evidence: v.optional(v.boolean()),
});

const StageCallsSchema = v.object({
  calls: num,
  cached: num,
  prompt_tokens: num,
  completion_tokens: num,
  cost_usd: v.optional(v.nullable(num)),
  dropped: optNum,
});

/** Model calls of a step (or of the whole run), with structured results dropped per stage. */
const CallsSchema = v.object({
  total: num,
  cached: num,
  dropped: v.optional(counts),
  by_stage: v.record(v.string(), StageCallsSchema),
});
export type CallsRecord = v.InferOutput<typeof CallsSchema>;

/** The optimizer's learning-rate decision under lr_control_mode autonomous, as recorded. */
const LrDecisionRecordSchema = v.object({
  learning_rate: num,
  raw_learning_rate: v.unknown(),
  available_update_items: num,
  clamped: v.boolean(),
  fallback: v.boolean(),
  reasoning: v.string(),
  confidence: v.string(),
  risk_notes: v.array(v.string()),
});

export type LrDecision = v.InferOutput<typeof LrDecisionRecordSchema>;

const ApplySummarySchema = v.object({ total: num, applied: num, skipped: num, errors: num });

/** An edit of a step that did not apply as written, with the reason. */
const FailedEditSchema = v.object({
  op: v.string(),
  target: v.string(),
  status: v.string(),
  reason: v.optional(v.string()),
});

/** What the selection gate did with a candidate (a step's or an epoch boundary's). */
const GATE_ACTIONS = ["reject_early", "reject", "undecided", "accept", "accept_new_best", "force_accept"] as const;

/** What a step did with its candidate. */
const STEP_ACTIONS = [
  "skip_no_patches",
  "skip_no_rewrite",
  "skip_no_change",
  "reject_format",
  ...GATE_ACTIONS,
] as const;
export type StepAction = (typeof STEP_ACTIONS)[number];

const STEP_OUTCOMES = ["accepted", "rejected", "rejected_early", "skipped", "undecided"] as const;
export type StepOutcomeName = (typeof STEP_OUTCOMES)[number];

/**
 * One line of history.jsonl (and one row of the store's steps table). Records written before the
 * version tag existed have the same shape without `schema` and without the fields added since
 * (`rollout_errored`, `errored`); they are read as version 1.
 */
export const StepRecordSchema = v.object({
  schema: v.optional(v.literal(STEP_RECORD_SCHEMA), STEP_RECORD_SCHEMA),
  step: num,
  epoch: num,
  step_in_epoch: num,
  // ① rollout
  rollout_hard: num,
  rollout_soft: num,
  rollout_n: num,
  rollout_errored: optNum,
  accumulation_batches: v.array(
    v.object({
      batch_idx: num,
      batch_seed: num,
      n_envs: num,
      hard: num,
      soft: num,
      n_failure_patches: num,
      n_success_patches: num,
    }),
  ),
  // ② reflect
  n_patches: num,
  n_failure_patches: num,
  n_success_patches: num,
  // ③ aggregate, ④ select
  n_edits_merged: optNum,
  n_edits_ranked: optNum,
  edit_budget: v.optional(v.nullable(num)),
  learning_rate: v.optional(v.nullable(num)),
  lr_control_mode: v.optional(v.picklist(["fixed", "autonomous", "none"])),
  lr_decision: v.optional(LrDecisionRecordSchema),
  support_counts: v.optional(v.array(num)),
  // ⑤ update
  edit_apply_summary: v.optional(ApplySummarySchema),
  edits_failed: v.optional(v.array(FailedEditSchema)),
  edits_applied: optNum,
  rewrite_change_summary: v.optional(v.array(v.string())),
  n_execution_lapse_notes: optNum,
  n_appendix_notes_added: optNum,
  n_appendix_notes_total: optNum,
  n_appendix_notes_consolidated: optNum,
  candidate_hash: v.optional(v.string()),
  candidate_skill_len: optNum,
  /** Why the candidate broke the skill format (runs before the typed form recorded it in words). */
  format_violation: v.optional(v.union([FormatViolationSchema, v.string()])),
  // ⑥ evaluate and gate
  gate_metric: v.optional(v.picklist(["hard", "soft", "mixed"])),
  gate: v.optional(GateDecisionSchema),
  selection_evaluated: optNum,
  selection_total: optNum,
  selection_hard: v.optional(v.nullable(num)),
  selection_soft: v.optional(v.nullable(num)),
  selection_cache_hit: v.optional(v.boolean()),
  candidate_gate_score: v.optional(v.nullable(num)),
  /** Paired gate: the candidate's score is an estimate from the items the test used. */
  candidate_score_estimated: v.optional(v.boolean()),
  current_score_before: optNum,
  selection_calls_saved: optNum,
  // the step's result
  action: v.picklist(STEP_ACTIONS),
  outcome: v.picklist(STEP_OUTCOMES),
  current_score: num,
  best_score: num,
  best_step: num,
  current_origin: v.string(),
  best_origin: v.string(),
  current_hash: v.string(),
  skill_len: num,
  timing: counts,
  /** Items that got no answer, per stage; never scored. */
  errored: v.optional(counts, {}),
  errored_items: v.optional(
    v.array(
      v.object({
        id: v.string(),
        reason: v.string(),
        role: v.picklist(["target", "optimizer", "evaluator"]),
        stage: v.string(),
      }),
    ),
  ),
  calls: CallsSchema,
  tokens: v.object({ prompt: num, completion: num }),
  cost_usd: v.nullable(num),
  wall_time_s: num,
});
export type StepRecord = v.InferOutput<typeof StepRecordSchema>;

const BoundaryActionSchema = v.picklist([
  "inject_placeholder",
  "skip_first_epoch",
  "write_meta_skill",
  "no_content",
  ...GATE_ACTIONS,
]);

const PairSide = v.object({ hard: num, soft: num, predicted_answer: v.string(), fail_reason: v.string() });

export type BoundaryAction = v.InferOutput<typeof BoundaryActionSchema>;

/** What an epoch boundary did: the slow update and the meta skill (spec §4.6). */
export const BoundaryRecordSchema = v.object({
  epoch: num,
  step: num,
  pairs: v.optional(v.array(v.object({ id: v.string(), category: v.string(), prev: PairSide, curr: PairSide }))),
  slow_update: v.optional(
    v.object({
      action: BoundaryActionSchema,
      epoch: optNum,
      prev_hard: optNum,
      curr_hard: optNum,
      candidate_hash: v.optional(v.string()),
      slow_update_content: v.optional(v.string()),
      reasoning: v.optional(v.string()),
      selection_hard: optNum,
      selection_soft: optNum,
      gate: v.optional(GateDecisionSchema),
    }),
  ),
  meta_skill: v.optional(
    v.object({
      action: BoundaryActionSchema,
      epoch: optNum,
      meta_skill_content: v.optional(v.string()),
      reasoning: v.optional(v.string()),
    }),
  ),
});
export type BoundaryRecord = v.InferOutput<typeof BoundaryRecordSchema>;

/** The evidence behind one accepted candidate (a step's, or an epoch boundary's gated slow update). */
export const AcceptedEvidenceSchema = v.object({
  step: num,
  origin: v.string(),
  rule: v.string(),
  delta: num,
  ci: v.tuple([num, num]),
  n_used: num,
  n_total: num,
  won: num,
  lost: num,
  low_evidence: v.boolean(),
  prob_gain: v.optional(num),
});

/** The flip rate of the initial skill between two samples (the noise floor, docs/gate.md). */
export const NoiseFloorSchema = v.object({
  items: num,
  flips: num,
  flip_rate: num,
  /** Smallest gain the selection split can detect with 80 % power at the gate's confidence. */
  detectable_gain: num,
  selection_items: num,
  min_effect: num,
  confidence: num,
});
export type NoiseFloor = v.InferOutput<typeof NoiseFloorSchema>;

const score = v.nullable(num);
const byType = v.nullable(v.record(v.string(), v.object({ total: num, hard_acc: num })));
const triple = <T extends v.GenericSchema>(s: T) => v.object({ baseline: s, best: s, final: s });

/**
 * The end-of-run summary (the store's meta and summary.json). Summaries written before the noise
 * floor, the gate rule and the no-answer counts existed lack those fields; they read as version 1
 * with the defaults below. `out` and `backend` are added by the CLI when it writes summary.json.
 */
export const SummarySchema = v.object({
  schema: v.literal(SUMMARY_SCHEMA),
  status: v.picklist(["finished", "stopped"]),
  stopped_reason: v.optional(v.string()),
  benchmark: v.string(),
  gate_metric: v.picklist(["hard", "soft", "mixed"]),
  gate_rule: v.optional(v.picklist(["strict", "paired", "posterior", "off"]), "strict"),
  /** How the rule was chosen: the configured rule (`auto` picks one) and why, in words. */
  gate_choice: v.optional(v.object({ configured: v.string(), why: v.string() })),
  gate_confidence: optNum,
  gate_min_effect: optNum,
  gate_max_regressions: optNum,
  noise_floor: v.optional(v.nullable(NoiseFloorSchema), null),
  baseline: v.object({ selection: score, selection_hard: score, test: score, hash: v.string() }),
  best: v.object({
    selection: score,
    selection_hard: score,
    test: score,
    step: num,
    origin: v.string(),
    hash: v.string(),
  }),
  final: v.object({ selection: score, selection_hard: score, test: score, origin: v.string(), hash: v.string() }),
  steps: num,
  total_steps: num,
  accepted: num,
  rejected: num,
  rejected_early: num,
  skipped: num,
  undecided: v.optional(num, 0),
  /** The evidence behind each accepted candidate, in order (low_evidence: the paired test would not have accepted). */
  accepted_evidence: v.optional(v.array(AcceptedEvidenceSchema)),
  calls: CallsSchema,
  tokens: v.object({ prompt: num, completion: num, total: num }),
  cost_usd: v.nullable(num),
  wall_s: num,
  selection_calls_saved: num,
  errored: v.optional(counts, {}),
  rollouts_reused: v.optional(num, 0),
  selection_items: num,
  test_by_type: triple(byType),
  test_soft: triple(score),
  /** The deployed cost: each skill's size in estimated tokens (skill-format.ts's estimateTokens of the whole document). */
  skill_tokens: v.optional(triple(num)),
  /**
   * The search (optimizer.search) and the objective that chose the best skill: the cost frontier
   * (selection score vs deployed cost, the chosen skill marked) and, under `pool`, the pool.
   */
  search: v.optional(
    v.object({
      mode: v.picklist(["single", "pool"]),
      objective: v.picklist(["score", "weighted"]),
      token_weight: num,
      /**
       * What the objective charged as deployed tokens: `task`, the prompt + completion tokens per
       * selection task measured from the target's usage; `skill`, each skill's estimated size (the
       * target reported no usage). Absent in summaries written before (skill).
       */
      cost_basis: v.optional(v.picklist(["task", "skill"])),
      chosen: v.string(),
      frontier: v.array(
        v.object({
          hash: v.string(),
          origin: v.string(),
          score: num,
          skill_tokens: num,
          /** Mean prompt + completion tokens per selection task with this skill (cost_basis: task). */
          task_tokens: v.optional(num),
          /** Mean dollars per selection task; null when the model's price is unknown (cost_basis: task). */
          task_cost_usd: v.optional(v.nullable(num)),
          objective: num,
          chosen: v.boolean(),
        }),
      ),
      pool: v.optional(
        v.array(
          v.object({
            hash: v.string(),
            origin: v.string(),
            step: num,
            status: v.string(),
            parents: v.array(v.string()),
            score: num,
            skill_tokens: num,
            task_tokens: v.optional(num),
            task_cost_usd: v.optional(v.nullable(num)),
            /** Selection items it is best on (0 when off the per-item frontier). */
            items_best: num,
          }),
        ),
      ),
      merges: v.optional(v.object({ tried: num, accepted: num })),
      /** Shorten calls (objective: weighted) and how many shorter skills joined the pool. */
      shortened: v.optional(v.object({ tried: num, accepted: num })),
      /** Every pool decision in order: a step's candidate, a merge, the re-decision of an undecided entry, a kept slow update, a member's resample. */
      decisions: v.optional(
        v.array(
          v.object({
            step: num,
            kind: v.string(),
            parents: v.array(v.string()),
            hash: v.optional(v.string()),
            verdict: v.string(),
          }),
        ),
      ),
    }),
  ),
  out: v.optional(v.string()),
  backend: v.optional(v.string()),
});
export type Summary = v.InferOutput<typeof SummarySchema>;

/** Where a budget cap was met (lib's BudgetFacts, as a record). */
const BudgetAtSchema = v.variant("kind", [
  v.object({ kind: v.literal("step_boundary") }),
  v.object({ kind: v.literal("call"), stage: v.string() }),
  v.object({ kind: v.literal("batch"), requests: num, worst_usd: v.nullable(num) }),
]);

/**
 * A fault the run survived, or its stop: one kind per `code`, with its facts. The engine emits
 * them as `warning` events; report/stage-text.ts words them.
 * - `merge_fallback`: a merge call at `level` of the `side` group gave no usable answer; its `patches` were concatenated.
 * - `final_merge_fallback`: the final merge gave no usable answer; failure items go first, then success items.
 * - `reask`: `errored` of `total` items of an evaluation (`label`) got no answer (`reason`: the first one's); asked once more.
 * - `optimizer_unusable`: an optimizer answer of `stage` could not be used (`reason`: why, from the model layer).
 * - `optimizer_failed`: an optimizer call of `stage` failed with a call-local backend error (`kind`, `error`).
 * - `budget_stop`: a budget cap (`limit`: calls or dollars) was met, `spent` of `cap`, `at` a step boundary or before a
 *   call; the run stops at its last committed step (resumable).
 * - `stop_condition`: a stop condition of `train:` (`key`, set to `limit`) was met with `value`; the steps end at the
 *   last committed one and the test pass still runs (resumable with a larger limit).
 */
const WarningSchema = v.variant("code", [
  v.object({ code: v.literal("merge_fallback"), side: v.picklist(["failure", "success"]), level: num, patches: num }),
  v.object({ code: v.literal("final_merge_fallback"), failure_items: num, success_items: num }),
  v.object({ code: v.literal("reask"), label: v.string(), errored: num, total: num, reason: v.string() }),
  v.object({ code: v.literal("optimizer_unusable"), stage: v.string(), reason: v.string() }),
  v.object({
    code: v.literal("optimizer_failed"),
    stage: v.string(),
    kind: v.picklist(BACKEND_ERROR_KINDS),
    error: v.string(),
  }),
  v.object({
    code: v.literal("budget_stop"),
    limit: v.picklist(["cost", "calls"]),
    spent: num,
    cap: num,
    at: BudgetAtSchema,
  }),
  v.object({
    code: v.literal("stop_condition"),
    condition: v.picklist(["wall_time", "patience", "target_score"]),
    key: v.string(),
    limit: num,
    value: num,
  }),
]);
export type Warning = v.InferOutput<typeof WarningSchema>;

/** One line of a run folder's warnings.jsonl: a warning with its version tag and when it was given (ISO time). */
export const WarningRecordSchema = v.intersect([
  v.object({ schema: v.literal(WARNING_RECORD_SCHEMA), time: v.string() }),
  WarningSchema,
]);
export type WarningRecord = v.InferOutput<typeof WarningRecordSchema>;

/** Intermediate products of a step, kept with its record in the store and mirrored into the run folder's steps.jsonl. */
export type StepArtifacts = {
  /** Every analyst's patch as it came back. */
  raw_patches?: readonly object[];
  /** The optimizer's merged patch and the items kept by the budget: its own JSON, validated loosely (schemas.ts). */
  merged_patch?: Patch;
  ranked_edits?: Patch;
  edit_apply_report?: readonly EditReportRow[];
  lr_decision?: LrDecision;
};

/** A record that failed its schema: where and why, in one line. */
export function recordIssue(what: string, issues: readonly v.BaseIssue<unknown>[]): string {
  const first = issues[0];
  const path = first ? v.getDotPath(first) : null;
  return `${what} does not match its schema${path ? ` at ${path}` : ""}: ${first?.message ?? "invalid"}`;
}
