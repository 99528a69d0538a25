import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import type { EvaluationRow } from "../engine/index.ts";
import type { Migrations, Store } from "./db.ts";
import { type Packed, packText, unpackText } from "./packed.ts";
import { inTransaction, openStore, writing } from "./db.ts";
import { applyPendingInTransaction } from "./journal.ts";

/**
 * Run state of one training run, in the run folder's store (src/run/layout.ts; namespace "runs"; the model layer's call
 * ledger may share the file under its own namespace). Tables:
 *
 * - `run_meta(key, value)`: `config` (resolved config, secrets masked, JSON), `status`
 *   (running | finished | interrupted | stopped), `pid`, `started_at`, `updated_at` (ms epoch,
 *   refreshed on every commit), `benchmark`, `backend` (e.g. "sim (offline simulator)"),
 *   `summary` (summary.json, JSON), `total_steps`, `owner_pid` (the process that holds the run;
 *   claimed atomically by claimRun, released when it ends).
 * - `checkpoints(seq, kind, step, epoch, state_json, created_at, current_hash, best_hash)`: one row
 *   per commit (baseline, step, boundary, final); only the last row keeps its `state_json` (the loop
 *   state a resume continues from; earlier rows are emptied when the next one is written, so the
 *   store grows linearly), every row keeps the current and best skill hashes. The state is stored
 *   deflated (packJson below); stores written before hold its JSON text.
 * - `steps(step, epoch, action, outcome, record_json, artifacts_json, created_at)`: the history
 *   record of every committed step (the same object as its line in the run folder's step log) and its artifacts
 *   (raw patches, merged/ranked patch, edit report, LR decision; deflated like the loop state).
 * - `boundaries(epoch, record_json, created_at)`: epoch-boundary results (slow update, meta skill).
 * - `skill_versions(hash, text, origin, step, created_at)`: every skill text seen (initial,
 *   candidates, slow-update results), by the 16-hex content hash.
 * - `evaluations(id, seq, step, kind, hash, split, hard, soft, score, evaluated, total, action)`:
 *   every selection/test evaluation (kind: baseline | candidate | slow_update | test); an
 *   early-rejected candidate has `score` NULL and `evaluated < total`.
 *
 * Each checkpoint is written in one IMMEDIATE transaction, so a kill at any moment leaves the
 * last complete checkpoint.
 */
const RUNS_NAMESPACE = "runs";

const RUNS_MIGRATIONS: Migrations = [
  `CREATE TABLE run_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE checkpoints (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     kind TEXT NOT NULL, step INTEGER NOT NULL, epoch INTEGER NOT NULL,
     state_json TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE steps (
     step INTEGER PRIMARY KEY, epoch INTEGER NOT NULL, action TEXT NOT NULL, outcome TEXT NOT NULL,
     record_json TEXT NOT NULL, artifacts_json TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE boundaries (epoch INTEGER PRIMARY KEY, record_json TEXT NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE skill_versions (
     hash TEXT PRIMARY KEY, text TEXT NOT NULL, origin TEXT NOT NULL, step INTEGER NOT NULL, created_at INTEGER NOT NULL);
   CREATE TABLE evaluations (
     id INTEGER PRIMARY KEY AUTOINCREMENT, seq INTEGER NOT NULL, step INTEGER NOT NULL, kind TEXT NOT NULL,
     hash TEXT NOT NULL, split TEXT NOT NULL, hard REAL NOT NULL, soft REAL NOT NULL, score REAL,
     evaluated INTEGER NOT NULL, total INTEGER NOT NULL, action TEXT);
   CREATE INDEX evaluations_step ON evaluations(step);`,
  // Only the latest checkpoint keeps its loop state (the store grows linearly with steps); every
  // checkpoint keeps the current and best skill hashes, from which the derived files are rebuilt.
  `ALTER TABLE checkpoints ADD COLUMN current_hash TEXT;
   ALTER TABLE checkpoints ADD COLUMN best_hash TEXT;`,
  // Evaluations are read in one pass in commit order, never by step: the index was one more page
  // written to the WAL at every checkpoint.
  `DROP INDEX IF EXISTS evaluations_step;`,
];

