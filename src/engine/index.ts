export {
  applyEdits,
  applyRuleEdits,
  applyScopedEdits,
  scopeViolation,
  type ApplySummary,
  type Edit,
  type EditReportRow,
} from "./edits.ts";
export {
  type ErroredItem,
  Evaluator,
  MOSTLY_ERRORED,
  meanScores,
  noAnswerError,
  noAnswerReason,
  requireAnswers,
  skillHash,
} from "./evaluate.ts";
export {
  type DecisionEvent,
  type EngineEvent,
  type EngineEvents,
  NO_EVENTS,
  type PlanEvent,
  type StageEvent,
  type WarningEvent,
} from "./events.ts";
export {
  chooseRule,
  decide,
  decideOnItems,
  type Gate,
  type GateMetric,
  type GateRule,
  makeGate,
  type RuleChoice,
  gateScore,
  gateSettings,
  type GateSettings,
  itemScore,
  semanticDensity,
} from "./gate.ts";
export { detectableGain, type GateDecision, PairedSequentialTest, type SequentialSettings } from "./sequential.ts";
export { compareSkills, countFlips, type FlipRow, type SkillComparison } from "./compare.ts";
export type { PromptSet } from "./messages.ts";
export { mergeCallsFor, planCalls, planEpoch } from "./plan.ts";
export type * from "./checkpoint.ts";
export type * from "./ports.ts";
export { seededShuffle } from "./random.ts";
export { budgetAt, LrScheduler, roundHalfEven } from "./schedule.ts";
export {
  deriveSizes,
  type EngineConfig,
  normalizeLrControl,
  normalizeUpdateMode,
  type RunPlanSizes,
  type UpdateMode,
} from "./settings.ts";
export { formatViolation, parseFrontmatter } from "./skill-format.ts";
export { type PackageLimits, packageLimits } from "./package.ts";
export * from "./skill-doc.ts";
export type { LoopState } from "./state.ts";
export { byTaskType } from "./final.ts";
export { firstN } from "./loop.ts";
export { train, type TrainResult } from "./trainer.ts";
export { stopConditionMet } from "./stops.ts";
export { estimateRun } from "./estimate.ts";
export * from "./records.ts";
export { mapLimit } from "./pool.ts";
