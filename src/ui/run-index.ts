import { existsSync, statSync } from "node:fs";
import { relative } from "node:path";
import { loadRunView, openRunForParts, type RunForParts, type RunView } from "../report/index.ts";
import { findRuns, isRunDir, type RunRow as RunFolderRow, type RunStatus, readRunRow } from "../run/index.ts";
import { resolveInside } from "./security.ts";

/** One row of the runs list: the run module's row (the same as `skillopt runs --json`) and its id here. */
export interface RunRow extends RunFolderRow {
  id: string;
}

function runId(root: string, dir: string): string {
  return relative(root, dir) || ".";
}

/** The run directory for an id, or null when the id leaves the root or is not a run. */
export function runDirOf(root: string, id: string): string | null {
  const dir = resolveInside(root, id === "." ? "" : id);
  if (!dir || !existsSync(dir) || !statSync(dir).isDirectory() || !isRunDir(dir)) return null;
  return dir;
}

/** Statuses the dashboard knows better than the files (a child it launched is running before its store exists). */
type StatusOverride = (dir: string) => RunStatus | undefined;

/** Load a run for display; a damaged state file becomes an error on the view, never an exception. */
export function readRun(dir: string, override?: StatusOverride): { run: RunView; error: string | null } {
  const o = override?.(dir);
  const run = loadRunView(dir, o ? { status: o } : {});
  return { run, error: run.storeError ?? run.errors[0] ?? run.warnings[0] ?? null };
}

/** Open a run to render its page in parts (the steps' details read a page at a time); close it when done. */
export function openRun(dir: string, override?: StatusOverride): RunForParts {
  const o = override?.(dir);
  return openRunForParts(dir, o ? { status: o } : {});
}

/** The rows of every run under root, newest first (the run module's rows and status rule). */
export function listRuns(root: string, override?: StatusOverride): RunRow[] {
  const rows = findRuns(root).map((dir): RunRow => {
    const row = readRunRow(dir);
    const o = override?.(dir);
    return { ...row, ...(o ? { status: o } : {}), id: runId(root, dir) };
  });
  return rows.sort((a, b) => (b.started_at ?? "").localeCompare(a.started_at ?? ""));
}
