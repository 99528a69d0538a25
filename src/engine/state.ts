import * as v from "valibot";
import { AcceptedEvidenceSchema, NoiseFloorSchema } from "./records.ts";

const num = v.number();

/** A skill the loop tracks, by content hash, with its selection scores. */
const SkillRefSchema = v.object({
  hash: v.string(),
  hard: num,
  soft: num,
  /** Gate score on the selection split; always measured for the text behind `hash` (spec §10.1). */
  score: num,
  origin: v.string(),
});

const FailurePatternSchema = v.object({ pattern: v.string(), count: num, task_ids: v.array(v.string()) });
export type FailurePattern = v.InferOutput<typeof FailurePatternSchema>;

/** What the analysts of later steps in the same epoch learn about a step (spec §2.9). */
const StepBufferEntrySchema = v.object({
  step: num,
  action: v.string(),
  n_total: num,
  n_fail: num,
  failure_patterns: v.array(FailurePatternSchema),
  score_before: v.optional(num),
  score_after: v.optional(num),
  /** A compact description of each edit the step did not keep (op/content/target, or title/instruction, …). */
  rejected_edits: v.optional(v.array(v.record(v.string(), v.unknown()))),
  /** Edits of this step that did not apply, with the reason (spec §10.16: tell the optimizer). */
  failed_edits: v.optional(
    v.array(v.object({ op: v.string(), target: v.string(), status: v.string(), reason: v.optional(v.string()) })),
  ),
});
export type StepBufferEntry = v.InferOutput<typeof StepBufferEntrySchema>;

/** An edit listed in the summary of older steps: the step it was last seen in, and its line. */
const SummaryEditSchema = v.object({ step: num, text: v.string() });

/**
 * The epoch's steps older than `optimizer.step_buffer_window`, folded one by one into a summary
 * whose size does not depend on how many there are (spec §2.9 keeps them all; see step-buffer.ts).
 */
const StepBufferSummarySchema = v.object({
  first: num,
  last: num,
  steps: num,
  /** action → steps, in first-seen order. */
  actions: v.record(v.string(), num),
  n_fail: num,
  n_total: num,
  /** Failure patterns in first-seen order, at most a fixed number; `rarer` counts those let go. */
  patterns: v.array(v.object({ pattern: v.string(), count: num, steps: num })),
  rarer: num,
  /** Rejected / unapplied edits, newest first, each listed once; `*_more` counts those let go. */
  rejected: v.array(SummaryEditSchema),
  rejected_more: num,
  failed: v.array(SummaryEditSchema),
  failed_more: num,
});
export type StepBufferSummary = v.InferOutput<typeof StepBufferSummarySchema>;

/** One item's (hard, soft) scores. */
const ItemScoresSchema = v.pipe(v.tuple([num, num]), v.readonly());

/** A candidate in the pool (optimizer.search: pool); its per-item selection scores are in `selItems`. */
const PoolEntrySchema = v.object({
  hash: v.string(),
  origin: v.string(),
  /** The step that admitted it (0 = the baseline). */
  step: num,
  /** The skill it was proposed from; a merge has two. */
  parents: v.array(v.string()),
  hard: num,
  soft: num,
  score: num,
  /** Its deployed size in estimated tokens (skill-format.ts's estimateTokens). */
  tokens: num,
  /** member: admitted by the gate; undecided: the gate could not settle it yet (never a parent or the best). */
  status: v.picklist(["member", "undecided"]),
  /** Extra answer samples an undecided entry's re-decisions have added. */
  samples: v.optional(num),
  /** Candidates proposed from it the gate turned down since its record last grew (pool-step.ts). */
  stalled: v.optional(num),
  /** Fresh answer samples averaged into its per-item record besides the one it was admitted on. */
  resampled: v.optional(num),
});
export type PoolEntry = v.InferOutput<typeof PoolEntrySchema>;

/**
 * One decision about the pool: a step's candidate, a merge, the re-decision of an undecided entry, a
 * slow update, a member's resample or a shortened member.
 */
const PoolEventSchema = v.object({
  step: num,
  kind: v.picklist(["step", "merge", "redecide", "slow_update", "resample", "shorten"]),
  parents: v.array(v.string()),
  hash: v.optional(v.string()),
  verdict: v.string(),
});

