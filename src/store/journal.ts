import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { errorCode, log, processAlive, StoreError } from "../lib/index.ts";
import { inTransaction, type Store, writing } from "./db.ts";
import { type Packed, packText, unpackText } from "./packed.ts";

/**
 * The rows of model calls (call-cache answers and ledger rows) on their way into a store.
 *
 * A model call is the cost, and a completed call must never be paid again after a kill -9: its
 * answer has to be on disk before anything uses it. Committing it to SQLite alone, one autocommit
 * per row, wrote about 26 KB per call (every page a row touches, its indexes and the counter of
 * AUTOINCREMENT, into the WAL and again into the file). Instead each row is appended to this
 * process's side file with one write(2) (the kernel has it: a killed process loses nothing it
 * wrote) and the rows go into the database together, in one transaction: at each checkpoint of a
 * run (in the checkpoint's own transaction), when enough are pending, and when the store closes.
 * Opening the store applies what a dead process left in its side file (an answer whose key is
 * already stored is skipped: the first writer wins; a ledger row already in the table is not added
 * twice), then removes the file. After an apply the side file keeps the applied rows until it
 * passes KEEP_BYTES, so a replay also meets rows that are already in the database.
 */
type PendingRow =
  | { t: "cache"; key: string; backend: string; endpoint: string; model: string; response: string; at: number }
  | { t: "ledger"; row: Record<string, string | number | null> };

/**
 * A side file is emptied after an apply only once it holds this many bytes: the rows it keeps are
 * already in the database (a replay skips them), and emptying it at every checkpoint put the next
 * rows on a new page of the page cache, a 4 KiB page written per checkpoint for a few rows.
 */
const KEEP_BYTES = 64 * 1024;

/** Pending rows are applied once this many are waiting, or this many bytes of them. */
const FLUSH_ROWS = 4096;
const FLUSH_BYTES = 4 * 2 ** 20;

interface Journal {
  file: string;
  fd: number | undefined;
  rows: PendingRow[];
  bytes: number;
  /** Bytes in the side file (applied rows it still holds included). */
  fileBytes: number;
  /** Origins (backend, endpoint, model) the side file has declared, by their number in it. */
  origins: Map<string, number>;
  /** Keys of the cache answers this journal holds (in `answersByFile` until applied). */
  answers: string[];
}

const journals = new WeakMap<Store, Journal>();
/**
 * Cache answers not yet in their table, by database file then key: every store of this process on
 * that file sees them (two runs in one process, an MCP server's tools), so none pays for a call
 * another already has. Another process sees them once they are applied.
 */
const answersByFile = new Map<string, Map<string, string>>();
/** Side files of this process's open stores: never replayed by another store of the same file. */
const liveFiles = new Set<string>();
let serial = 0;

function sideFilePrefix(store: Store): string {
  return `${basename(store.path)}.pending-`;
}

function journalOf(store: Store): Journal {
  let j = journals.get(store);
  if (!j) {
    const file = join(dirname(store.path), `${sideFilePrefix(store)}${process.pid}-${++serial}`);
    j = { file, fd: undefined, rows: [], bytes: 0, fileBytes: 0, origins: new Map(), answers: [] };
    journals.set(store, j);
    liveFiles.add(file);
    // Closing the store applies what is pending first and removes the side file.
    const close = store.close;
    store.close = () => {
      try {
        closePending(store);
      } finally {
        close();
      }
    };
  }
  return j;
}

/** Append a row: on disk (this process's side file) now, in the database at the next apply. */
export function appendPending(store: Store, row: PendingRow): void {
  if (store.path === ":memory:") {
    writing(store, () => applyRows(store, [row]));
    return;
  }
  const j = journalOf(store);
  const { line, origin } = lineOf(row, j.origins);
  try {
    j.fd ??= openSync(j.file, "a", 0o600);
    const bytes = Buffer.from(line);
    for (let done = 0; done < bytes.length; ) done += writeSync(j.fd, bytes, done, bytes.length - done);
  } catch (err) {
    // A full disk stops the run naming the file, as a failed SQLite write does (never a score).
    const code = errorCode(err) ?? "";
    const what = code === "ENOSPC" || code === "EDQUOT" ? "no space left on device" : (errorCode(err) ?? String(err));
    throw new StoreError(
      `cannot write ${j.file}: ${what} (${code || "error"})`,
      { path: j.file, problem: "write" },
      {
        cause: err,
        hint: code === "ENOSPC" ? "free some space and rerun with --resume; committed steps are kept" : undefined,
      },
    );
  }
  if (origin) j.origins.set(origin, j.origins.size);
  j.rows.push(row);
  j.bytes += line.length;
  j.fileBytes += line.length;
  if (row.t === "cache") {
    const answers = answersByFile.get(store.path) ?? new Map<string, string>();
    answersByFile.set(store.path, answers);
    answers.set(row.key, row.response);
    j.answers.push(row.key);
  }
  if (j.rows.length >= FLUSH_ROWS || j.bytes >= FLUSH_BYTES) flushPending(store);
}

