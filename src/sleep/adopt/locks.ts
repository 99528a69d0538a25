import {
  chmodSync,
  closeSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { processAlive, StagingError, sha256, userStateDir } from "../../lib/index.ts";
import { readRegularFile } from "./read.ts";

/** The per-night lock file every adoption, rollback and recovery of that night takes first. */
export const STAGING_LOCK = ".adopt-skills.lock";

/** A held lock file. */
export interface Lock {
  path: string;
  token: string;
}

/** A lock file whose content cannot name a holder is only treated as abandoned after this long. */
const UNREADABLE_LOCK_GRACE_MS = 60_000;

/**
 * Take an exclusive lock file (content `pid=<n>`, 0600). The file is created with its content in
 * one atomic step (written to a private temp file, then hard-linked into place: link(2) fails
 * with EEXIST like O_CREAT|O_EXCL), so no other process can ever see an empty lock and mistake it
 * for an abandoned one. A lock whose holder is no longer running is stale (spec §12.2) and is
 * broken by renaming it aside: rename is atomic, so of two processes breaking the same stale lock
 * only one moves it, and a breaker that finds it moved a fresh lock puts it back.
 */
export function acquireLock(path: string, what: string): Lock {
  const token = `pid=${process.pid}\nnonce=${sha256(`${process.pid}:${performance.now()}:${Math.random()}`).slice(0, 16)}\n`;
  const tmp = `${path}.${process.pid}.${sha256(token).slice(0, 8)}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, token);
  } finally {
    closeSync(fd);
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(tmp, path);
        return { path, token };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST")
          throw new StagingError(`cannot create lock ${path}: ${String(err)}`, { data: { path } });
      }
      const seen = readLock(path);
      if (seen === undefined) continue;
      const pid = holderPidOf(seen.text);
      if (pid !== undefined && processAlive(pid))
        throw new StagingError(`${what} is already in progress (pid ${pid} holds ${path})`, { data: { path, pid } });
      if (pid === undefined && Date.now() - seen.mtimeMs < UNREADABLE_LOCK_GRACE_MS) {
        throw new StagingError(`${what} is already in progress (${path} is held)`, { data: { path } });
      }
      const aside = `${path}.stale.${process.pid}`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      if (readLock(aside)?.text !== seen.text) {
        // Another process replaced the stale lock between our read and our rename: give it back.
        try {
          linkSync(aside, path);
        } catch {
          // A third process took the path meanwhile; it holds the lock now.
        }
        rmSync(aside, { force: true });
        throw new StagingError(`${what} is already in progress (${path} is held)`, { data: { path } });
      }
      rmSync(aside, { force: true });
    }
    throw new StagingError(`${what}: cannot take ${path}; if no adoption is running, remove it by hand`, {
      data: { path },
    });
  } finally {
    rmSync(tmp, { force: true });
  }
}

function readLock(path: string): { text: string; mtimeMs: number } | undefined {
  try {
    // Never through a link, never blocking on a FIFO someone planted in its place.
    const bytes = readRegularFile(path, { maxBytes: 4096 });
    return { text: bytes.toString("utf8"), mtimeMs: lstatSync(path).mtimeMs };
  } catch {
    return undefined;
  }
}

function holderPidOf(text: string): number | undefined {
  const m = /pid=(\d+)/.exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Release a lock only if it is still ours. */
export function releaseLock(lock: Lock): void {
  try {
    if (readRegularFile(lock.path, { maxBytes: 4096 }).toString("utf8") === lock.token)
      rmSync(lock.path, { force: true });
  } catch {
    // Already gone: nothing to release.
  }
}

/**
 * Lock root shared across nights and state directories: `<XDG state home>/skillopt-sleep/adopt-locks/`
 * (per user, not the shared temp dir, where another user could pre-create it to block every
 * adoption). It must be a real directory owned by this user with mode 0700; one of ours with a
 * looser mode is tightened, one owned by someone else is refused.
 */
export function lockRoot(base = userStateDir()): string {
  const root = join(base, "skillopt-sleep", "adopt-locks");
  if (!existsSync(root)) mkdirSync(root, { recursive: true, mode: 0o700 });
  const st = lstatSync(root);
  if (!st.isDirectory() || st.isSymbolicLink())
    throw new StagingError(`adoption lock directory ${root} must be a real directory, not a link or file`, {
      data: { path: root },
    });
  if (process.platform !== "win32") {
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) {
      throw new StagingError(
        `adoption lock directory ${root} is owned by another user (uid ${st.uid}); refusing to use it — remove it`,
        { data: { path: root } },
      );
    }
    if ((st.mode & 0o777) !== 0o700) chmodSync(root, 0o700);
    if ((lstatSync(root).mode & 0o777) !== 0o700)
      throw new StagingError(`adoption lock directory ${root} must have mode 0700`, { data: { path: root } });
  }
  return root;
}

/** Lock file of one live target (NFC + case-fold of the path, so one file has one lock). */
function targetLockPath(root: string, livePath: string): string {
  return join(root, `${sha256(livePath.normalize("NFC").toLowerCase())}.lock`);
}

/** Take the staging lock, then every target lock in sorted order; release all on failure. */
export function lockAll(stagingDir: string, livePaths: readonly string[], what: string): Lock[] {
  const held: Lock[] = [];
  try {
    held.push(acquireLock(join(stagingDir, STAGING_LOCK), what));
    const root = lockRoot();
    for (const p of [...new Set(livePaths.map((x) => targetLockPath(root, x)))].sort()) held.push(acquireLock(p, what));
    return held;
  } catch (err) {
    for (const l of held.reverse()) releaseLock(l);
    throw err;
  }
}

/** Release locks in reverse order. */
export function unlockAll(locks: readonly Lock[]): void {
  for (const l of [...locks].reverse()) releaseLock(l);
}
