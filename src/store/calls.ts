import { join } from "node:path";
import { randomName, tightenPrivate } from "../lib/index.ts";
import { type Migrations, migrateStore, openStore, type Store, writing } from "./db.ts";
import { appendPending, compactKey, findAnswer, flushPending, pendingAnswer, replayPending } from "./journal.ts";

/** Namespace of the call tables (cache + ledger), so they can share a file with other modules. */
export const CALLS_NAMESPACE = "calls";

export const CALLS_MIGRATIONS: Migrations = [
  `CREATE TABLE call_cache (
     key TEXT PRIMARY KEY,
     backend TEXT NOT NULL,
     endpoint TEXT NOT NULL,
     model TEXT NOT NULL,
     response TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     hits INTEGER NOT NULL DEFAULT 0
   );
   CREATE TABLE call_ledger (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL,
     at INTEGER NOT NULL,
     role TEXT NOT NULL,
     stage TEXT NOT NULL,
     backend TEXT NOT NULL,
     endpoint TEXT NOT NULL,
     model TEXT NOT NULL,
     cache_key TEXT,
     cached INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     status TEXT NOT NULL,
     prompt_tokens INTEGER NOT NULL,
     completion_tokens INTEGER NOT NULL,
     cached_tokens INTEGER NOT NULL,
     reasoning_tokens INTEGER NOT NULL,
     cost_usd REAL,
     latency_ms INTEGER NOT NULL,
     error TEXT
   );
   CREATE INDEX call_ledger_run ON call_ledger(run_id, stage);`,
  // Structured results given up on (malformed or truncated after the re-ask), so a resumed run
  // still reports the drops of its earlier sessions.
  `CREATE TABLE call_drops (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL,
     at INTEGER NOT NULL,
     stage TEXT NOT NULL,
     reason TEXT NOT NULL
   );
   CREATE INDEX call_drops_run ON call_drops(run_id);`,
  // Provider batches (model.batch): committed right after the provider accepts a batch and before
  // any wait, so a killed process re-attaches to it instead of submitting (and paying) again.
  `CREATE TABLE call_batches (
     id TEXT PRIMARY KEY,
     backend TEXT NOT NULL,
     endpoint TEXT NOT NULL,
     model TEXT NOT NULL,
     input_file_id TEXT NOT NULL,
     status TEXT NOT NULL,
     state TEXT NOT NULL,
     total INTEGER NOT NULL,
     completed INTEGER NOT NULL DEFAULT 0,
     failed INTEGER NOT NULL DEFAULT 0,
     worst_cost_usd REAL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE TABLE call_batch_items (
     batch_id TEXT NOT NULL,
     key TEXT NOT NULL,
     role TEXT NOT NULL,
     stage TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     state TEXT NOT NULL,
     error TEXT,
     PRIMARY KEY (batch_id, key)
   );
   CREATE INDEX call_batch_items_key ON call_batch_items(key, state);`,
  // The ledger's index by run and time instead of run and stage: a step's rows (every stage) then
  // land on the index's last page, where by stage they touched one page per stage at each commit
  // (6.5 of a ×16 step's 26 pages written). A replayed row is still found by run and time.
  `DROP INDEX call_ledger_run;
   CREATE INDEX call_ledger_run_at ON call_ledger(run_id, at);`,
  // No index on the ledger: a run's rows are read in one pass (a run store holds one run), and the
  // replay of a side file finds rows already applied in one scan. The index was 3–4 of the ~23
  // pages each checkpoint wrote to the WAL (its rightmost leaf splits rewrite three siblings).
  `DROP INDEX IF EXISTS call_ledger_run_at;`,
  // Cache answers in a compact form: the 64-hex key as its 32 bytes, backend/endpoint/model once per
  // origin, long answers deflated. Rows are appended in rowid order (a batch fills new pages only)
  // and found by a 6-byte tag of the key, whose index is a fifth of a full key's; the key itself
  // is compared on reading. A call_cache row was about 390 bytes plus 70 of index, and a batch of
  // answers wrote one index page per answer. Rows of call_cache (older versions) still read.
  `CREATE TABLE call_origins (
     id INTEGER PRIMARY KEY,
     backend TEXT NOT NULL,
     endpoint TEXT NOT NULL,
     model TEXT NOT NULL,
     UNIQUE (backend, endpoint, model)
   );
   CREATE TABLE call_answers (
     id INTEGER PRIMARY KEY,
     tag INTEGER NOT NULL,
     key BLOB NOT NULL,
     origin INTEGER NOT NULL REFERENCES call_origins(id),
     response NOT NULL,
     created_at INTEGER NOT NULL,
     elided INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX call_answers_tag ON call_answers(tag);`,
  // The ledger in a compact form too: call_log keeps backend/endpoint/model as an origin and a
  // 64-hex cache key as its 32 bytes (about 95 bytes a row instead of 180, every row of which was
  // written to the WAL and the file at each checkpoint). \`call_ledger\` is now a view over the rows
  // of earlier versions (call_ledger_v1) and call_log, with the same columns, read as before;
  // call_log's ids continue after call_ledger_v1's (src/store/journal.ts), so ORDER BY id is
  // still the order of the calls.
  `ALTER TABLE call_ledger RENAME TO call_ledger_v1;
   CREATE TABLE call_log (
     id INTEGER PRIMARY KEY,
     run_id TEXT NOT NULL,
     at INTEGER NOT NULL,
     role TEXT NOT NULL,
     stage TEXT NOT NULL,
     origin INTEGER NOT NULL REFERENCES call_origins(id),
     cache_key,
     cached INTEGER NOT NULL,
     attempts INTEGER NOT NULL,
     status TEXT NOT NULL,
     prompt_tokens INTEGER NOT NULL,
     completion_tokens INTEGER NOT NULL,
     cached_tokens INTEGER NOT NULL,
     reasoning_tokens INTEGER NOT NULL,
     cost_usd REAL,
     latency_ms INTEGER NOT NULL,
     error TEXT
   );
   CREATE VIEW call_ledger AS
     SELECT id, run_id, at, role, stage, backend, endpoint, model, cache_key, cached, attempts, status,
            prompt_tokens, completion_tokens, cached_tokens, reasoning_tokens, cost_usd, latency_ms, error
       FROM call_ledger_v1
     UNION ALL
     SELECT l.id, l.run_id, l.at, l.role, l.stage, o.backend, o.endpoint, o.model,
            CASE WHEN typeof(l.cache_key) = 'blob' THEN lower(hex(l.cache_key)) ELSE l.cache_key END,
            l.cached, l.attempts, l.status, l.prompt_tokens, l.completion_tokens, l.cached_tokens,
            l.reasoning_tokens, l.cost_usd, l.latency_ms, l.error
       FROM call_log l JOIN call_origins o ON o.id = l.origin;`,
  // A random name for each run's ledger in this store: a cache answer a run paid for carries it
  // (StoredResponse.paid, src/backends/call-cache.ts), so the run's next process can tell that its
  // dead one paid for the answer even when the ledger row never reached the disk. Run ids are not
  // unique across run folders ("train" in every run store); this name is.
  `CREATE TABLE call_ledger_names (run_id TEXT PRIMARY KEY, name TEXT NOT NULL);`,
];

