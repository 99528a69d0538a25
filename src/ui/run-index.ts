import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { loadRunView, type RunStatus, type RunView } from "../report/html/index.ts";
import { resolveInside } from "./security.ts";

/** One row of the runs list. */
export interface RunRow {
  id: string;
  name: string;
  status: RunStatus;
  benchmark: string;
  optimizer: string;
  target: string;
  best: number | null;
  steps: number;
  plannedSteps: number | null;
  costUsd: number | null;
  startedAt: string;
  simulator: boolean;
  /** Set when the run's files cannot be read; the row still shows. */
  error: string | null;
}

const MARKERS = ["state.sqlite", "history.jsonl", "history.json", "summary.json", "config.resolved.yaml", "eval_summary.json"];

function isRunDir(dir: string): boolean {
  return MARKERS.some((m) => existsSync(join(dir, m)));
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/** Run directories under root: root/<run> and root/<group>/<run>. */
export function discoverRuns(root: string): string[] {
  const out: string[] = [];
  if (isRunDir(root)) out.push(root);
  for (const d of subdirs(root)) {
    if (isRunDir(d)) out.push(d);
    else for (const dd of subdirs(d)) if (isRunDir(dd)) out.push(dd);
  }
  return out;
}

export function runId(root: string, dir: string): string {
  return relative(root, dir) || ".";
}

/** The run directory for an id, or null when the id leaves the root or is not a run. */
export function runDirOf(root: string, id: string): string | null {
  const dir = resolveInside(root, id === "." ? "" : id);
  if (!dir || !existsSync(dir) || !statSync(dir).isDirectory() || !isRunDir(dir)) return null;
  return dir;
}

/** Statuses the dashboard knows better than the files (a child it launched is running). */
export type StatusOverride = (dir: string) => RunStatus | undefined;

/** Load a run for display; a damaged state file becomes an error on the view, never an exception. */
export function readRun(dir: string, override?: StatusOverride, light = false): { run: RunView; error: string | null } {
  const run = loadRunView(dir, { light });
  const o = override?.(dir);
  if (o) run.status = o;
  else if (run.storeError) run.status = "unknown";
  else if (run.status === "unknown") run.status = guessStatus(dir, run);
  return { run, error: run.storeError ?? run.warnings[0] ?? null };
}

function guessStatus(dir: string, run: RunView): RunStatus {
  if (run.summary) return "finished";
  try {
    const files = ["state.sqlite-wal", "state.sqlite", "history.jsonl"].map((f) => join(dir, f)).filter(existsSync);
    const newest = Math.max(0, ...files.map((f) => statSync(f).mtimeMs));
    return Date.now() - newest < 120_000 ? "running" : "interrupted";
  } catch {
    return "unknown";
  }
}

/** The rows of every run under root, newest first. */
export function listRuns(root: string, override?: StatusOverride): RunRow[] {
  const rows = discoverRuns(root).map((dir): RunRow => {
    const { run, error } = readRun(dir, override, true);
    const last = run.steps[run.steps.length - 1];
    let cost: number | null = run.summary?.costUsd ?? null;
    if (cost === null) for (const s of run.steps) if (s.costUsd !== null) cost = (cost ?? 0) + s.costUsd;
    return {
      id: runId(root, dir),
      name: run.name,
      status: run.status,
      benchmark: run.benchmark,
      optimizer: run.optimizerModel,
      target: run.targetModel,
      best: run.summary?.best.selection ?? last?.bestScore ?? null,
      steps: run.steps.length,
      plannedSteps: run.plannedSteps,
      costUsd: cost,
      startedAt: run.startedAt,
      simulator: run.simulator,
      error,
    };
  });
  return rows.sort((a, b) => b.startedAt.localeCompare(a.startedAt));
}
