import * as v from "valibot";
import type { HarvestStateStore, SessionFileMark, SessionState } from "../sleep/index.ts";
import { inTransaction, type Migrations, openStore, type Store } from "./db.ts";

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

/** The HarvestStateStore port over an open store. */
export function harvestState(store: Store, now: () => number = Date.now): HarvestStateStore {
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
      const out = new Map<string, SessionFileMark>();
      for (const row of selFiles.all(source) as SessionFileMark[]) out.set(row.key, row);
      return out;
    },
    loadState(source, key) {
      const row = selState.get(source, key) as { state_json: string | null } | null;
      if (!row?.state_json) return undefined;
      try {
        const parsed = v.safeParse(CachedStateSchema, JSON.parse(row.state_json));
        if (!parsed.success) return undefined;
        return parsed.output as unknown as SessionState;
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