/** Open (or create) a run store. */
/**
 * A run store's pages are 1 KiB, not SQLite's 4 KiB: each step's checkpoint is one transaction of
 * small rows spread over a dozen tables and indexes, and the WAL gets every page it touches in
 * full. At 4 KiB that was about 77 KB written per step (×16 quickstart), most of it the unchanged
 * rest of each page.
 */
const RUN_PAGE_SIZE = 1024;

export function openRunStore(path: string, opts: { readonly?: boolean } = {}): Store {
  return openStore(path, {
    migrations: RUNS_MIGRATIONS,
    namespace: RUNS_NAMESPACE,
    pageSize: RUN_PAGE_SIZE,
    ...(opts.readonly ? { readonly: true } : {}),
  });
}

export function setRunMeta(store: Store, values: Record<string, string | number>): void {
  writing(store, () => {
    const q = store.db.query(
      "INSERT INTO run_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    );
    inTransaction(store, () => {
      for (const [k, val] of Object.entries(values)) q.run(k, String(val));
    });
  });
}

/**
 * Whether the sqlite file at `path` holds a started run (a saved config input). Read-only and
 * without migrating, so another tool's sqlite file is never changed; a file that is not a run
 * store counts as holding something.
 */
export function holdsStartedRun(path: string): boolean {
  return runStoreState(path) !== "empty";
}

/**
 * What a run store file holds, read-only (never creates tables or rewrites the file): "started" (a run
 * with its saved input), "empty" (a zero-byte file, a database without a schema yet, or a run store
 * stopped before it started), "foreign" (an SQLite database whose tables are not ours),
 * "unreadable" (not a database, locked, …).
 */
export function runStoreState(path: string): "started" | "empty" | "foreign" | "unreadable" {
  if (existsSync(path) && statSync(path).isFile() && statSync(path).size === 0) return "empty";
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const table = db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'run_meta'").get();
    if (table === null) {
      // No schema yet: a store whose run was killed while creating it (after the switch to WAL,
      // before its tables were committed) holds nothing, like a zero-byte file. One that earlier
      // versions left may also hold an empty schema_versions (they created it ahead of the tables).
      const others = db.query("SELECT count(*) AS n FROM sqlite_master WHERE tbl_name != 'schema_versions'").get() as {
        n: number;
      };
      if (others.n > 0) return "foreign";
      const versions = db.query("SELECT name FROM sqlite_master WHERE name = 'schema_versions'").get();
      if (versions === null) return "empty";
      const rows = db.query("SELECT count(*) AS n FROM schema_versions").get() as { n: number };
      return rows.n === 0 ? "empty" : "foreign";
    }
    return db.query("SELECT value FROM run_meta WHERE key = 'input'").get() !== null ? "started" : "empty";
  } catch {
    return "unreadable";
  } finally {
    db?.close();
  }
}

/** Outcome of claimRun: ours, or held by a live process. */
type RunClaim = { ok: true } | { ok: false; holder: number };

/**
 * Claim the run for `pid`, atomically: inside one IMMEDIATE transaction (sqlite's write lock, which
 * the OS releases if the holder dies), refuse when another live process owns it, else take it.
 * Two processes racing for one run directory therefore get exactly one winner.
 */
