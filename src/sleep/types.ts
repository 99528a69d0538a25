import type { GateDecision } from "../engine/index.ts";
import * as v from "valibot";

/** One rule check of a rule judge (spec §5.3). */
const CheckSchema = v.looseObject({
  op: v.string(),
  arg: v.optional(v.unknown(), null),
});
export type Check = v.InferOutput<typeof CheckSchema>;

const Split = v.pipe(
  v.optional(v.string(), "train"),
  v.transform((s) => (s === "replay" || s === "" ? "train" : s === "holdout" ? "val" : s)),
  v.picklist(["train", "val", "test"], "expected split train, val or test"),
);

/** A mined, replayable task (spec §4.1). Unknown keys are ignored on read (forward compatible). */
export const TaskRecordSchema = v.object({
  id: v.pipe(v.string("expected a string id"), v.minLength(1, "id must not be empty")),
  project: v.optional(v.string(), ""),
  intent: v.pipe(v.string("expected a string intent"), v.minLength(1, "intent must not be empty")),
  context_excerpt: v.optional(v.string(), ""),
  system: v.optional(v.string(), ""),
  attempted_solution: v.optional(v.string(), ""),
  outcome: v.optional(v.picklist(["success", "fail", "mixed", "unknown"]), "unknown"),
  reference_kind: v.optional(v.picklist(["exact", "rubric", "rule", "none", "answer"]), "none"),
  reference: v.optional(v.string(), ""),
  judge: v.optional(v.record(v.string(), v.unknown()), () => ({})),
  tags: v.optional(v.array(v.string()), () => []),
  source_sessions: v.optional(v.array(v.string()), () => []),
  split: Split,
  origin: v.optional(v.picklist(["real", "dream"]), "real"),
  derived_from: v.optional(v.string(), ""),
  skill_hint: v.optional(v.string(), ""),
});
export type TaskRecord = v.InferOutput<typeof TaskRecordSchema>;

/** A bounded text edit to the learned block (spec §6.1). */
export interface EditRecord {
  target: "skill" | "memory";
  op: "add" | "delete" | "replace";
  content: string;
  anchor: string;
  rationale: string;
}

/** A scored replay (spec §5.1). */
export interface ReplayResult {
  id: string;
  hard: number;
  soft: number;
  response: string;
  fail_reason: string;
  task_type: string;
  judge_rationale: string;
  tools_called: string[];
  tokens: number;
  latency_ms: number;
  /** Why the replay got no answer (the attempt or the judge's verdict): it is then no score, and stops what depends on it. */
  error?: string;
  /** Which role gave no answer: the target (the attempt) or the optimizer (the judge). */
  error_role?: "target" | "optimizer";
}

/** Per-task change between two replays of the val split (spec §6.5). */
export interface TaskDelta {
  task_id: string;
  tags: string[];
  baseline_score: number | null;
  candidate_score: number | null;
  status: "improved" | "regressed" | "unchanged";
  scores_are_finite: boolean;
}

/** One gate evaluation (spec §6.3). */
export interface GateTrial {
  target: string;
  baseline_score: number;
  candidate_score: number;
  accepted: boolean;
  blocked_by_regression: boolean;
  task_deltas: TaskDelta[];
  /** The gate's decision on the per-task differences (the engine's gate module): Δ, bounds, flips, verdict. */
  gate?: GateDecision;
  /** The edits this trial evaluated (additive). */
  edits?: EditRecord[];
}

/** Gate actions reported for a night. */
export type GateAction =
  | "accept"
  | "accept_new_best"
  | "reject"
  | "reject_unverified"
  | "greedy_applied"
  | "greedy_noop"
  | "budget_exhausted";

/** Outcome of consolidation. */
export interface ConsolidateResult {
  newSkill: string;
  newMemory: string;
  accepted: boolean;
  gateAction: GateAction;
  baseline: number;
  candidate: number;
  applied: EditRecord[];
  rejected: EditRecord[];
  unmatched: EditRecord[];
  gateTrials: GateTrial[];
  holdoutDetail: Array<Record<string, unknown>>;
  holdoutLeaked: boolean;
  reflectRaw: string;
  callError: string;
  notes: string[];
  noEditsReason: string;
  nVal: number;
  nTrain: number;
}