const PoolStateSchema = v.object({
  entries: v.array(PoolEntrySchema),
  /** hash → the skill it was proposed from, for every candidate ever admitted (merges find a common ancestor here). */
  lineage: v.record(v.string(), v.string()),
  /** Pairs whose merge was tried ("a+b", sorted), so none is paid twice. */
  merged: v.array(v.string()),
  /** Members the optimizer was asked to shorten, so none is paid twice (absent in pools saved before). */
  shortened: v.optional(v.array(v.string())),
  log: v.array(PoolEventSchema),
});
export type PoolState = v.InferOutput<typeof PoolStateSchema>;

/**
 * Everything the loop needs to continue exactly where it stopped. It is committed with every
 * checkpoint, so a resumed run makes the same decisions as an uninterrupted one (spec §10.4).
 * The store keeps it as JSON; a resume parses it with this schema.
 */
export const LoopStateSchema = v.object({
  version: v.literal(1),
  /** Last committed global step (0 = only the baseline is done). */
  lastStep: num,
  /** Last epoch whose boundary (slow update, meta skill) is committed. */
  boundaryEpoch: num,
  finished: v.boolean(),
  current: SkillRefSchema,
  best: v.object({ ...SkillRefSchema.entries, step: num }),
  baseline: SkillRefSchema,
  schedulerStep: num,
  bufferEpoch: num,
  /** The epoch's last steps in full (at most optimizer.step_buffer_window of them). */
  stepBuffer: v.array(StepBufferEntrySchema),
  /** The epoch's older steps, summarised (absent while they all fit the window). */
  stepBufferOlder: v.optional(StepBufferSummarySchema),
  /** hash → selection scores of every fully evaluated skill. */
  selCache: v.record(v.string(), v.object({ hard: num, soft: num })),
  /** epoch → meta-skill memory written at the end of that epoch. */
  meta: v.record(v.string(), v.string()),
  /** epoch → hash of the current skill when the epoch started. */
  epochStart: v.record(v.string(), v.string()),
  counts: v.object({
    accepted: num,
    rejected: num,
    rejected_early: num,
    skipped: num,
    /** Paired gate: decisions the selection split could not settle (the current skill stayed). */
    undecided: v.optional(num),
  }),
  /** Selection rollouts not run thanks to early rejection. */
  selectionSaved: num,
  /** Hashes of candidates the strict gate rejected early (a full evaluation would have cached their scores). */
  earlyRejected: v.optional(v.array(v.string())),
  /** Items that got no answer per stage (rollout, test, slow_update) over the run; never scored. Runs stored before they were counted have none. */
  errored: v.optional(v.record(v.string(), num), {}),
  /** hash → per-item (hard, soft) selection scores by selection index (paired gate and gate records). */
  selItems: v.optional(v.record(v.string(), v.array(v.nullable(ItemScoresSchema)))),
  /**
   * hash → what each selection item cost the target when the skill was deployed (prompt +
   * completion tokens, dollars or null), by selection index; absent where the target reported
   * no usage. The objective's deployed cost per task is read from it (deployed.ts).
   */
  selUsage: v.optional(v.record(v.string(), v.array(v.nullable(v.tuple([num, v.nullable(num)]))))),
  noiseFloor: v.optional(NoiseFloorSchema),
  /** The rule deciding the run, chosen once after the noise floor (`auto` says why). */
  gateRule: v.optional(
    v.object({ rule: v.picklist(["strict", "paired", "posterior"]), configured: v.string(), why: v.string() }),
  ),
  /** Observed mean differences of the step candidates decided so far (the posterior rule's prior). */
  gateHistory: v.optional(v.array(num)),
  /** The evidence behind each accepted candidate (summary.json's accepted_evidence). */
  acceptedEvidence: v.optional(v.array(AcceptedEvidenceSchema)),
  /** Why this invocation stopped early (budget or a stop condition); cleared on resume. */
  stopped: v.optional(v.string()),
  /** Which stop condition (train.max_wall_seconds, train.patience, train.target_score) stopped it; absent for a budget stop. */
  stopCondition: v.optional(v.picklist(["wall_time", "patience", "target_score"])),
  /** The candidate pool (optimizer.search: pool); absent on single-candidate runs. */
  pool: v.optional(PoolStateSchema),
  /** Wall seconds of the run over all its invocations, at the last commit. */
  elapsedS: v.optional(num),
});
export type LoopState = v.InferOutput<typeof LoopStateSchema>;
