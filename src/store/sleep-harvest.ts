import * as v from "valibot";
import { inTransaction, type Migrations, openStore, type Store } from "./db.ts";

/*
 * The harvest tables' shapes are declared here and sleep/ names them with its own source names
 * and parser state (sleep/ports.ts): store/ sits below sleep/ and names nothing of it.
 */

/**
 * What the harvester remembers about one session between runs, whoever consumed it (one row of
 * harvest_files). JSONL sources track the bytes already parsed (`offset`) so the next run reads
 * only appended bytes; database sources track the session's update time.
 */
export interface SessionFileMark<Source extends string = string> {
  source: Source;
  /** File path (JSONL sources) or `<db>#<id>` (SQLite sources). */
  key: string;
  session_id: string;
  /** Absolute project of the session ("" if unknown): scope checks without loading the state. */
  project: string;
  /** Newest activity seen in the session, UTC epoch ms. */
  high_water_ms: number;
  /** Changes whenever the session has new content (bytes consumed, or DB update time). */
  revision: number;
  /** Bytes of the file consumed up to the end of the last complete line (0 for DB sources). */
  offset: number;
  size: number;
  mtime_ms: number;
  /** Hash of the first min(4096, offset) bytes, to tell an append from a rewrite. */
  head_hash: string;
}

/**
 * Incremental harvest state over the Sleep state database; `Source` the source names, `State` a
 * session's parser state (kept as JSON). Two layers: the parse cache (`*Files`, shared by every
 * consumer) and the delivery marks (what a given scope — one project, or "all" — has already been
 * handed). Writes are atomic.
 */
export interface HarvestStateStore<Source extends string = string, State = unknown> {
  /** Every file mark of one source, keyed by `key`. */
  loadFiles(source: Source): Map<string, SessionFileMark<Source>>;
  /** Parser state of one session, undefined when unknown or unreadable. */
  loadState(source: Source, key: string): State | undefined;
  /** Insert or replace marks and their states in one transaction. */
  putFiles(rows: readonly { mark: SessionFileMark<Source>; state: State | null }[]): void;
  /** Forget sessions that no longer exist (their files and delivery marks). */
  deleteFiles(source: Source, keys: readonly string[]): void;
  /** Revisions already delivered to `scopeKey`, keyed by `key`. */
  loadDelivered(scopeKey: string, source: Source): Map<string, number>;
  /** Record deliveries in one transaction. */
  putDelivered(
    scopeKey: string,
    rows: readonly { source: Source; key: string; revision: number; high_water_ms: number }[],
  ): void;
}

/** Harvest tables of the Sleep state database (in `<state_dir>`, namespace "harvest"). */
const HARVEST_MIGRATIONS: Migrations = [
  `CREATE TABLE harvest_files (
     source TEXT NOT NULL,
     key TEXT NOT NULL,
     session_id TEXT NOT NULL,
     project TEXT NOT NULL,
     high_water_ms INTEGER NOT NULL,
     revision INTEGER NOT NULL,
     offset INTEGER NOT NULL,
     size INTEGER NOT NULL,
     mtime_ms INTEGER NOT NULL,
     head_hash TEXT NOT NULL,
     state_json TEXT,
     PRIMARY KEY (source, key)
   );
   CREATE TABLE harvest_delivered (
     scope TEXT NOT NULL,
     source TEXT NOT NULL,
     key TEXT NOT NULL,
     revision INTEGER NOT NULL,
     high_water_ms INTEGER NOT NULL,
     delivered_at_ms INTEGER NOT NULL,
     PRIMARY KEY (scope, source, key)
   );`,
];

/** Open the Sleep state database with the harvest tables migrated. */
export function openHarvestStore(path: string): Store {
  return openStore(path, { migrations: HARVEST_MIGRATIONS, namespace: "harvest", private: true });
}

// Light shape check of a cached state: its digest must still look like a digest.
const CachedStateSchema = v.object({
  digest: v.looseObject({ session_id: v.string(), user_prompts: v.array(v.string()) }),
  own: v.boolean(),
  carry: v.optional(v.unknown()),
});

/** The HarvestStateStore over an open store (`Source`, `State`: Sleep's source names and parser state). */
export function harvestState<Source extends string = string, State = unknown>(
  store: Store,
  now: () => number = Date.now,
): HarvestStateStore<Source, State> {
  const db = store.db;
  const selFiles = db.query(
    "SELECT source, key, session_id, project, high_water_ms, revision, offset, size, mtime_ms, head_hash FROM harvest_files WHERE source = ?",
  );
  const selState = db.query("SELECT state_json FROM harvest_files WHERE source = ? AND key = ?");
  const upFile = db.query(
    `INSERT INTO harvest_files (source, key, session_id, project, high_water_ms, revision, offset, size, mtime_ms, head_hash, state_json)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(source, key) DO UPDATE SET session_id = excluded.session_id, project = excluded.project,
       high_water_ms = excluded.high_water_ms, revision = excluded.revision, offset = excluded.offset,
       size = excluded.size, mtime_ms = excluded.mtime_ms, head_hash = excluded.head_hash, state_json = excluded.state_json`,
  );
  const delFile = db.query("DELETE FROM harvest_files WHERE source = ? AND key = ?");
  const delDelivered = db.query("DELETE FROM harvest_delivered WHERE source = ? AND key = ?");
  const selDelivered = db.query("SELECT key, revision FROM harvest_delivered WHERE scope = ? AND source = ?");
  const upDelivered = db.query(
    `INSERT INTO harvest_delivered (scope, source, key, revision, high_water_ms, delivered_at_ms) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT(scope, source, key) DO UPDATE SET revision = excluded.revision, high_water_ms = excluded.high_water_ms,
       delivered_at_ms = excluded.delivered_at_ms`,
  );
  return {
    loadFiles(source) {
      const out = new Map<string, SessionFileMark<Source>>();
      for (const row of selFiles.all(source) as SessionFileMark<Source>[]) out.set(row.key, row);
      return out;
    },
    loadState(source, key) {
      const row = selState.get(source, key) as { state_json: string | null } | null;
      if (!row?.state_json) return undefined;
      try {
        const parsed = v.safeParse(CachedStateSchema, JSON.parse(row.state_json));
        if (!parsed.success) return undefined;
        return parsed.output as unknown as State;
      } catch {
        return undefined;
      }
    },
    putFiles(rows) {
      inTransaction(store, () => {
        for (const { mark: m, state } of rows) {
          upFile.run(
            m.source,
            m.key,
            m.session_id,
            m.project,
            m.high_water_ms,
            m.revision,
            m.offset,
            m.size,
            m.mtime_ms,
            m.head_hash,
            state ? JSON.stringify(state) : null,
          );
        }
      });
    },
    deleteFiles(source, keys) {
      inTransaction(store, () => {
        for (const key of keys) {
          delFile.run(source, key);
          delDelivered.run(source, key);
        }
      });
    },
    loadDelivered(scope, source) {
      const out = new Map<string, number>();
      for (const row of selDelivered.all(scope, source) as { key: string; revision: number }[])
        out.set(row.key, row.revision);
      return out;
    },
    putDelivered(scope, rows) {
      const at = now();
      inTransaction(store, () => {
        for (const r of rows) upDelivered.run(scope, r.source, r.key, r.revision, r.high_water_ms, at);
      });
    },
  };
}
