import * as v from "valibot";
import type { StepBufferEntry } from "./step-buffer.ts";

/** A skill the loop tracks, by content hash, with its selection scores. */
export interface SkillRef {
  hash: string;
  hard: number;
  soft: number;
  /** Gate score on the selection split; always measured for the text behind `hash` (spec §10.1). */
  score: number;
  origin: string;
}

export interface LoopCounts {
  accepted: number;
  rejected: number;
  rejected_early: number;
  skipped: number;
  /** Paired gate: decisions the selection split could not settle (the current skill stayed). */
  undecided?: number;
}

/** The flip rate of the initial skill between two samples (the noise floor, docs/gate.md). */
export interface NoiseFloor {
  items: number;
  flips: number;
  flip_rate: number;
  /** Smallest gain the selection split can detect with 80 % power at the gate's confidence. */
  detectable_gain: number;
  selection_items: number;
  min_effect: number;
  confidence: number;
}

/**
 * Everything the loop needs to continue exactly where it stopped. It is committed with every
 * checkpoint, so a resumed run makes the same decisions as an uninterrupted one (spec §10.4).
 */
export interface LoopState {
  version: 1;
  /** Last committed global step (0 = only the baseline is done). */
  lastStep: number;
  /** Last epoch whose boundary (slow update, meta skill) is committed. */
  boundaryEpoch: number;
  finished: boolean;
  current: SkillRef;
  best: SkillRef & { step: number };
  baseline: SkillRef;
  schedulerStep: number;
  bufferEpoch: number;
  stepBuffer: StepBufferEntry[];
  /** hash → selection scores of every fully evaluated skill. */
  selCache: Record<string, { hard: number; soft: number }>;
  /** epoch → meta-skill memory written at the end of that epoch. */
  meta: Record<string, string>;
  /** epoch → hash of the current skill when the epoch started. */
  epochStart: Record<string, string>;
  counts: LoopCounts;
  /** Selection rollouts not run thanks to early rejection. */
  selectionSaved: number;
  /** Items that got no answer per stage (rollout, test, slow_update) over the run; never scored. */
  errored: Record<string, number>;
  /** hash → per-item (hard, soft) selection scores by selection index (paired gate and gate records). */
  selItems?: Record<string, (readonly [number, number] | null)[]>;
  noiseFloor?: NoiseFloor;
  stopped?: string;
}

const RefSchema = v.object({ hash: v.string(), hard: v.number(), soft: v.number(), score: v.number(), origin: v.string() });

/** Validates a stored LoopState (the run store keeps it as JSON). */
export const LoopStateSchema = v.looseObject({
  version: v.literal(1),
  lastStep: v.number(),
  boundaryEpoch: v.number(),
  finished: v.boolean(),
  current: RefSchema,
  best: v.object({ ...RefSchema.entries, step: v.number() }),
  baseline: RefSchema,
  schedulerStep: v.number(),
  bufferEpoch: v.number(),
  stepBuffer: v.array(v.looseObject({ step: v.number(), action: v.string() })),
  selCache: v.record(v.string(), v.object({ hard: v.number(), soft: v.number() })),
  meta: v.record(v.string(), v.string()),
  epochStart: v.record(v.string(), v.string()),
  counts: v.object({ accepted: v.number(), rejected: v.number(), rejected_early: v.number(), skipped: v.number() }),
  selectionSaved: v.number(),
  // Runs stored before errored items were counted have none.
  errored: v.optional(v.record(v.string(), v.number()), {}),
});
