import { existsSync, type FSWatcher, statSync, watch } from "node:fs";
import { errorMessage, log } from "../lib/index.ts";
import { runPaths } from "../run/index.ts";
import { openStore, type Store } from "../store/index.ts";

type Listener = (version: string) => void;

interface Watch {
  listeners: Set<Listener>;
  version: string;
  fsw: FSWatcher | null;
  timer: ReturnType<typeof setInterval>;
  db: Store | null;
  debounce: ReturnType<typeof setTimeout> | null;
}

function statSig(path: string): string {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return "-";
  }
}

/**
 * Change detection for live run pages. A run with a store is watched through its own sqlite
 * connection: PRAGMA data_version moves exactly when another connection commits a step; its
 * warnings.jsonl, appended between commits, is stat'ed too. A
 * directory event (the WAL growing, an atomic rename) triggers the check at once, and a slow timer
 * asks the store again (never the files) in case the event was missed. A directory without a
 * store (upstream-style files only) is watched by directory events alone.
 */
export class RunWatchHub {
  private readonly watches = new Map<string, Watch>();

  constructor(private readonly intervalMs = 1000) {}

  private signature(dir: string, w: Watch): string {
    const dbPath = runPaths(dir).state;
    let dv = "";
    if (!w.db && existsSync(dbPath)) {
      try {
        w.db = openStore(dbPath, { migrations: [], readonly: true, checkIntegrity: false });
      } catch (err) {
        log.withTag("ui").debug(`cannot watch ${dbPath}: ${errorMessage(err)}`);
      }
    }
    if (w.db) {
      try {
        dv = String((w.db.db.query("PRAGMA data_version").get() as { data_version: number }).data_version);
      } catch {
        w.db.close();
        w.db = null;
      }
    }
    // With a store, its commits are the signal, plus the warnings the run appends between commits
    // (one stat); the derived files are never stat'ed on a timer.
    if (w.db) return `db:${dv}|${statSig(runPaths(dir).warnings)}`;
    return [statSig(runPaths(dir).history), statSig(runPaths(dir).summary)].join("|");
  }

  private check(dir: string): void {
    const w = this.watches.get(dir);
    if (!w) return;
    const v = this.signature(dir, w);
    if (v === w.version) return;
    w.version = v;
    for (const l of w.listeners) l(v);
  }

  /** Call `listener` whenever the run changes; returns the unsubscribe function. */
  subscribe(dir: string, listener: Listener): () => void {
    let w = this.watches.get(dir);
    if (!w) {
      const created: Watch = {
        listeners: new Set(),
        version: "",
        fsw: null,
        db: null,
        debounce: null,
        timer: setInterval(() => {
          if (created.db || !created.fsw) this.check(dir);
        }, this.intervalMs),
      };
      try {
        created.fsw = watch(dir, () => {
          if (created.debounce) return;
          created.debounce = setTimeout(() => {
            created.debounce = null;
            this.check(dir);
          }, 40);
        });
      } catch (err) {
        log.withTag("ui").debug(`fs.watch unavailable for ${dir}: ${errorMessage(err)}`);
      }
      created.version = this.signature(dir, created);
      this.watches.set(dir, created);
      w = created;
    }
    w.listeners.add(listener);
    return () => {
      const cur = this.watches.get(dir);
      if (!cur) return;
      cur.listeners.delete(listener);
      if (cur.listeners.size === 0) this.drop(dir, cur);
    };
  }

  private drop(dir: string, w: Watch): void {
    clearInterval(w.timer);
    if (w.debounce) clearTimeout(w.debounce);
    w.fsw?.close();
    w.db?.close();
    this.watches.delete(dir);
  }

  close(): void {
    for (const [dir, w] of this.watches) this.drop(dir, w);
  }
}
