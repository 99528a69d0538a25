import {
  closeSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import * as v from "valibot";
import { processAlive, StagingError, sha256 } from "../../lib/index.ts";
import {
  checkLivePath,
  checkStagingPath,
  cleanTemps,
  type NightScope,
  readLive,
  removeGuarded,
  tempWriterPid,
  trustNight,
  untrusted,
  writeGuarded,
} from "./guard.ts";
import { acquireLock, type Lock, releaseLock, STAGING_LOCK } from "./locks.ts";
import { entryExists, readJsonFile, readRegularFile } from "./read.ts";
import { sealObject, sealProblem, unsealed } from "./seal.ts";

/** The write-ahead journal of an adoption or a rollback (spec §7.11, version 2 layout). */
export const JOURNAL_FILE = ".adopt-transaction.json";

const FileId = v.nullable(v.tuple([v.number(), v.number()]));
/** A live file as it was before adoption: its bytes (null when absent), mode, identity and hash. */
const ORIGINAL = {
  original_b64: v.nullable(v.string()),
  original_mode: v.nullable(v.number()),
  original_file_id: FileId,
  baseline_sha256: v.string(),
};
const JournalTargetSchema = v.object({
  key: v.string(),
  live_path: v.string(),
  expected_realpath: v.string(),
  expected_basename: v.string(),
  proposed_sha256: v.string(),
  ...ORIGINAL,
  backup_path: v.string(),
  created_dirs: v.array(v.string()),
  created_dir_ids: v.array(v.tuple([v.number(), v.number()])),
});
const JournalSchema = v.object({
  version: v.literal(2),
  kind: v.picklist(["skills", "legacy"]),
  targets: v.array(JournalTargetSchema),
  receipt: v.object({
    path: v.string(),
    ...ORIGINAL,
    proposed_sha256: v.string(),
  }),
});
export type Journal = v.InferOutput<typeof JournalSchema>;
export type JournalTarget = v.InferOutput<typeof JournalTargetSchema>;

/**
 * The journal of a rollback. Unlike an adoption's, it rolls forward: every step is idempotent
 * (a target already back at its original bytes is skipped, a rename already done is skipped),
 * so an interrupted rollback is completed by the next command rather than undone.
 */
const RollbackJournalSchema = v.object({
  version: v.literal(2),
  kind: v.literal("rollback"),
  force: v.boolean(),
  targets: v.array(
    v.object({
      live_path: v.string(),
      sha256_before: v.string(),
      sha256_after: v.string(),
      backup_path: v.string(),
    }),
  ),
  created_dirs: v.array(v.string()),
  renames: v.array(v.object({ from: v.string(), to: v.string() })),
});
export type RollbackJournal = v.InferOutput<typeof RollbackJournalSchema>;

/** Test seam: called after each target is written (a crash test kills the process here). */
export interface TargetHooks {
  afterTarget?: (index: number, livePath: string) => void;
  /** Rollback only: after each rename of receipts/backups aside. */
  afterRename?: (index: number) => void;
}

const liveSha = (scope: NightScope, p: string): string => {
  const b = readLive(scope, p);
  return b ? sha256(b) : "";
};
const stagedSha = (scope: NightScope, p: string): string => {
  checkStagingPath(scope, p);
  const b = readRegularFile(p, { missingOk: true });
  return b ? sha256(b) : "";
};

/** Publish a journal (sealed with this user's key); the first write must not replace an existing one (hard-link publish). */
export function writeJournal(scope: NightScope, j: Journal | RollbackJournal, first: boolean): void {
  const path = join(scope.dir, JOURNAL_FILE);
  const text = `${JSON.stringify(sealObject(scope.key, "journal", scope.dir, j as unknown as Record<string, unknown>), null, 2)}\n`;
  if (!first) {
    writeGuarded(() => checkStagingPath(scope, path), path, text, 0o600);
    return;
  }
  checkStagingPath(scope, path);
  const tmp = join(scope.dir, `.adopt-transaction.${process.pid}.tmp`);
  rmSync(tmp, { force: true });
  let fd: number;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (err) {
    throw new StagingError(`cannot write ${tmp}: ${String(err)}`, { data: { path: tmp } });
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, path);
  } catch (err) {
    throw new StagingError(
      `an adoption journal already exists in ${scope.dir}; run \`skillopt sleep status\` to recover it first`,
      { data: { path }, cause: err },
    );
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * The journal of a night, validated and verified to be sealed by this user, or undefined when
 * there is none. A journal this user did not write is refused (never acted upon).
 */
function readJournal(scope: NightScope): Journal | RollbackJournal | undefined {
  const path = join(scope.dir, JOURNAL_FILE);
  if (!entryExists(path)) return undefined;
  checkStagingPath(scope, path);
  const data = readJsonFile(path, "the adoption journal");
  const problem = sealProblem(scope.key, "journal", scope.dir, data);
  if (problem)
    untrusted(
      `${path} was not written by this user's adoption: ${problem}; refusing to recover from it (delete it if you did not adopt this night)`,
    );
  const raw = unsealed(data) as { kind?: unknown };
  if (raw.kind === "rollback") {
    const r = v.safeParse(RollbackJournalSchema, raw);
    if (!r.success)
      throw new StagingError(`${path} is not a valid rollback journal; resolve it by hand`, { data: { path } });
    return r.output;
  }
  const parsed = v.safeParse(JournalSchema, raw);
  if (!parsed.success)
    throw new StagingError(`${path} is not a valid adoption journal; resolve it by hand`, { data: { path } });
  for (const t of parsed.output.targets) {
    if (t.original_b64 !== null && sha256(Buffer.from(t.original_b64, "base64")) !== t.baseline_sha256)
      throw new StagingError(`${path}: journal bytes of ${t.live_path} do not match its baseline hash`, {
        data: { path },
      });
  }
  return parsed.output;
}

/** What a recovery did. */
export interface Recovery {
  recovered: boolean;
  /** Live paths put back (adoption undone, or rollback completed). */
  restored: string[];
  /** Which transaction was interrupted. */
  kind?: "adoption" | "rollback";
  /** Temp files of interrupted atomic writes that were removed. */
  cleaned: string[];
  inProgress?: boolean;
}

/**
 * Recover an interrupted transaction of a night (spec §7.11): an adoption is undone, a rollback is
 * completed. Only a night sealed by this user (state directory `stateDir`) with a journal sealed
 * by this user is touched; every write passes the night's path rule at the moment it is made.
 */
export function recoverJournal(
  stagingDir: string,
  opts: { stateDir: string; held?: boolean; force?: boolean },
): Recovery {
  if (!entryExists(join(stagingDir, JOURNAL_FILE))) return { recovered: false, restored: [], cleaned: [] };
  const scope = trustNight(stagingDir, opts.stateDir);
  if (opts.held) return recoverLocked(scope, opts.force === true);
  // A journal is only abandoned if no live process holds the night's staging lock: recovering
  // under a running adoption would roll back its work mid-way.
  let lock: Lock;
  try {
    lock = acquireLock(join(scope.dir, STAGING_LOCK), `recovery of ${scope.dir}`);
  } catch (err) {
    if (err instanceof StagingError && /already in progress/.test(err.message))
      return { recovered: false, restored: [], cleaned: [], inProgress: true };
    throw err;
  }
  try {
    return recoverLocked(scope, opts.force === true);
  } finally {
    releaseLock(lock);
  }
}

/** Remove temp files interrupted writes left in the night folder (dead processes only). */
function cleanStagingTemps(scope: NightScope): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of entries) {
      const p = join(dir, n);
      const st = lstatSync(p);
      if (
        st.isDirectory() &&
        (n === "backup" || (dir !== scope.dir && n === "skills") || dir.startsWith(join(scope.dir, "backup", "skills")))
      )
        walk(p);
      const pid = tempWriterPid(n);
      if (st.isFile() && pid !== undefined && !processAlive(pid)) {
        rmSync(p, { force: true });
        out.push(p);
      }
    }
  };
  walk(scope.dir);
  return out;
}

