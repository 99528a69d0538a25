/**
 * Public surface of SkillOpt-Sleep for other modules (dashboard, report). The trust rule for a
 * staged night's files lives in adopt/guard.ts; everything that reads or writes a live file a
 * night names goes through it.
 */
export { checkLivePath, type NightScope, openLiveFileForRead, readLive, trustNight } from "./adopt/guard.ts";
export { readRegularFile } from "./adopt/read.ts";
