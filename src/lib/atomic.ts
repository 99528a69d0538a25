import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { processAlive } from "./process.ts";

let counter = 0;

/** The temp files of atomic writes: `.<pid>.<n>.<ms>.tmp` beside the file they become. */
const TEMP_NAME = /^\.(\d+)\.\d+\.\d+\.tmp$/;

/** A fresh temp file name beside `path` (TEMP_NAME's form, so removeOrphanTemps knows it). */
function tempBeside(path: string): string {
  counter += 1;
  return join(dirname(path), `.${process.pid}.${counter}.${Date.now()}.tmp`);
}

/** Write all of `bytes` to `fd` (writeSync may write fewer). */
function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * Remove the temp files writeFileAtomic left in `dir` because its process died between creating
 * one and renaming it into place (kill -9, power loss). Only files of processes that no longer run
 * are removed. Returns how many were.
 */
export function removeOrphanTemps(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const m = TEMP_NAME.exec(name);
    if (!m || processAlive(Number(m[1]))) continue; // a live writer: this process or another
    rmSync(join(dir, name), { force: true });
    removed++;
  }
  return removed;
}

/**
 * Create `path` holding `data` only if it does not exist yet, all at once: the bytes are written
 * and synced to a temp file (mode `mode`), which is then hard-linked to `path`. A process killed
 * at any moment leaves either no file or the whole one (never an empty or short file), and of two
 * processes creating it at once exactly one succeeds. Returns false when `path` already existed.
 */
export function createExclusive(path: string, data: string, mode: number): boolean {
  const tmp = tempBeside(path);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    mode,
  );
  try {
    try {
      writeAll(fd, new TextEncoder().encode(data));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Small string parts (a page rendered in pieces) gathered into chunks of about `size` characters,
 * for writes and network sends of a useful size; the last chunk may be shorter, none is empty.
 */
export function* gatherParts(parts: Iterable<string>, size = 65_536): Generator<string> {
  let pending = "";
  for (const part of parts) {
    pending += part;
    if (pending.length >= size) {
      yield pending;
      pending = "";
    }
  }
  if (pending) yield pending;
}

interface AtomicWriteOptions {
  /**
   * fsync the data before the rename (default true). Files derived from a store that is itself
   * durable skip it: a crash may lose their latest version, never tear it, and they are rebuilt.
   */
  durable?: boolean;
  /**
   * Permission bits of the file (default 0644 less the umask). Given, they are set exactly on the
   * temp file before it becomes visible, and the folders created for it get 0700: private data
   * (0600) is never readable by others, not even for a moment.
   */
  mode?: number;
  /** The caller has just created the file's folder (several files of one folder in one pass). */
  folderExists?: boolean;
}

/**
 * Write a file through a temp file in the same directory and rename it into place. `data` may be
 * an iterable of string parts (a large page rendered in pieces): each is written as it comes, so
 * the whole text is never held at once.
 */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array | Iterable<string>,
  opts: AtomicWriteOptions = {},
): void {
  if (!opts.folderExists)
    mkdirSync(dirname(path), opts.mode === undefined ? { recursive: true } : { recursive: true, mode: 0o700 });
  const tmp = tempBeside(path);
  try {
    const fd = openSync(tmp, "w", opts.mode ?? 0o644);
    try {
      if (opts.mode !== undefined && process.platform !== "win32") fchmodSync(fd, opts.mode & 0o777);
      const write = (bytes: Uint8Array) => writeAll(fd, bytes);
      const encoder = new TextEncoder();
      if (typeof data === "string") write(encoder.encode(data));
      else if (data instanceof Uint8Array) write(data);
      else {
        for (const chunk of gatherParts(data)) write(encoder.encode(chunk));
      }
      if (opts.durable !== false) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    // A write on a descriptor fails without a path (ENOSPC on writeSync): name the file we were writing.
    const e = err as NodeJS.ErrnoException;
    if (e && typeof e === "object" && typeof e.code === "string" && (e.path === undefined || e.path === tmp))
      e.path = path;
    throw err;
  }
}

/**
 * Put at `path` the file `source` already holds, as a second name for it (a hard link made beside
 * `path` and renamed into place, so a reader sees the old file or the new, never a torn one): no
 * byte is written. Where links cannot be made (another file system, one without links), `text` is
 * written instead. For derived files with the same content as one written before (a skill version
 * that did not change); the caller must know `source` still holds `text`.
 */
export function shareFileAtomic(source: string, path: string, text: string): void {
  const tmp = tempBeside(path);
  try {
    linkSync(source, tmp);
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true });
    writeFileAtomic(path, text, { durable: false });
  }
}

/** Atomic JSON write with a trailing newline. */
export function writeJsonAtomic(path: string, value: unknown, opts: AtomicWriteOptions = {}): void {
  writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, opts);
}
