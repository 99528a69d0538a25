import { closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { StagingError, homeDir, sha256 } from "../../lib/index.ts";

/** A held lock file. */
export interface Lock {
  path: string;
  token: string;
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function holderPid(path: string): number | undefined {
  try {
    const m = /pid=(\d+)/.exec(readFileSync(path, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Take an exclusive lock file (O_CREAT|O_EXCL, 0600, content `pid=<n>`). A lock whose holder is no
 * longer running is stale and is broken once (spec §12.2: stale-lock detection by pid liveness).
 */
export function acquireLock(path: string, what: string): Lock {
  const token = `pid=${process.pid}\nnonce=${sha256(`${process.pid}:${performance.now()}:${Math.random()}`).slice(0, 16)}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      return { path, token };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new StagingError(`cannot create lock ${path}: ${String(err)}`);
      const pid = holderPid(path);
      if (pid !== undefined && alive(pid)) throw new StagingError(`${what} is already in progress (pid ${pid} holds ${path})`);
      if (attempt === 0) {
        rmSync(path, { force: true });
        continue;
      }
      throw new StagingError(`${what}: cannot break the stale lock ${path}; remove it by hand`);
    }
  }
  throw new StagingError(`${what}: cannot lock ${path}`);
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
    held.push(acquireLock(join(stagingDir, ".adopt-skills.lock"), what));
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
