/**
 * Public surface of SkillOpt-Sleep for other modules (dashboard, report). The trust rule for a
 * staged night's files lives in adopt/guard.ts; everything that reads or writes a live file a
 * night names goes through it.
 */
export { checkLivePath, type NightScope, openLiveFileForRead, readLive, trustNight } from "./adopt/guard.ts";
export { readRegularFile } from "./adopt/read.ts";
export { adoptNight, pendingLegacy, pendingSkills, type Selection } from "./adopt/adopt.ts";
export { hasJournal, recoverJournal } from "./adopt/journal.ts";
export { readJsonFile } from "./adopt/read.ts";
export { hasReceipts, rollbackNight } from "./adopt/rollback.ts";
export { type HandoffBackend, handoffPin, PendingCallsError, writeHandoffPin } from "./backend/handoff.ts";
export { createSleepBackend } from "./backend/index.ts";
export { configurePromptOverrides } from "./backend/prompt-overrides.ts";
export {
  expandUserPath,
  loadSleepConfig,
  resolveClaudeHome,
  resolveMemoryPaths,
  resolveProject,
  resolveSkillPath,
  resolveStateDir,
  sessionLimit,
  sleepConfigSchema,
  splitFractions,
  type LoadedSleepConfig,
  type SleepConfig,
  type SleepConfigLayer,
} from "./config.ts";
export { runNight, type HarvestPort, type NightOutcome } from "./cycle.ts";
export type { NightEvent } from "./night-events.ts";
export { colorizePatch, diffNight, plainPatch } from "./diff.ts";
export {
  SOURCE_NAMES,
  harvest,
  type HarvestOptions,
  type HarvestProgress,
  type HarvestResult,
  type SourceName,
} from "./harvest/index.ts";
export { nightEvidence, renderCards, type LessonCard } from "./lessons.ts";
export { ManifestSchema, legacyRows, type Manifest } from "./manifest.ts";
export { loadTasksFile, mine, tasksPayload, writeTasksFile } from "./mine/index.ts";
export type { ConnectModels, SessionState } from "./ports.ts";
export { sanitizeLine, type SleepReport } from "./report.ts";
export {
  cronLine,
  readCrontab,
  scheduleEnv,
  scheduleWindows,
  unscheduleWindows,
  updateCrontab,
  writeCrontab,
  type ScheduleSpec,
} from "./scheduler.ts";
export { skillRoots } from "./skills.ts";
export { latestStaging, listNights, resolveNight } from "./stage.ts";
export type { EditRecord, GateTrial, TaskRecord } from "./types.ts";
export { tightenStateDir } from "./private-state.ts";