function recoverLocked(scope: NightScope, force: boolean): Recovery {
  const j = readJournal(scope);
  if (!j) return { recovered: false, restored: [], cleaned: [] };
  const cleaned: string[] = [];
  for (const t of j.targets) cleaned.push(...cleanTemps(t.live_path));
  cleaned.push(...cleanStagingTemps(scope));
  if (j.kind === "rollback") {
    const restored = completeRollback(scope, force ? { ...j, force } : j);
    return { recovered: true, restored, kind: "rollback", cleaned };
  }
  const restored: string[] = [];
  const conflicts: string[] = [];
  for (const t of [...j.targets].reverse()) {
    const now = liveSha(scope, t.live_path);
    if (now === t.baseline_sha256) continue;
    if (now === t.proposed_sha256) {
      if (t.original_b64 === null) removeGuarded(() => checkLivePath(scope, t.live_path), t.live_path);
      else
        writeGuarded(
          () => checkLivePath(scope, t.live_path),
          t.live_path,
          Buffer.from(t.original_b64, "base64"),
          t.original_mode ?? 0o644,
        );
      restored.push(t.live_path);
    } else conflicts.push(t.live_path);
  }
  const r = j.receipt;
  if (r.path !== join(scope.dir, "adopted_legacy.json") && r.path !== join(scope.dir, "adopted_skills.json"))
    untrusted(`${r.path} is not a receipt file of ${scope.dir}`);
  const rnow = stagedSha(scope, r.path);
  if (rnow !== r.baseline_sha256) {
    if (rnow === r.proposed_sha256) {
      if (r.original_b64 === null) removeGuarded(() => checkStagingPath(scope, r.path), r.path);
      else writeGuarded(() => checkStagingPath(scope, r.path), r.path, Buffer.from(r.original_b64, "base64"), 0o600);
    } else conflicts.push(r.path);
  }
  if (conflicts.length) {
    throw new StagingError(
      `cannot recover the interrupted adoption in ${scope.dir}: changed since: ${conflicts.join(", ")}; the journal and backups are kept for manual resolution`,
      { data: { path: scope.dir } },
    );
  }
  for (const t of j.targets) {
    if (t.backup_path && t.original_b64 !== null && stagedSha(scope, t.backup_path) === t.baseline_sha256)
      removeGuarded(() => checkStagingPath(scope, t.backup_path), t.backup_path);
    for (const d of t.created_dirs)
      if (!t.live_path.startsWith(d + sep)) untrusted(`${d} is not a parent of ${t.live_path}`);
    for (const [i, d] of [...t.created_dirs.entries()].reverse()) removeEmptyDir(d, t.created_dir_ids[i]);
  }
  removeGuarded(() => checkStagingPath(scope, join(scope.dir, JOURNAL_FILE)), join(scope.dir, JOURNAL_FILE));
  return { recovered: true, restored, kind: "adoption", cleaned };
}

