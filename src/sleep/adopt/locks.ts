import { closeSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { StagingError, homeDir, processAlive, sha256 } from "../../lib/index.ts";

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
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new StagingError(`cannot create lock ${path}: ${String(err)}`);
      }
      const seen = readLock(path);
      if (seen === undefined) continue;
      const pid = holderPidOf(seen.text);
      if (pid !== undefined && processAlive(pid)) throw new StagingError(`${what} is already in progress (pid ${pid} holds ${path})`);
      if (pid === undefined && Date.now() - seen.mtimeMs < UNREADABLE_LOCK_GRACE_MS) {
        throw new StagingError(`${what} is already in progress (${path} is held)`);
      }
      const aside = `${path}.stale.${process.pid}`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      if (readFileSync(aside, "utf8") !== seen.text) {
        // Another process replaced the stale lock between our read and our rename: give it back.
        try {
          linkSync(aside, path);
        } catch {
          // A third process took the path meanwhile; it holds the lock now.
        }
        rmSync(aside, { force: true });
        throw new StagingError(`${what} is already in progress (${path} is held)`);
      }
      rmSync(aside, { force: true });
    }
    throw new StagingError(`${what}: cannot take ${path}; if no adoption is running, remove it by hand`);
  } finally {
    rmSync(tmp, { force: true });
  }
}

function readLock(path: string): { text: string; mtimeMs: number } | undefined {
  try {
    return { text: readFileSync(path, "utf8"), mtimeMs: statSync(path).mtimeMs };
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
    if (readFileSync(lock.path, "utf8") === lock.token) rmSync(lock.path, { force: true });
  } catch {
    // Already gone: nothing to release.
  }
}

/** Lock root shared across nights: `<tmp>/skillopt-sleep-adopt-<uid>/`, 0700, owned by us. */
export function lockRoot(): string {
  let id: string;
  try {
    const u = userInfo();
    id = u.uid >= 0 ? String(u.uid) : sha256(`${u.username}|${homeDir()}`).slice(0, 16);
  } catch {
    id = sha256(homeDir()).slice(0, 16);
  }
  const root = join(tmpdir(), `skillopt-sleep-adopt-${id}`);
  if (!existsSync(root)) mkdirSync(root, { recursive: true, mode: 0o700 });
  const st = lstatSync(root);
  if (!st.isDirectory() || st.isSymbolicLink()) throw new StagingError(`${root} must be a real directory`);
  if (process.platform !== "win32") {
    if (typeof process.getuid === "function" && st.uid !== process.getuid()) throw new StagingError(`${root} is not owned by the current user`);
    if ((st.mode & 0o777) !== 0o700) throw new StagingError(`${root} must have mode 0700`);
  }
  return root;
}

/** Lock file of one live target (NFC + case-fold of the path, so one file has one lock). */
export function targetLockPath(root: string, livePath: string): string {
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
