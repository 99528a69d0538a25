import { constants, Database } from "bun:sqlite";
import { closeSync, copyFileSync, existsSync, mkdtempSync, openSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { errorMessage, log } from "../../lib/index.ts";
import type { Candidate, ReadOutcome } from "./source.ts";

/**
 * An agent's SQLite database opened read-only (never the agent's write lock; `query_only` on).
 * If the live file cannot be opened read-only (locked, missing -shm permissions), a private copy
 * of it and its -wal/-shm sidecars is opened instead and removed on close (spec §3.6).
 */
export interface AgentDb {
  db: Database;
  close(): void;
}

/** True when the file's header says WAL journal mode (header bytes 18–19 are 2). */
function isWalFile(path: string): boolean {
  const fd = openSync(path, "r");
  try {
    const head = Buffer.alloc(20);
    readSync(fd, head, 0, 20, 0);
    return head[18] === 2 && head[19] === 2;
  } finally {
    closeSync(fd);
  }
}

export function fileUri(path: string): string {
  let p = path.replaceAll("\\", "/");
  if (/^[A-Za-z]:/.test(p)) p = `/${p}`;
  return `file:${p.replace(/[%?#]/g, (c) => `%${c.charCodeAt(0).toString(16)}`)}?immutable=1`;
}

/**
 * Open read-only. A WAL database with no -wal file has no writer and nothing uncheckpointed: it
 * is opened immutable, so SQLite creates no -wal/-shm beside the agent's file.
 */
function openReadOnly(path: string): Database {
  if (isWalFile(path) && !existsSync(`${path}-wal`)) {
    return new Database(fileUri(path), constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
  }
  return new Database(path, { readonly: true });
}

export function openAgentDb(path: string, probe: string): AgentDb | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const db = openReadOnly(path);
    try {
      db.exec("PRAGMA query_only = ON");
      db.exec("PRAGMA busy_timeout = 2000");
      db.query(probe).all();
      return { db, close: () => db.close() };
    } catch (err) {
      db.close();
      throw err;
    }
  } catch (err) {
    log.withTag("harvest").debug(`read-only open of ${path} failed (${errorMessage(err)}); reading a private copy`);
  }
  const dir = mkdtempSync(join(tmpdir(), "skillopt-harvest-db-"));
  try {
    const copy = join(dir, basename(path));
    copyFileSync(path, copy);
    for (const ext of ["-wal", "-shm"]) if (existsSync(path + ext)) copyFileSync(path + ext, copy + ext);
    const db = new Database(copy, { readonly: true });
    db.exec("PRAGMA query_only = ON");
    db.query(probe).all();
    return {
      db,
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    log.withTag("harvest").warn(`cannot read ${path}: ${errorMessage(err)}`);
    return undefined;
  }
}

/** The state mark of one database row session: its update time is both high-water and revision. */
export function rowMark(c: Candidate): ReadOutcome["mark"] {
  return {
    session_id: c.sessionId,
    project: c.project,
    high_water_ms: c.mtimeMs,
    revision: c.revision,
    offset: 0,
    size: c.size,
    mtime_ms: c.mtimeMs,
    head_hash: "",
  };
}