/** File name of the model-call cache inside the cache directory. */
const CALL_CACHE_FILE = "calls.sqlite";

/**
 * Open (creating) the call cache database in `dir`. It holds every prompt and answer, so it is
 * private (0600, a new folder 0700); `tightenDir` also takes others' access off an existing
 * folder, for SkillOpt's own cache folders (not a folder the user named in model.cache_dir).
 */
export function openCallCache(dir: string, opts: { tightenDir?: boolean } = {}): Store {
  // The cache grows with every call a user ever made; a full quick_check would read all of it at
  // every start. A file that is not a database still fails at once (reading its schema).
  const store = openStore(join(dir, CALL_CACHE_FILE), {
    migrations: CALLS_MIGRATIONS,
    namespace: CALLS_NAMESPACE,
    checkIntegrity: false,
    private: true,
    // 1 KiB pages: a batch of answers lands on as many leaves of the key index as it has answers
    // (the keys are hashes), and the WAL gets each touched page in full.
    pageSize: 1024,
  });
  if (opts.tightenDir) tightenPrivate(dir);
  replayPending(store);
  return store;
}

/** Add the call tables to an already open store (e.g. a run's store, for its ledger). */
export function useCallTables(store: Store): void {
  migrateStore(store, CALLS_NAMESPACE, CALLS_MIGRATIONS);
  replayPending(store);
}

interface CacheEntry {
  key: string;
  backend: string;
  endpoint: string;
  model: string;
  /** JSON text of the stored response. */
  response: string;
}

