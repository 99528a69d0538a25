import {
  closeSync,
  constants,
  fchmodSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { fileKind, processAlive, StagingError } from "../../lib/index.ts";
import { legacyRows, type Manifest, parseManifest } from "../manifest.ts";
import { canonicalMissing, NIGHT_NAME } from "../stage.ts";
import { readJsonFile, readRegularFile } from "./read.ts";
import { inside, type SealKey, sealKey, sealProblem } from "./seal.ts";

/** One live file a sealed manifest names. */
interface LiveTarget {
  role: "skill" | "memory";
  /** Realpath pinned at staging time. */
  realpath: string;
  /** Fan-out rows must stay inside a recorded skill root. */
  fanout: boolean;
}

/**
 * What a night may touch: its own folder, and the live files its sealed manifest names. Built
 * only by {@link trustNight}, so holding one means the manifest was staged by this user.
 */
export interface NightScope {
  /** The night folder as given (absolute). */
  dir: string;
  /** Its realpath. */
  real: string;
  /** Realpath of the project the night belongs to. */
  project: string;
  key: SealKey;
  manifest: Manifest;
  targets: Map<string, LiveTarget>;
  skillRoots: string[];
}

/** Refusal of something under a project's `.skillopt-sleep/` that this user's review did not stage. */
export function untrusted(msg: string): never {
  throw new StagingError(msg, {
    data: { kind: "untrusted_night" },
    hint: "only nights staged by your own `skillopt sleep review` (same state directory) can be adopted, recovered or rolled back",
  });
}

function realDir(p: string, what: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(p);
  } catch {
    untrusted(`${what} ${p} does not exist`);
  }
  if (!st.isDirectory()) untrusted(`${what} ${p} is ${fileKind(st)}, not a real directory`);
}

/**
 * Verify a night before acting on it: `<project>/.skillopt-sleep/staging/<night>`, every level a
 * real directory (no links), and a manifest sealed with this user's key from `stateDir`. Throws a
 * one-line StagingError (kind `untrusted_night`) naming the reason otherwise.
 */
export function trustNight(dir: string, stateDir: string): NightScope {
  const abs = resolve(dir);
  const name = basename(abs);
  const staging = dirname(abs);
  const base = dirname(staging);
  const project = dirname(base);
  if (!NIGHT_NAME.test(name) || basename(staging) !== "staging" || basename(base) !== ".skillopt-sleep")
    untrusted(`${abs} is not a night folder (<project>/.skillopt-sleep/staging/<YYYYMMDD-HHMMSS>)`);
  realDir(base, "staging base");
  realDir(staging, "staging root");
  realDir(abs, "night folder");
  const real = realpathSync(abs);
  const projectReal = realpathSync(project);
  if (real !== join(projectReal, ".skillopt-sleep", "staging", name))
    untrusted(`${abs} resolves to ${real}, outside its project`);
  const key = sealKey(stateDir, { project: projectReal });
  const mpath = join(abs, "manifest.json");
  const data = readJsonFile(mpath, "the manifest");
  const problem = sealProblem(key, "manifest", abs, data);
  if (problem || !key)
    untrusted(
      `${abs} was not staged by this user's review: manifest.json: ${problem ?? "unsealed"}; refusing to act on it`,
    );
  const manifest = parseManifest(mpath, data);
  const targets = new Map<string, LiveTarget>();
  for (const r of legacyRows(manifest))
    targets.set(r.row.live_path, { role: r.which, realpath: r.row.live_realpath, fanout: false });
  for (const s of manifest.skills ?? [])
    targets.set(s.live_skill_path, { role: "skill", realpath: s.live_realpath, fanout: true });
  const skillRoots = (manifest.skill_roots ?? []).map((r) => canonicalMissing(r));
  return { dir: abs, real, project: projectReal, key, manifest, targets, skillRoots };
}

/**
 * THE path rule for a live file a night names, applied at the moment of every read for display
 * and every write (adopt, recovery, rollback). The path must be a target of the night's sealed
 * manifest, absolute and plain (no `..`, `~` or control characters), named `SKILL.md` (skills) or
 * `*.md`/`*.mdc` (memory), still resolve to the realpath pinned at staging (no symlink swaps of
 * it or any ancestor), lie inside the project (memory) or a recorded skill root (fan-out skills),
 * never inside the project's `.skillopt-sleep/`, and be a regular single-link file or absent.
 * Returns whether it exists.
 */