/** Remove a directory an adoption created, only if it is still that directory (same identity) and empty. */
function removeEmptyDir(d: string, id?: readonly [number, number]): void {
  try {
    const st = lstatSync(d);
    if (!st.isDirectory()) return;
    if (id && (st.dev !== id[0] || st.ino !== id[1])) return;
    if (readdirSync(d).length === 0) rmdirSync(d);
  } catch {
    // A directory someone else filled or removed is left alone.
  }
}

/**
 * Carry out (or finish) a rollback from its journal: every live target back to its original bytes
 * from the backup (or removed when the adoption created it), created directories removed when
 * empty, receipts and backups renamed aside, then the journal removed. Returns the live paths
 * changed. A target holding neither the adopted nor the original bytes (edited since) stops
 * everything with the journal kept, unless the rollback was forced.
 */
export function completeRollback(scope: NightScope, j: RollbackJournal, hooks: TargetHooks = {}): string[] {
  const changed: string[] = [];
  j.targets.forEach((t, i) => {
    const now = liveSha(scope, t.live_path);
    if (now === t.sha256_before) return;
    if (now !== t.sha256_after && !j.force) {
      throw new StagingError(
        `${t.live_path} changed since it was adopted; refusing to overwrite it (use --force to restore anyway)`,
        {
          data: { path: t.live_path, kind: "rollback_refused" },
        },
      );
    }
    if (t.sha256_before === "") removeGuarded(() => checkLivePath(scope, t.live_path), t.live_path);
    else {
      if (!resolve(t.backup_path).startsWith(join(scope.dir, "backup") + sep))
        untrusted(`${t.backup_path} is not inside ${join(scope.dir, "backup")}`);
      checkStagingPath(scope, t.backup_path);
      const bytes = readRegularFile(t.backup_path, { missingOk: true });
      if (!bytes)
        throw new StagingError(`backup ${t.backup_path} of ${t.live_path} is missing`, {
          data: { path: t.backup_path },
        });
      if (sha256(bytes) !== t.sha256_before)
        throw new StagingError(`backup ${t.backup_path} does not hold the original bytes of ${t.live_path}`, {
          data: { path: t.backup_path },
        });
      const mode = checkLivePath(scope, t.live_path).mode ?? 0o644;
      writeGuarded(() => checkLivePath(scope, t.live_path), t.live_path, bytes, mode);
    }
    changed.push(t.live_path);
    hooks.afterTarget?.(i, t.live_path);
  });
  for (const d of [...j.created_dirs].reverse()) {
    if (!j.targets.some((t) => t.live_path.startsWith(d + sep)))
      untrusted(`${d} is not a parent of a target of ${scope.dir}`);
    removeEmptyDir(d);
  }
  for (const [i, r] of j.renames.entries()) {
    for (const p of [r.from, r.to]) if (dirname(p) !== scope.dir) untrusted(`${p} is not directly inside ${scope.dir}`);
    checkStagingPath(scope, r.from, lstatIsDir(r.from));
    checkStagingPath(scope, r.to, lstatIsDir(r.to));
    if (entryExists(r.from) && !entryExists(r.to)) renameSync(r.from, r.to);
    hooks.afterRename?.(i);
  }
  removeGuarded(() => checkStagingPath(scope, join(scope.dir, JOURNAL_FILE)), join(scope.dir, JOURNAL_FILE));
  return changed;
}

function lstatIsDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** True when a night has a journal (an interrupted adoption or rollback). */
export function hasJournal(stagingDir: string): boolean {
  return entryExists(join(stagingDir, JOURNAL_FILE)) || existsSync(join(stagingDir, JOURNAL_FILE));
}