/** A cache answer appended but not yet applied, by key. */
export function pendingAnswer(store: Store, key: string): string | undefined {
  return answersByFile.get(store.path)?.get(key);
}

/**
 * Apply the pending rows in one transaction, then empty the side file. A kill between the commit
 * and the truncation leaves rows that are already in the database: the replay skips them.
 */
export function flushPending(store: Store): void {
  const j = journals.get(store);
  if (!j || j.rows.length === 0) return;
  const rows = j.rows;
  // Inside a caller's transaction the side file would be emptied before that commit: wait for later.
  if (store.db.inTransaction) return;
  writing(store, () => inTransaction(store, () => applyRows(store, rows)));
  const answers = answersByFile.get(store.path);
  for (const key of j.answers) answers?.delete(key);
  if (answers?.size === 0) answersByFile.delete(store.path);
  j.rows = [];
  j.bytes = 0;
  j.answers = [];
  emptyIfLarge(store, j);
}

/**
 * Apply the pending rows inside the caller's open transaction (a checkpoint's: one commit for the
 * step's rows and its state). Returns what to call once that transaction has committed: it empties
 * the side file. A transaction that rolls back leaves the rows pending.
 */
export function applyPendingInTransaction(store: Store): () => void {
  const j = journals.get(store);
  if (!j || j.rows.length === 0) return () => {};
  const { rows } = j;
  applyRows(store, rows);
  return () => {
    // Rows appended since (none: the caller holds the thread) stay pending.
    j.rows = j.rows.slice(rows.length);
    const answers = answersByFile.get(store.path);
    for (const key of j.answers) answers?.delete(key);
    j.answers = [];
    j.bytes = 0;
    if (j.rows.length === 0) emptyIfLarge(store, j);
  };
}

/** Empty the side file (every row applied) once it has grown past KEEP_BYTES. */
function emptyIfLarge(store: Store, j: Journal): void {
  if (j.fd === undefined || j.fileBytes < KEEP_BYTES) return;
  writing(store, () => ftruncateSync(j.fd!, 0));
  j.fileBytes = 0;
  j.origins.clear();
}

/** Apply the pending rows and remove the side file (before the store closes). */
function closePending(store: Store): void {
  const j = journals.get(store);
  if (!j) return;
  let applied = false;
  try {
    flushPending(store);
    applied = true;
  } catch (err) {
    // The rows stay in the side file (they are on disk): the next open of this store applies them.
    // The failure that stopped the run was already raised by the write that met it.
    log.debug(`${j.file}: pending call rows kept for the next open: ${String(err)}`);
  } finally {
    if (j.fd !== undefined) closeSync(j.fd);
    j.fd = undefined;
    if (applied) rmSync(j.file, { force: true });
    liveFiles.delete(j.file);
    journals.delete(store);
  }
}

const LEDGER_COLUMNS = [
  "run_id",
  "at",
  "role",
  "stage",
  "backend",
  "endpoint",
  "model",
  "cache_key",
  "cached",
  "attempts",
  "status",
  "prompt_tokens",
  "completion_tokens",
  "cached_tokens",
  "reasoning_tokens",
  "cost_usd",
  "latency_ms",
  "error",
] as const;

/**
 * A row as its side-file line: an array of values in column order, without the names (a ledger row
 * as an object was twice as long), and backend, endpoint and model as the number of an origin the
 * file declared before (["o", backend, endpoint, model], written with the first row that uses it,
 * in the same write): ["c", key, origin, response, at] (with a trailing 1 when the response's model
 * is elided: elideModel) and ["L", origin, ...the other columns].
 * Lines written by earlier versions (objects; "c" and "l" arrays with the three strings) still read.
 */
function lineOf(row: PendingRow, origins: ReadonlyMap<string, number>): { line: string; origin?: string } {
  const [backend, endpoint, model] =
    row.t === "cache"
      ? [row.backend, row.endpoint, row.model]
      : [row.row.backend, row.row.endpoint, row.row.model].map((v) => String(v ?? ""));
  const name = JSON.stringify([backend, endpoint, model]);
  const known = origins.get(name);
  const n = known ?? origins.size;
  const declare = known === undefined ? `${JSON.stringify(["o", backend, endpoint, model])}\n` : "";
  const values = row.t === "cache" ? cacheLine(row, n) : ["L", n, ...LOG_COLUMNS.map((c) => row.row[c] ?? null)];
  return { line: `${declare}${JSON.stringify(values)}\n`, ...(known === undefined ? { origin: name } : {}) };
}

