import type { WarningRecord } from "../../engine/index.ts";
/** The normalised view of one run that the HTML report and the dashboard render. */

export type StepAction = "accepted" | "rejected" | "rejected_early" | "undecided" | "skipped";

/** A gate decision as the step record gives it (docs/gate.md). */
export interface GateView {
  rule: string;
  verdict: string;
  reason: string;
  delta: number;
  lo: number;
  hi: number;
  confidence: number | null;
  nUsed: number | null;
  nTotal: number | null;
  gained: number | null;
  lost: number | null;
  /** An accept the paired test would not have made on the same items (the posterior or strict rule). */
  lowEvidence?: boolean;
}

export type EditStatus = "applied" | "failed" | "clipped" | "rejected" | "proposed";

/** One edit the optimizer proposed in a step, with what became of it. */
export interface EditView {
  op: string;
  section: string;
  text: string;
  rationale: string;
  status: EditStatus;
  error: string;
}

/** One training step, as the history record gives it. */
export interface StepView {
  step: number;
  epoch: number;
  /** Learning-rate budget: the max number of edits this step could apply. */
  lr: number | null;
  rolloutScore: number | null;
  candidateScore: number | null;
  currentScore: number | null;
  bestScore: number | null;
  action: StepAction;
  /** The action word as recorded (accept_new_best, force_accept, …). */
  rawAction: string;
  /** For rejected_early: "k/V" items evaluated before stopping. */
  earlyAt: string;
  /** The gate's decision: Δ with its bounds, items used, flips, verdict (null for older records). */
  gate: GateView | null;
  editsApplied: number;
  editsFailed: number;
  calls: number;
  tokens: number;
  costUsd: number | null;
  seconds: number | null;
  tokensByStage: Record<string, number>;
  costByStage: Record<string, number>;
  edits: EditView[];
  /** The optimizer's own words on the step's patch (merge and ranking reasoning). */
  reasoning: string[];
  /** Skill the step started from and the candidate it produced, when known. */
  skillBefore: string | null;
  candidate: string | null;
}

interface ScoreTriple {
  selection: number | null;
  test: number | null;
  step: number | null;
}

export interface StageTotals {
  stage: string;
  calls: number;
  cached: number;
  tokens: number;
  costUsd: number | null;
}

/** summary.json's `search`: the cost frontier (the chosen skill marked) and the pool under search: pool. */
export interface SearchView {
  mode: string;
  objective: string;
  tokenWeight: number;
  /** task: `tokens` are prompt + completion tokens per selection task, measured; skill: each skill's estimated size. */
  costBasis: "task" | "skill";
  frontier: {
    hash: string;
    origin: string;
    score: number;
    /** The deployed tokens the objective charged (see costBasis). */
    tokens: number;
    skillTokens: number;
    /** Dollars per task (costBasis task; null when the price is unknown). */
    costUsd?: number | null;
    objective: number;
    chosen: boolean;
  }[];
  pool?: {
    hash: string;
    origin: string;
    step: number;
    status: string;
    parents: string[];
    score: number;
    tokens: number;
    skillTokens: number;
    itemsBest: number;
  }[];
  merges?: { tried: number; accepted: number };
  shortened?: { tried: number; accepted: number };
}

export interface SummaryView {
  baseline: ScoreTriple;
  best: ScoreTriple;
  final: ScoreTriple;
  steps: number;
  accepted: number;
  rejected: number;
  calls: number;
  cachedCalls: number;
  byStage: StageTotals[];
  tokens: number;
  costUsd: number | null;
  wallSeconds: number | null;
  selectionCallsSaved: number | null;
  /** The deployed cost: each skill's size in estimated tokens (summary.json's skill_tokens), when recorded. */
  skillTokens?: { baseline: number; best: number; final: number };
  search?: SearchView;
  /** The gate rule and the measured noise floor (docs/gate.md), when recorded. */
  gateRule: string;
  /** Why `auto` chose the rule, and how many accepts stood on low evidence (runs that record them). */
  gateWhy?: string;
  lowEvidenceAccepts?: number;
  noiseFloor: {
    items: number;
    flips: number;
    flipRate: number;
    detectableGain: number;
    selectionItems: number;
    minEffect: number;
  } | null;
  /** Test accuracy per task type for the baseline, best and final skills. */
  testByType: {
    type: string;
    total: number | null;
    baseline: number | null;
    best: number | null;
    final: number | null;
  }[];
}

/** What happened at an epoch boundary: slow update and meta skill (spec §2.11-2.12). */
export interface BoundaryView {
  epoch: number;
  /** The last step of the epoch. */
  step: number;
  slowAction: string;
  /** Selection score of the slow-update result, when it was evaluated. */
  slowScore: number | null;
  slowReasoning: string;
  slowContent: string;
  metaAction: string;
  metaContent: string;
}

export type { RunStatus } from "../../run/index.ts";
import type { RunStatus } from "../../run/index.ts";

export interface RunView {
  dir: string;
  name: string;
  status: RunStatus;
  benchmark: string;
  optimizerModel: string;
  targetModel: string;
  backend: string;
  startedAt: string;
  /** True when the run used the offline simulator (shown on every page). */
  simulator: boolean;
  steps: StepView[];
  boundaries: BoundaryView[];
  /** Steps the run plans in total, when known (for progress). */
  plannedSteps: number | null;
  epochs: number | null;
  summary: SummaryView | null;
  /** The initial skill's selection score while the run has no summary yet. */
  baselineSelection: number | null;
  initialSkill: string | null;
  bestSkill: string | null;
  finalSkill: string | null;
  configYaml: string;
  /** `skillopt eval`'s eval_summary.json, flattened for display, when the directory has one. */
  evaluation: {
    fields: [string, string][];
    groups: { name: string; total: number | null; score: number | null }[];
  } | null;
  /**
   * Our run's records that do not match their schema (or are not JSON), each naming its file: the
   * run's data is damaged. Shown as errors; the rest still renders.
   */
  errors: string[];
  /** Problems met while reading the run (unreadable step files, a foreign folder's odd record); the rest still renders. */
  warnings: string[];
  /** The faults the run survived and its stops (warnings.jsonl), typed; worded by report's warningText. */
  runWarnings: WarningRecord[];
  /** The run store could not be read (corrupt or half-written); shown on the run's row. */
  storeError: string | null;
  /** Why the run failed or stopped (e.g. an endpoint that gave no answers), when known. */
  failure: string | null;
  /** "waiting on batch <id> (status, n/m done)" while the run's process waits on a provider batch. */
  waiting: string | null;
}
