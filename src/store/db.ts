import { Database } from "bun:sqlite";
import { closeSync, constants, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { StoreError, errorCode, errorMessage, tightenPrivate } from "../lib/index.ts";

/** An ordered list of SQL scripts; index i migrates user_version i → i+1. Never edit a shipped entry. */
export type Migrations = readonly string[];

interface OpenOptions {
  /** Migrations to apply; the schema version is their count. */
  migrations: Migrations;
  /**
   * Track this migration list under a name (table `schema_versions`) instead of PRAGMA
   * user_version, so several modules can keep their own tables in one file.
   */
  namespace?: string;
  /** Milliseconds to wait on a lock held by another process. */
  busyTimeoutMs?: number;
  /** Run `PRAGMA quick_check` when opening an existing file. */
  checkIntegrity?: boolean;
  /** Page size of a file this open creates (an existing file keeps its own). */
  pageSize?: number;
  readonly?: boolean;
  /**
   * The file holds private data (session excerpts, prompts and answers): it is created 0600 in a
   * folder created 0700, and an existing file and its -wal/-shm are tightened to 0600 (SQLite
   * gives -wal/-shm the database file's mode).
   */
  private?: boolean;
}

/**
 * SQLite's page cache per connection, in KiB (its default is 2 000). Our files are written as
 * append-mostly logs and read by key or in one pass, and the pages the operating system already
 * caches cost a read() each: a larger cache saved no measurable time, while a long run's two
 * connections (store and call cache) filled theirs to about 7 MB more peak RSS at ×64 in
 * `bun bench/scale.ts` (124 → 117 MB).
 */
const PAGE_CACHE_KIB = 256;

/** An open database with its file path, for error messages. */
export interface Store {
  db: Database;
  path: string;
  close(): void;
}

const WRITE_FAILURES: Record<string, string> = {
  SQLITE_FULL: "no space left on device",
  SQLITE_IOERR: "I/O error",
  SQLITE_READONLY: "read-only",
  SQLITE_CANTOPEN: "cannot open the file",
};

/** True for a SQLite failure to write the file (disk full, I/O error, read-only), not a bug in a query. */
function isStoreWriteFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && Object.keys(WRITE_FAILURES).some((c) => code === c || code.startsWith(`${c}_`));
}

/**
 * A write to `store` that failed because of the disk, as one line naming the file. Every write path
 * of a run (ledger, drops, cache, checkpoints, run meta) goes through this, so a full disk stops the
 * run with `cannot write <file>: no space left on device` — never an internal error, never a score.
 */
function storeWriteError(store: Pick<Store, "path">, err: unknown): unknown {
  if (!isStoreWriteFailure(err)) return err;
  const code = String((err as { code: string }).code);
  const base = Object.keys(WRITE_FAILURES).find((c) => code === c || code.startsWith(`${c}_`))!;
  return new StoreError(
    `cannot write ${store.path}: ${WRITE_FAILURES[base]} (${code})`,
    { path: store.path, problem: "write", sqlite_code: code },
    {
      cause: err,
      hint: base === "SQLITE_FULL" ? "free some space and rerun with --resume; committed steps are kept" : undefined,
    },
  );
}

/** Run a write against the store, turning a disk failure into storeWriteError. */
export function writing<T>(store: Pick<Store, "path">, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw storeWriteError(store, err);
  }
}

/** Open (creating if needed) a sqlite file in WAL mode and migrate it to the latest schema. */
export function openStore(path: string, opts: OpenOptions): Store {
  const isMemory = path === ":memory:";
  const existed = isMemory ? false : existsSync(path);
  if (!isMemory && !opts.readonly)
    mkdirSync(dirname(path), opts.private ? { recursive: true, mode: 0o700 } : { recursive: true });
  let db: Database;
  try {
    if (opts.private && !existed && !isMemory && !opts.readonly) createPrivate(path);
    db = opts.readonly ? new Database(path, { readonly: true }) : new Database(path, { create: true, readwrite: true });
  } catch (err) {
    throw new StoreError(
      `cannot open ${path}: ${errorMessage(err)}`,
      { path, problem: "open", sqlite_code: errorCode(err) },
      { cause: err, hint: "check that the directory exists and is writable" },
    );
  }
  const busyMs = Math.max(0, Math.floor(opts.busyTimeoutMs ?? 10_000));
  try {
    db.exec(`PRAGMA busy_timeout = ${busyMs}`);
    if (!existed && opts.pageSize && !opts.readonly) db.exec(`PRAGMA page_size = ${opts.pageSize}`);
    if (existed && opts.checkIntegrity !== false) whileBusy(busyMs, () => assertIntact(db, path));
    db.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
    // A batch of pending rows (src/store/journal.ts: up to 4 MiB in one transaction) touches more
    // pages than the page cache holds; spilled to the WAL mid-transaction, a page touched again is
    // written again. Kept in memory until the commit, each is written once: the call cache's WAL at
    // ×64 in `bun bench/scale.ts` went from 18.2 to 7.4 MB (strace), for a few MB of memory per flush.
    db.exec("PRAGMA cache_spill = OFF");
    if (!opts.readonly) {
      // Switching a fresh file to WAL needs a moment alone with it, and SQLite does not wait for
      // that through busy_timeout: retry while another process is setting the same file up.
      const mode = db.query("PRAGMA journal_mode").get() as { journal_mode: string } | null;
      if (!isMemory && mode?.journal_mode !== "wal") whileBusy(busyMs, () => db.exec("PRAGMA journal_mode = WAL"));
      db.exec("PRAGMA synchronous = NORMAL");
      db.exec("PRAGMA foreign_keys = ON");
      whileBusy(busyMs, () => {
        if (opts.namespace) migrateNamespace(db, path, opts.namespace, opts.migrations);
        else migrate(db, path, opts.migrations, userVersionSlot(db));
      });
    }
  } catch (err) {
    db.close();
    if (err instanceof StoreError) throw err;
    if (isStoreWriteFailure(err)) throw storeWriteError({ path }, err);
    throw new StoreError(
      `cannot use ${path}: ${errorMessage(err)}`,
      { path, problem: "unusable", sqlite_code: errorCode(err) },
      { cause: err, hint: "the file may be corrupt or not a SkillOpt database; move it aside and rerun" },
    );
  }
  if (opts.private && !isMemory && !opts.readonly)
    for (const p of [path, `${path}-wal`, `${path}-shm`]) tightenPrivate(p);
  return { db, path, close: () => db.close() };
}