/** ["c", key, origin, response, at], or with the response's model elided: [..., at, 1]. */
function cacheLine(row: Extract<PendingRow, { t: "cache" }>, n: number): unknown[] {
  const cut = elideModel(row.response, row.model);
  return cut === undefined ? ["c", row.key, n, row.response, row.at] : ["c", row.key, n, cut, row.at, 1];
}

const ORIGIN_COLUMNS: ReadonlySet<string> = new Set(["backend", "endpoint", "model"]);

/** The ledger's columns that call_log keeps as they are (backend, endpoint and model are its origin). */
const LOG_COLUMNS = LEDGER_COLUMNS.filter((c) => !ORIGIN_COLUMNS.has(c));

/** A side file's line as a row (undefined for an origin's line, which `origins` takes). */
function rowOf(line: unknown, origins: string[][]): PendingRow | undefined {
  if (!Array.isArray(line)) return line as PendingRow;
  const [t, ...v] = line as [string, ...(string | number | null)[]];
  if (t === "o") {
    origins.push(v.map(String));
    return undefined;
  }
  if (t === "c" && typeof v[1] === "number") {
    const [key, n, response, at, elided] = v as [string, number, string, number, number | undefined];
    const [backend, endpoint, model] = origins[n]!;
    const text = elided ? restoreModel(response, model!) : response;
    return { t: "cache", key, backend: backend!, endpoint: endpoint!, model: model!, response: text, at };
  }
  if (t === "c") {
    const [key, backend, endpoint, model, response, at] = v as [string, string, string, string, string, number];
    return { t: "cache", key, backend, endpoint, model, response, at };
  }
  if (t === "L") {
    const [n, ...rest] = v as [number, ...(string | number | null)[]];
    const [backend, endpoint, model] = origins[n]!;
    return {
      t: "ledger",
      row: {
        ...Object.fromEntries(LOG_COLUMNS.map((c, i) => [c, rest[i] ?? null])),
        backend,
        endpoint,
        model,
      } as Record<string, string | number | null>,
    };
  }
  return { t: "ledger", row: Object.fromEntries(LEDGER_COLUMNS.map((c, i) => [c, v[i] ?? null])) };
}

/** A 64-hex cache key as its 32 bytes (the compact table's key), or undefined for any other key. */
export function compactKey(key: string): Uint8Array | undefined {
  return /^[0-9a-f]{64}$/.test(key) ? Buffer.from(key, "hex") : undefined;
}

/**
 * An answer's text without the model it names when that is the model of its origin and ends it, as
 * the stored answers of the model layer do (`…,"model":"<model>"}`): about 60 bytes of a short
 * answer, in its side-file line, its row and the row's copy in the WAL. Undefined when it does not.
 */
function elideModel(text: string, model: string): string | undefined {
  const tail = `,"model":${JSON.stringify(model)}}`;
  return text.endsWith(tail) ? text.slice(0, -tail.length) : undefined;
}

function restoreModel(elided: string, model: string): string {
  return `${elided},"model":${JSON.stringify(model)}}`;
}

/**
 * A cache answer as call_answers stores it: its model elided (elideModel) and the rest deflated
 * when that is shorter (long answers: analyses, proposals), else its text. findAnswer reads it.
 */
function packAnswer(text: string, model: string): { response: Packed; elided: number } {
  const cut = elideModel(text, model);
  return {
    response: packText(cut ?? text, { level: 6, ratio: 0.9, minChars: 160 }),
    elided: cut === undefined ? 0 : 1,
  };
}

/** The first 6 bytes of a compact key as a number: call_answers' index (the key is compared on reading). */
function tagOf(key: Uint8Array): number {
  return Buffer.from(key.buffer, key.byteOffset, key.byteLength).readUIntBE(0, 6);
}

/** The answer for a compact key from call_answers, as it was put, or undefined. */
export function findAnswer(store: Store, key: Uint8Array): string | undefined {
  // The tag finds the rows through the index, the key (compared by SQLite) picks the one. The
  // origin's model is read only for an answer that elided it: with the join in this query, a miss
  // (most lookups of a fresh cache, and every row a batch adds) took 6.5 µs instead of 1.5.
  const row = store.db
    .query("SELECT response, elided, origin FROM call_answers WHERE tag = ? AND key = ?")
    .get(tagOf(key), key) as { response: Packed; elided: number; origin: number } | null;
  if (!row) return undefined;
  const text = unpackText(row.response);
  if (!row.elided) return text;
  const origin = store.db.query("SELECT model FROM call_origins WHERE id = ?").get(row.origin) as {
    model: string;
  } | null;
  return origin ? restoreModel(text, origin.model) : undefined;
}

