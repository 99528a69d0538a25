import type { BoundaryRecord, StepArtifacts, StepRecord, Summary } from "./records.ts";
import type { LoopState } from "./state.ts";

/** A selection or test evaluation done in a checkpoint. */
export interface EvaluationRow {
  kind: string;
  hash: string;
  split: string;
  hard: number;
  soft: number;
  score: number | null;
  evaluated: number;
  total: number;
  action?: string;
}

/** What one checkpoint produced (the trainer adds the loop state when it commits). */
export type CheckpointContent = {
  step: number;
  epoch: number;
  /** Skill texts this checkpoint introduced, by hash. */
  skills: { hash: string; text: string; origin: string }[];
  /** Selection/test evaluations done in this checkpoint. */
  evaluations: EvaluationRow[];
} & (
  | { kind: "baseline" }
  /** A step: its history record and intermediate products (raw patches, merged/ranked patches, edit report, LR decision). */
  | { kind: "step"; record: StepRecord; artifacts: StepArtifacts }
  | { kind: "boundary"; record: BoundaryRecord }
  | { kind: "final"; record: Summary }
);

/** One unit of committed run state: the whole loop state plus what this checkpoint produced. */
export type RunCheckpoint = CheckpointContent & {
  /** The complete loop state after this checkpoint. */
  state: LoopState;
};

/**
 * Persistence of a training run. `commit` is atomic: after it returns the checkpoint survives a
 * kill; before, nothing of it is visible. `resume` returns the last committed state and the
 * texts of every stored skill, or undefined for a fresh run.
 */
export interface RunRecorder {
  /** The file the checkpoints are kept in (state.sqlite), for errors that name it. */
  readonly path?: string;
  resume(): { state: unknown; skills: Record<string, string> } | undefined;
  /**
   * Persist a checkpoint. The engine keeps changing `checkpoint.state` after this returns, so a
   * recorder serializes (or copies) what it keeps before returning.
   */
  commit(checkpoint: RunCheckpoint): void;
}
