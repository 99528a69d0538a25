import { existsSync, rmSync } from "node:fs";
import { readInputText, writeJsonAtomic } from "../lib/index.ts";
import { runPaths } from "./layout.ts";

/** What a run folder says while its process waits on a provider batch (model.batch). */
interface BatchWait {
  batch_id: string;
  /** The provider's status (validating, in_progress, finalizing, …). */
  status: string;
  completed: number;
  total: number;
  /** The process that waits. */
  pid: number;
  /** ISO time of the last update. */
  updated_at: string;
}

/** Record (atomically) that the run in `dir` waits on a batch. */
export function writeBatchWait(dir: string, w: Omit<BatchWait, "pid" | "updated_at">, pid = process.pid): void {
  writeJsonAtomic(runPaths(dir).batchWait, { ...w, pid, updated_at: new Date().toISOString() } satisfies BatchWait);
}

/** The run no longer waits on a batch. */
export function clearBatchWait(dir: string): void {
  rmSync(runPaths(dir).batchWait, { force: true });
}

/** The batch the run in `dir` waits on, or undefined (absent or unreadable file). */
export function readBatchWait(dir: string): BatchWait | undefined {
  const path = runPaths(dir).batchWait;
  if (!existsSync(path)) return undefined;
  try {
    const v = JSON.parse(readInputText(path, "")) as Partial<BatchWait>;
    if (typeof v.batch_id !== "string" || typeof v.pid !== "number") return undefined;
    return {
      batch_id: v.batch_id,
      status: String(v.status ?? "?"),
      completed: Number(v.completed) || 0,
      total: Number(v.total) || 0,
      pid: v.pid,
      updated_at: String(v.updated_at ?? ""),
    };
  } catch {
    return undefined;
  }
}

/** The words every status display uses for a run waiting on a batch. */
export function batchWaitText(w: BatchWait): string {
  return `waiting on batch ${w.batch_id} (${w.status}, ${w.completed}/${w.total} done)`;
}