/** An empty file (SQLite opens it as an empty database) created with mode 0600; one already there is kept. */
function createPrivate(path: string): void {
  try {
    closeSync(
      openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600),
    );
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
}

/** Run `fn`, retrying with a short backoff while SQLite reports the file busy, up to `budgetMs`. */
function whileBusy<T>(budgetMs: number, fn: () => T): T {
  const deadline = Date.now() + budgetMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      return fn();
    } catch (err) {
      const busy =
        /database is locked|SQLITE_BUSY/i.test(errorMessage(err)) || (err as { code?: string }).code === "SQLITE_BUSY";
      if (!busy || Date.now() + wait > deadline) throw err;
      Bun.sleepSync(wait);
    }
  }
}

function assertIntact(db: Database, path: string): void {
  let result: string;
  try {
    const row = db.query("PRAGMA quick_check").get() as Record<string, string> | null;
    result = row ? String(Object.values(row)[0]) : "no result";
  } catch (err) {
    throw new StoreError(
      `${path} is not a valid SQLite database (${errorMessage(err)})`,
      { path, problem: "corrupt", sqlite_code: errorCode(err) },
      { cause: err, hint: "the file is corrupt; move it aside (it is not rebuilt automatically) and rerun" },
    );
  }
  if (result !== "ok") {
    const problems = result.split("\n").filter((l) => l.trim() && !l.startsWith("***"));
    const first = problems[0] ?? result;
    throw new StoreError(
      `${path} failed its integrity check (${problems.length} problem${problems.length === 1 ? "" : "s"}; first: ${first.trim()})`,
      { path, problem: "corrupt" },
      {
        hint: "the file is corrupt; move it aside (it is not rebuilt automatically) and rerun",
      },
    );
  }
}

/** Where a migration list records how far it got: PRAGMA user_version, or a row of schema_versions. */
interface VersionSlot {
  label: string;
  get(): number;
  set(v: number): void;
}

function userVersionSlot(db: Database): VersionSlot {
  return {
    label: "schema version",
    get: () => (db.query("PRAGMA user_version").get() as { user_version: number }).user_version,
    set: (v) => db.exec(`PRAGMA user_version = ${v}`),
  };
}

function namespaceSlot(db: Database, namespace: string): VersionSlot {
  const exists = () =>
    db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'").get() !== null;
  return {
    label: `${namespace} schema version`,
    get: () =>
      exists()
        ? ((
            db.query("SELECT version FROM schema_versions WHERE namespace = ?").get(namespace) as {
              version: number;
            } | null
          )?.version ?? 0)
        : 0,
    // Created in the first migration's own transaction: a process killed while creating a store
    // leaves it with every table of that step or none, never this table alone.
    set: (v) => {
      db.exec("CREATE TABLE IF NOT EXISTS schema_versions (namespace TEXT PRIMARY KEY, version INTEGER NOT NULL)");
      db.query(
        "INSERT INTO schema_versions (namespace, version) VALUES (?, ?) ON CONFLICT(namespace) DO UPDATE SET version = excluded.version",
      ).run(namespace, v);
    },
  };
}

function migrate(db: Database, path: string, migrations: Migrations, slot: VersionSlot): void {
  const current = slot.get();
  if (current > migrations.length) {
    throw new StoreError(
      `${path} has ${slot.label} ${current}, newer than this skillopt understands (${migrations.length})`,
      { path, problem: "newer_version", version: current, supported: migrations.length },
      { hint: "upgrade skillopt to open this file" },
    );
  }
  for (let v = current; v < migrations.length; v++) {
    const sql = migrations[v]!;
    db.transaction(() => {
      // Another process may have applied this step while we waited for the write lock.
      if (slot.get() > v) return;
      db.exec(sql);
      slot.set(v + 1);
    }).immediate();
  }
}

function migrateNamespace(db: Database, path: string, namespace: string, migrations: Migrations): void {
  migrate(db, path, migrations, namespaceSlot(db, namespace));
}

/** Open a second namespace's migrations on an already open store. */
export function migrateStore(store: Store, namespace: string, migrations: Migrations): void {
  writing(store, () => migrateNamespace(store.db, store.path, namespace, migrations));
}

/** Run `fn` in an IMMEDIATE transaction (takes the write lock up front, so two writers never deadlock). */
export function inTransaction<T>(store: Store, fn: () => T): T {
  return store.db.transaction(fn).immediate();
}

/** Current schema version of an open store. */
export function schemaVersion(store: Store): number {
  return userVersionSlot(store.db).get();
}