/** The id of a call_origins row (added if new), remembered in `ids` for the rows of one batch. */
function originId(store: Store, ids: Map<string, number>, backend: string, endpoint: string, model: string): number {
  const name = JSON.stringify([backend, endpoint, model]);
  let id = ids.get(name);
  if (id === undefined) {
    store.db
      .query("INSERT OR IGNORE INTO call_origins (backend, endpoint, model) VALUES (?, ?, ?)")
      .run(backend, endpoint, model);
    id = (
      store.db
        .query("SELECT id FROM call_origins WHERE backend = ? AND endpoint = ? AND model = ?")
        .get(backend, endpoint, model) as { id: number }
    ).id;
    ids.set(name, id);
  }
  return id;
}

function applyRows(store: Store, rows: readonly PendingRow[], replay = false): void {
  const cache = store.db.query(
    "INSERT OR IGNORE INTO call_cache (key, backend, endpoint, model, response, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const answers = store.db.query(
    "INSERT INTO call_answers (tag, key, origin, response, created_at, elided) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const origins = new Map<string, number>();
  const ledger = store.db.query(
    `INSERT INTO call_log (id, origin, ${LOG_COLUMNS.join(", ")}) VALUES (?, ?, ${LOG_COLUMNS.map(() => "?").join(", ")})`,
  );
  // call_log's ids continue after those of the rows earlier versions wrote (call_ledger_v1).
  let nextId: number | undefined;
  // A replayed row may already be in the table (killed after the commit, before the truncation):
  // the rows of the table from the replay's earliest time on, read in one scan.
  const identity = (r: Record<string, unknown>) =>
    JSON.stringify(["run_id", "stage", "at", "role", "cache_key", "latency_ms", "attempts"].map((c) => r[c] ?? null));
  let seen: Set<string> | undefined;
  if (replay) {
    const ats = rows.flatMap((r) => (r.t === "ledger" ? [Number(r.row.at)] : []));
    seen = new Set();
    if (ats.length)
      for (const r of store.db
        .query("SELECT run_id, stage, at, role, cache_key, latency_ms, attempts FROM call_ledger WHERE at >= ?")
        .all(Math.min(...ats)) as Record<string, unknown>[])
        seen.add(identity(r));
  }
  for (const r of rows) {
    if (r.t === "cache") {
      const key = compactKey(r.key);
      // First writer wins, as INSERT OR IGNORE does for call_cache (a replay, another process).
      if (key && findAnswer(store, key) === undefined) {
        const { response, elided } = packAnswer(r.response, r.model);
        answers.run(tagOf(key), key, originId(store, origins, r.backend, r.endpoint, r.model), response, r.at, elided);
      } else if (!key) cache.run(r.key, r.backend, r.endpoint, r.model, r.response, r.at);
    } else {
      if (seen?.has(identity(r.row))) continue;
      nextId ??=
        (
          store.db
            .query(
              "SELECT max(COALESCE((SELECT max(id) FROM call_ledger_v1), 0), COALESCE((SELECT max(id) FROM call_log), 0)) AS n",
            )
            .get() as { n: number }
        ).n + 1;
      const origin = originId(
        store,
        origins,
        String(r.row.backend ?? ""),
        String(r.row.endpoint ?? ""),
        String(r.row.model ?? ""),
      );
      const key = typeof r.row.cache_key === "string" ? (compactKey(r.row.cache_key) ?? r.row.cache_key) : null;
      ledger.run(nextId++, origin, ...LOG_COLUMNS.map((c) => (c === "cache_key" ? key : (r.row[c] ?? null))));
    }
  }
}

/**
 * Apply and remove the side files that processes no longer running left beside `store` (a kill
 * -9 before their rows were applied). A torn last line (killed mid-write) is not a row.
 */
export function replayPending(store: Store): void {
  if (store.path === ":memory:") return;
  const dir = dirname(store.path);
  const prefix = sideFilePrefix(store);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(dir, name);
    const pid = Number(name.slice(prefix.length).split("-")[0]);
    if (liveFiles.has(file) || (pid !== process.pid && processAlive(pid)) || !existsSync(file)) continue;
    const rows: PendingRow[] = [];
    const origins: string[][] = [];
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (!line) continue;
      try {
        const row = rowOf(JSON.parse(line), origins);
        if (row) rows.push(row);
      } catch {
        // the line a kill cut short: its call never completed from the store's view
      }
    }
    writing(store, () => inTransaction(store, () => applyRows(store, rows, true)));
    rmSync(file, { force: true });
    if (rows.length) log.debug(`applied ${rows.length} pending call rows left by process ${pid} (${file})`);
  }
}