export function claimRun(store: Store, pid: number, alive: (pid: number) => boolean): RunClaim {
  return writing(store, () => {
    return inTransaction(store, () => {
      const row = store.db.query("SELECT value FROM run_meta WHERE key = 'owner_pid'").get() as {
        value: string;
      } | null;
      const holder = Number(row?.value ?? 0);
      if (holder && holder !== pid && alive(holder)) return { ok: false, holder } as const;
      store.db
        .query(
          "INSERT INTO run_meta (key, value) VALUES ('owner_pid', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        )
        .run(String(pid));
      return { ok: true } as const;
    });
  });
}

/** Give up the claim if `pid` still holds it. */
export function releaseRun(store: Store, pid: number): void {
  writing(store, () => {
    store.db.query("DELETE FROM run_meta WHERE key = 'owner_pid' AND value = ?").run(String(pid));
  });
}

export function getRunMeta(store: Store): Record<string, string> {
  const rows = store.db.query("SELECT key, value FROM run_meta").all() as { key: string; value: string }[];
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

interface CheckpointRow {
  kind: string;
  step: number;
  epoch: number;
  state: unknown;
  skills: { hash: string; text: string; origin: string }[];
  record?: Record<string, unknown> | undefined;
  artifacts?: Record<string, unknown> | undefined;
  evaluations: readonly EvaluationRow[];
  /** Extra run_meta values written in the same transaction (status, summary, …). */
  meta?: Record<string, string | number>;
  /** The current and best skill after this checkpoint (the derived files are rebuilt from them). */
  currentHash?: string | undefined;
  bestHash?: string | undefined;
}

/**
 * A checkpoint's loop state and a step's artifacts are stored deflated (a fifth to a quarter of
 * their JSON: the loop state of a ×16 quickstart step is 12 KB of text, written at every step),
 * since each page a checkpoint touches is written to the WAL and again to the file. Stores written
 * before hold the JSON text, which reads the same.
 */
function packJson(value: unknown): Uint8Array {
  return Bun.deflateSync(Buffer.from(JSON.stringify(value)), { level: 1 });
}

function unpackJson(stored: Packed): unknown {
  return JSON.parse(unpackText(stored));
}

/** Write one checkpoint atomically. */
export function commitCheckpoint(store: Store, cp: CheckpointRow, now = Date.now()): number {
  // The step's call rows (ledger, and the answers when the cache is this store) go in with it, in
  // its one transaction, so a checkpoint never names calls its store does not hold.
  let applied = () => {};
  const seq = writing(store, () => {
    const db = store.db;
    return inTransaction(store, () => {
      applied = applyPendingInTransaction(store);
      // The previous loop state is superseded by this one: keep only the latest (linear growth).
      db.query("UPDATE checkpoints SET state_json = '' WHERE seq = (SELECT max(seq) FROM checkpoints)").run();
      const seq = Number(
        (
          db
            .query(
              "INSERT INTO checkpoints (kind, step, epoch, state_json, created_at, current_hash, best_hash) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            )
            .get(cp.kind, cp.step, cp.epoch, packJson(cp.state), now, cp.currentHash ?? null, cp.bestHash ?? null) as {
            seq: number;
          }
        ).seq,
      );
      const sk = db.query(
        "INSERT OR IGNORE INTO skill_versions (hash, text, origin, step, created_at) VALUES (?, ?, ?, ?, ?)",
      );
      for (const s of cp.skills) sk.run(s.hash, packText(s.text, { level: 1 }), s.origin, cp.step, now);
      if (cp.kind === "step" && cp.record) {
        db.query(
          "INSERT OR REPLACE INTO steps (step, epoch, action, outcome, record_json, artifacts_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ).run(
          cp.step,
          cp.epoch,
          String(cp.record.action ?? ""),
          String(cp.record.outcome ?? ""),
          packJson(cp.record),
          packJson(cp.artifacts ?? {}),
          now,
        );
      }
      if (cp.kind === "boundary" && cp.record) {
        db.query("INSERT OR REPLACE INTO boundaries (epoch, record_json, created_at) VALUES (?, ?, ?)").run(
          cp.epoch,
          packJson(cp.record),
          now,
        );
      }
      const ev = db.query(
        "INSERT INTO evaluations (seq, step, kind, hash, split, hard, soft, score, evaluated, total, action) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      for (const e of cp.evaluations)
        ev.run(seq, cp.step, e.kind, e.hash, e.split, e.hard, e.soft, e.score, e.evaluated, e.total, e.action ?? null);
      const meta = db.query(
        "INSERT INTO run_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      );
      for (const [k, val] of Object.entries({ ...cp.meta, updated_at: now })) meta.run(k, String(val));
      return seq;
    });
  });
  applied();
  return seq;
}

/** The last committed loop state, or undefined. */
export function lastCheckpoint(store: Store): { kind: string; step: number; state: unknown } | undefined {
  const row = store.db.query("SELECT kind, step, state_json FROM checkpoints ORDER BY seq DESC LIMIT 1").get() as {
    kind: string;
    step: number;
    state_json: Packed;
  } | null;
  return row ? { kind: row.kind, step: row.step, state: unpackJson(row.state_json) } : undefined;
}

/** Every checkpoint's kind, step and skill hashes in commit order (what the derived files are rebuilt from). */
export function checkpointHeads(
  store: Store,
): { kind: string; step: number; current: string | null; best: string | null }[] {
  const rows = store.db
    .query("SELECT kind, step, current_hash, best_hash, state_json FROM checkpoints ORDER BY seq")
    .all() as {
    kind: string;
    step: number;
    current_hash: string | null;
    best_hash: string | null;
    state_json: Packed;
  }[];
  return rows.map((r) => {
    if (r.current_hash !== null || r.state_json.length === 0)
      return { kind: r.kind, step: r.step, current: r.current_hash, best: r.best_hash };
    // A store written before the hash columns: every row still holds its full state.
    const st = unpackJson(r.state_json) as { current?: { hash?: string }; best?: { hash?: string } };
    return { kind: r.kind, step: r.step, current: st.current?.hash ?? null, best: st.best?.hash ?? null };
  });
}

/** Skill texts by hash: all of them, or only those of `hashes` (a report reads a long run a page at a time). */
export function skillTexts(store: Store, hashes?: readonly string[]): Record<string, string> {
  const rows = (
    hashes
      ? store.db
          .query(`SELECT hash, text FROM skill_versions WHERE hash IN (${hashes.map(() => "?").join(",")})`)
          .all(...hashes)
      : store.db.query("SELECT hash, text FROM skill_versions").all()
  ) as { hash: string; text: Packed }[];
  return Object.fromEntries(rows.map((r) => [r.hash, unpackText(r.text)]));
}

/** Step records in step order (the content of the run folder's step log), unparsed: src/run checks them against their schema. */
export function stepRecords(store: Store): unknown[] {
  return stepRecordPage(store, Number.NEGATIVE_INFINITY, -1).map((r) => r.record);
}

/** Up to `limit` step records after step `after` (all with limit -1), in step order, unparsed, with their step numbers. */
export function stepRecordPage(store: Store, after: number, limit: number): { step: number; record: unknown }[] {
  const rows = store.db
    .query("SELECT step, record_json FROM steps WHERE step > ? ORDER BY step LIMIT ?")
    .all(after, limit) as { step: number; record_json: Packed }[];
  return rows.map((r) => ({ step: r.step, record: unpackJson(r.record_json) }));
}

/** Epoch-boundary records in epoch order, unparsed. */
export function boundaryRecords(store: Store): unknown[] {
  const rows = store.db.query("SELECT record_json FROM boundaries ORDER BY epoch").all() as { record_json: Packed }[];
  return rows.map((r) => unpackJson(r.record_json));
}

export function evaluationRows(store: Store): Record<string, unknown>[] {
  return store.db
    .query("SELECT step, kind, hash, split, hard, soft, score, evaluated, total, action FROM evaluations ORDER BY id")
    .all() as Record<string, unknown>[];
}

/** Step artifacts (merged/ranked patch, edit report, …) by step, for reports: all steps', or only those of `steps`. */
export function stepArtifacts(store: Store, steps?: readonly number[]): Map<number, Record<string, unknown>> {
  const rows = (
    steps
      ? store.db
          .query(
            `SELECT step, artifacts_json FROM steps WHERE step IN (${steps.map(() => "?").join(",")}) ORDER BY step`,
          )
          .all(...steps)
      : store.db.query("SELECT step, artifacts_json FROM steps ORDER BY step").all()
  ) as {
    step: number;
    artifacts_json: Packed;
  }[];
  return new Map(rows.map((r) => [r.step, unpackJson(r.artifacts_json) as Record<string, unknown>]));
}
