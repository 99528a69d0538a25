import { existsSync, mkdirSync, rmdirSync, rmSync } from "node:fs";
import { dirname } from "node:path";
import { processAlive, UsageError } from "../lib/index.ts";
import {
  claimRun,
  getRunMeta,
  holdsStartedRun,
  openRunStore,
  releaseRun,
  runStoreState,
  type Store,
} from "../store/index.ts";
import { runPaths } from "./layout.ts";

/** A run store this process holds; `release()` gives the claim back and closes it. */
export interface ClaimedRun {
  store: Store;
  /** The saved config input of the run (JSON), when resuming one that started. */
  savedInput: string | undefined;
  release(): void;
  /**
   * Release the claim and, when the run never started (refused before its first record: a bad
   * endpoint, a cap it cannot enforce) and nothing was paid for, remove what claiming it created:
   * the store and the folders made for it. Nothing of a run that never started remains to be
   * listed as interrupted. A no-op past the start, and for a resumed run.
   */
  releaseOrDiscard(): void;
}

function held(store: Store, created?: { state: string; dirs: string[] }): ClaimedRun {
  const release = () => {
    releaseRun(store, process.pid);
    store.close();
  };
  return {
    store,
    savedInput: undefined,
    release,
    releaseOrDiscard() {
      const unstarted = created !== undefined && !getRunMeta(store).input && !paidCalls(store);
      release();
      if (!unstarted) return;
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(created.state + suffix, { force: true });
      for (const d of [...created.dirs].reverse()) {
        try {
          rmdirSync(d);
        } catch {
          // Not empty (something else was put there) or already gone: it stays.
        }
      }
    },
  };
}

/** Whether any model call was recorded in the store (a run that paid for something keeps its record). */
function paidCalls(store: Store): boolean {
  try {
    return store.db.query("SELECT 1 FROM call_ledger LIMIT 1").get() !== null;
  } catch {
    return false; // no ledger table: nothing was called
  }
}

/** The folders `mkdirSync(dir, { recursive: true })` is about to create, outermost first. */
function missingDirs(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; !existsSync(d) && d !== dirname(d); d = dirname(d)) out.unshift(d);
  return out;
}

/**
 * Claim the run in `dir` to continue it (`--resume`). `shown` is how the user named the folder.
 * Refuses a folder without a store, a run another live process holds, and a run stopped before it
 * started (nothing to resume).
 */
export function claimForResume(dir: string, shown: string): ClaimedRun {
  const p = runPaths(dir);
  if (!existsSync(p.state))
    throw new UsageError(
      `--resume ${shown}: no run there (no state.sqlite)`,
      { flag: "resume", value: shown, path: p.state, expected: "run directory" },
      { hint: "pass the output directory of an earlier `skillopt train`" },
    );
  // Read-only first: a store that holds no started run (an empty file included) is refused without
  // being opened for writing, so a refused --resume never creates tables in (rewrites) the file.
  const state = runStoreState(p.state);
  if (state === "empty") throw notStarted(shown);
  if (state === "foreign")
    throw new UsageError(
      `--resume ${shown}: ${p.state} is an SQLite file but not a skillopt run store; it is left as it is`,
      { flag: "resume", value: shown, path: p.state, expected: "run directory" },
    );
  const store = openRunStore(p.state);
  const claim = claimRun(store, process.pid, processAlive);
  if (!claim.ok) {
    store.close();
    throw new UsageError(
      `--resume ${shown}: the run is still in progress (pid ${claim.holder})`,
      { flag: "resume", value: shown, path: dir, pid: claim.holder, expected: "a run no live process holds" },
      { hint: "wait for it to finish, or stop it first" },
    );
  }
  const run = held(store);
  run.savedInput = getRunMeta(store).input;
  if (!run.savedInput) {
    run.release();
    throw notStarted(shown);
  }
  return run;
}

function notStarted(shown: string): UsageError {
  return new UsageError(
    `--resume ${shown}: the run was stopped before it started, so there is nothing to resume`,
    { flag: "resume", value: shown, expected: "a started run" },
    { hint: `start it again with the same command and --out ${shown}` },
  );
}

/**
 * Claim `dir` for a new run. A folder that already holds a started run is refused (continue it with
 * --resume); a store without a saved input belongs to a run stopped before it started and is taken
 * over. Two processes racing for one folder get exactly one winner.
 */
export function claimNewRun(dir: string, shown: string): ClaimedRun {
  const p = runPaths(dir);
  // Read-only first, so pointing --out at another tool's sqlite file never migrates or changes it.
  if (existsSync(p.state) && holdsStartedRun(p.state)) {
    throw new UsageError(
      `${shown} already holds a run`,
      { flag: "out", value: shown, path: dir, expected: "a directory without a started run" },
      { hint: `continue it with --resume ${shown}, or choose another --out` },
    );
  }
  const created = { state: p.state, dirs: missingDirs(dir) };
  const stateExisted = existsSync(p.state);
  mkdirSync(dir, { recursive: true });
  const store = openRunStore(p.state);
  const claim = claimRun(store, process.pid, processAlive);
  if (!claim.ok) {
    store.close();
    throw new UsageError(
      `${shown}: another skillopt train (pid ${claim.holder}) is writing this run`,
      { flag: "out", value: shown, path: dir, pid: claim.holder, expected: "a directory no live process writes" },
      { hint: "choose another --out" },
    );
  }
  // A store that was there before (an earlier run stopped before it started) is not ours to delete.
  return held(store, stateExisted ? undefined : created);
}
