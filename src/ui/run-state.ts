import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunStatus, StepExtras } from "../report/html/index.ts";
import { openStore } from "../store/index.ts";

/** What the run store adds to a run's files. */
export interface RunState {
  records?: unknown[];
  extras?: Map<number, StepExtras>;
  status?: RunStatus;
  startedAt?: string;
  plannedSteps?: number | null;
  /** Changes whenever another connection commits (PRAGMA data_version + step count). */
  version: string;
}

/**
 * Read `<dir>/state.sqlite` when present. Throws StoreError when the file is corrupt or half
 * written, which the caller shows on the run's row.
 */
export function readRunState(dir: string): RunState | null {
  const path = join(dir, "state.sqlite");
  if (!existsSync(path)) return null;
  const store = openStore(path, { migrations: [], readonly: true, checkIntegrity: true });
  try {
    const tables = store.db.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    return { version: `${tables.length}` };
  } finally {
    store.close();
  }
}
