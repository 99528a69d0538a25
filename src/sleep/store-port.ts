import type { LedgerEntry } from "./budget.ts";
import type { EditRecord, GateTrial, TaskRecord } from "./types.ts";

/** One row of the nights table. */
export interface NightRow {
  night: number;
  project: string;
  /** "interrupted": its process was killed after it staged a proposal (found so by a later night). */
  status: "running" | "completed" | "no_tasks" | "failed" | "rejected" | "interrupted";
  started_ms: number;
  ended_ms: number | null;
  staging_dir: string;
  accepted: boolean;
  gate_action: string;
  baseline: number | null;
  candidate: number | null;
  n_tasks: number;
  n_sessions: number;
  model_key: string;
}

/** Why an edit was recorded. */
export type EditStatus = "accepted" | "rejected" | "unmatched" | "human_rejected";

/** An adoption recorded for status, rollback and history. */
export interface AdoptionRow {
  id: number;
  night_dir: string;
  mode: "legacy" | "skills";
  adopted_ms: number;
  receipts_json: string;
  rolled_back_ms: number | null;
}

/**
 * Sleep's persistent state (implemented over the sqlite file in `<state_dir>` by src/store/sleep.ts).
 * `beginNight` allocates the night number inside a write transaction, so two concurrent runs never
 * share one (§12.1 #27). Every method commits before it returns.
 */
export interface SleepStore {
  /** Number the next night would get, without allocating it (dry-run), once the nights `forgotten` are. */
  peekNight(forgotten?: readonly number[]): number;
  /** Allocate the next night, run by this process. */
  beginNight(project: string, startedMs: number, modelKey: string): number;
  /** Record the folder a running night is about to create (before it exists, so a kill never leaves it unknown). */
  setNightDir(night: number, dir: string): void;
  /**
   * Nights still 'running' whose process is gone (`alive` says no): killed mid-night. Nights of
   * this process, of another host (a state directory shared between machines), and of versions
   * that did not record the process are never returned. A folder another night also names is not
   * returned as theirs (staging_dir "").
   */
  deadNights(alive: (pid: number) => boolean): NightRow[];
  /** Mark a dead night that had staged its proposal (it stays in the history, its folder adoptable). */
  interruptNight(night: number): void;
  /** Forget a night that never ran to the end (a handoff round waiting for answers, a killed night). */
  abandonNight(night: number): void;
  finishNight(row: Omit<NightRow, "started_ms" | "model_key" | "project">): void;
  getNight(night: number): NightRow | undefined;
  nightByDir(dir: string): NightRow | undefined;
  history(limit: number): NightRow[];
  nightsCount(): number;
  /** Start time (UTC ms) of the project's last completed harvest; undefined before the first. */
  lastHarvestMs(project: string): number | undefined;
  setLastHarvestMs(project: string, ms: number): void;
  lastModelKey(): string | undefined;
  setLastModelKey(key: string): void;
  archiveTasks(night: number, tasks: readonly TaskRecord[]): void;
  /** Archived real tasks of a project, newest first. */
  archivedTasks(project: string, limit: number): TaskRecord[];
  recordEdits(night: number, edits: ReadonlyArray<{ edit: EditRecord; status: EditStatus; reason: string }>): void;
  /** Edit texts rejected by the gate or by a human, for the optimizer to avoid (newest first). */
  rejectedEditTexts(project: string, limit: number): string[];
  recordGateTrials(night: number, trials: readonly GateTrial[]): void;
  recordLedger(night: number, entries: readonly LedgerEntry[]): void;
  ledger(night: number): LedgerEntry[];
  recordAdoption(nightDir: string, mode: "legacy" | "skills", receiptsJson: string, atMs: number): number;
  adoptions(nightDir?: string): AdoptionRow[];
  markRolledBack(id: number, atMs: number): void;
}