export function checkLivePath(scope: NightScope, path: string): { exists: boolean; mode: number | null } {
  const t = scope.targets.get(path);
  if (!t) untrusted(`${path} is not a target of ${scope.dir}'s manifest; refusing to touch it`);
  if (
    !isAbsolute(path) ||
    path.split(/[\\/]/).includes("..") ||
    /[\u0000-\u001f\u007f]/.test(path) ||
    path.startsWith("~")
  )
    untrusted(`unsafe target path ${JSON.stringify(path)}`);
  if (t.role === "skill" && basename(path) !== "SKILL.md") untrusted(`${path}: a skill target must be named SKILL.md`);
  if (t.role === "memory" && !/\.(md|mdc)$/.test(path))
    untrusted(`${path}: a memory target must be a .md or .mdc file`);
  const now = canonicalMissing(path);
  if (now !== t.realpath)
    untrusted(`${path} now resolves to ${now}, not the pinned ${t.realpath} (a link was swapped in)`);
  if (t.role === "memory" && !inside(now, scope.project)) untrusted(`${path} is outside the project ${scope.project}`);
  if (t.fanout && !scope.skillRoots.some((r) => inside(now, r) && now !== r))
    untrusted(`${path} is outside the recorded skill roots`);
  if (inside(now, join(scope.project, ".skillopt-sleep")))
    untrusted(`${path} is inside the project's .skillopt-sleep/`);
  if (inside(now, canonicalMissing(scope.key.stateDir))) untrusted(`${path} is inside the Sleep state directory`);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return { exists: false, mode: null };
  }
  if (!st.isFile()) untrusted(`${path} is ${fileKind(st)}, not a regular file`);
  if (st.nlink !== 1) untrusted(`${path} has ${st.nlink} hard links; refusing to rewrite a shared file`);
  return { exists: true, mode: st.mode & 0o777 };
}

/**
 * The path rule for files a night writes inside its own folder (journal, receipts, backups):
 * below the night's realpath with no link anywhere on the way, and a regular file (or a real
 * directory when `dir`) if it exists.
 */
export function checkStagingPath(scope: NightScope, path: string, dir = false): void {
  const abs = resolve(path);
  const now = canonicalMissing(abs);
  if (now === scope.real || !inside(now, scope.real)) untrusted(`${path} is outside the night folder ${scope.dir}`);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(abs);
  } catch {
    return;
  }
  if (dir ? !st.isDirectory() : !st.isFile())
    untrusted(`${path} is ${fileKind(st)}, not ${dir ? "a directory" : "a regular file"}`);
  if (!dir && st.nlink !== 1) untrusted(`${path} has ${st.nlink} hard links`);
}

/** Temp files of {@link writeGuarded} beside `path`: `.<name>.skillopt-<pid>-<nonce>.tmp`. */
const TEMP = /^\.(.+)\.skillopt-(\d+)-[0-9a-f]{8}\.tmp$/;

/** The writer pid of a temp file name of {@link writeGuarded} (or of the older lib writer / journal publish), if it is one. */
export function tempWriterPid(name: string): number | undefined {
  const m = TEMP.exec(name) ?? /^\.(?:adopt-transaction\.)?()(\d+)\.(?:\d+\.\d+\.)?tmp$/.exec(name);
  return m ? Number(m[2]) : undefined;
}

/**
 * Atomic replace of `path`, checking the path rule right before creating the temp file and again
 * right before the rename. The temp file is created exclusively (never through a link) beside
 * the target; `mode` (permission bits only) is applied to it before it becomes visible.
 */
export function writeGuarded(check: () => void, path: string, data: Uint8Array | string, mode: number): void {
  check();
  const tmp = join(
    dirname(path),
    `.${basename(path)}.skillopt-${process.pid}-${Math.floor(Math.random() * 0xffffffff)
      .toString(16)
      .padStart(8, "0")}.tmp`,
  );
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    0o600,
  );
  try {
    try {
      const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
      let off = 0;
      while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
      if (process.platform !== "win32") fchmodSync(fd, mode & 0o777);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    check();
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Remove `path` after the path rule passes (absent is fine). */
export function removeGuarded(check: () => void, path: string): void {
  check();
  rmSync(path, { force: true });
}

/** Remove temp files an interrupted {@link writeGuarded} of `path` left beside it (only those of dead processes). */
export function cleanTemps(path: string): string[] {
  const dir = dirname(path);
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return removed;
  }
  for (const n of names) {
    const m = TEMP.exec(n);
    if (!m || m[1] !== basename(path) || processAlive(Number(m[2]))) continue;
    const p = join(dir, n);
    try {
      if (lstatSync(p).isFile()) {
        rmSync(p, { force: true });
        removed.push(p);
      }
    } catch {
      // gone already
    }
  }
  return removed;
}

/**
 * For the dashboard and `sleep diff`: the bytes of a live file a staged night names, read only if
 * the night is sealed by this user (state directory `stateDir`) and the path passes
 * {@link checkLivePath}; never follows a link, never blocks on a FIFO or device. Undefined when
 * the file does not exist. Any refusal is a one-line StagingError.
 */
export function openLiveFileForRead(nightDir: string, livePath: string, stateDir: string): Buffer | undefined {
  const scope = trustNight(nightDir, stateDir);
  return readLive(scope, livePath);
}

/** {@link openLiveFileForRead} for a night already verified. */
export function readLive(scope: NightScope, livePath: string): Buffer | undefined {
  const { exists } = checkLivePath(scope, livePath);
  return exists ? readRegularFile(livePath) : undefined;
}