/**
 * The stored response for a key, or undefined. Hits are not counted: nothing read `hits`, and its
 * UPDATE rewrote a page of the table (in the WAL and again in the file) for every key served, spread
 * over the whole cache. The column stays, at 0 for new rows.
 */
export function getCachedCall(store: Store, key: string): string | undefined {
  const pending = pendingAnswer(store, key);
  if (pending !== undefined) return pending;
  const compact = compactKey(key);
  const found = compact && findAnswer(store, compact);
  if (found) return found;
  const row = store.db.query("SELECT response FROM call_cache WHERE key = ?").get(key) as { response: string } | null;
  return row?.response;
}

/** Store a complete, successful response (first writer wins: a key's answer never changes). */
export function putCachedCall(store: Store, entry: CacheEntry, now = Date.now()): void {
  // On disk at once (the side file), in the table with the next batch: see journal.ts.
  appendPending(store, {
    t: "cache",
    key: entry.key,
    backend: entry.backend,
    endpoint: entry.endpoint,
    model: entry.model,
    response: entry.response,
    at: now,
  });
}

/** One row of the call ledger: a logical call (with its attempts), paid or served from cache. */
export interface LedgerRow {
  run_id: string;
  at: number;
  role: string;
  stage: string;
  backend: string;
  endpoint: string;
  model: string;
  cache_key: string | null;
  cached: boolean;
  attempts: number;
  status: "ok" | "truncated" | "error";
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  cost_usd: number | null;
  latency_ms: number;
  error: string | null;
}

export function insertLedgerRow(store: Store, row: LedgerRow): void {
  // On disk at once (the side file), in the table with the next batch: see journal.ts.
  appendPending(store, { t: "ledger", row: { ...row, cached: row.cached ? 1 : 0 } });
}

/** The name of a run's ledger in this store (made, 12 random characters, the first time it is asked for). */
export function ledgerName(store: Store, runId: string): string {
  const get = () =>
    (store.db.query("SELECT name FROM call_ledger_names WHERE run_id = ?").get(runId) as { name: string } | null)?.name;
  const found = get();
  if (found !== undefined) return found;
  writing(store, () => {
    store.db.query("INSERT OR IGNORE INTO call_ledger_names (run_id, name) VALUES (?, ?)").run(runId, randomName(9));
  });
  return get()!;
}

/** Keys of the paid calls (not served from the cache) of a run's ledger. */
export function paidCallKeys(store: Store, runId: string): Set<string> {
  flushPending(store);
  const rows = store.db
    .query("SELECT cache_key FROM call_ledger WHERE run_id = ? AND cached = 0 AND cache_key IS NOT NULL")
    .all(runId) as { cache_key: string }[];
  return new Set(rows.map((r) => r.cache_key));
}

/** Record one dropped structured result. */
export function insertDropRow(store: Store, row: { run_id: string; at: number; stage: string; reason: string }): void {
  writing(store, () => {
    store.db
      .query("INSERT INTO call_drops (run_id, at, stage, reason) VALUES (?, ?, ?, ?)")
      .run(row.run_id, row.at, row.stage, row.reason);
  });
}

/** Dropped structured results of a run, oldest first. */
export function dropRows(store: Store, runId: string): { stage: string; reason: string }[] {
  return store.db.query("SELECT stage, reason FROM call_drops WHERE run_id = ? ORDER BY id").all(runId) as {
    stage: string;
    reason: string;
  }[];
}

/** Every ledger row of a run, oldest first. */
export function ledgerRows(store: Store, runId: string): LedgerRow[] {
  flushPending(store);
  const rows = store.db.query("SELECT * FROM call_ledger WHERE run_id = ? ORDER BY id").all(runId) as Array<
    Record<string, unknown>
  >;
  return rows.map((r) => ({
    run_id: String(r.run_id),
    at: Number(r.at),
    role: String(r.role),
    stage: String(r.stage),
    backend: String(r.backend),
    endpoint: String(r.endpoint),
    model: String(r.model),
    cache_key: r.cache_key === null ? null : String(r.cache_key),
    cached: Number(r.cached) === 1,
    attempts: Number(r.attempts),
    status: r.status as LedgerRow["status"],
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    cached_tokens: Number(r.cached_tokens),
    reasoning_tokens: Number(r.reasoning_tokens),
    cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
    latency_ms: Number(r.latency_ms),
    error: r.error === null ? null : String(r.error),
  }));
}
