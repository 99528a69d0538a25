import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import * as v from "valibot";
import { fileKind, StagingError, sha256 } from "../../lib/index.ts";
import { legacyRows, type ManagedRow, type Manifest } from "../manifest.ts";
import { canonicalMissing } from "../stage.ts";
import {
  checkLivePath,
  checkStagingPath,
  type NightScope,
  readLive,
  removeGuarded,
  trustNight,
  untrusted,
  writeGuarded,
} from "./guard.ts";
import {
  JOURNAL_FILE,
  type Journal,
  type JournalTarget,
  type Recovery,
  recoverJournal,
  type TargetHooks,
  writeJournal,
} from "./journal.ts";
import { lockAll, unlockAll } from "./locks.ts";
import { readJsonFile, readRegularFile } from "./read.ts";
import { type SealKey, sealObject, sealProblem, unsealed } from "./seal.ts";

/** A legacy receipt row (spec §7.9 step 4). */
export interface LegacyReceipt {
  target: "skill" | "memory";
  live_path: string;
  sha256_before: string;
  sha256_after: string;
  backup_path: string;
}

/** A fan-out receipt row (spec §7.10). */
export interface SkillReceipt {
  skill_name: string;
  live_skill_path: string;
  sha256_before: string;
  sha256_after: string;
  backup_path: string;
}

/** What to adopt from a night. */
export type Selection = { mode: "legacy" } | { mode: "skills"; names: readonly string[] | "all" };

/** Result of an adoption. */
interface AdoptResult {
  mode: "legacy" | "skills";
  updated_paths: string[];
  receipts: Array<LegacyReceipt | SkillReceipt>;
  recovered: string[];
  /** Folders this adoption created for its targets (a rollback removes them again when empty). */
  created_dirs: string[];
}

/** Test seam: called after each target is written (a crash test kills the process here). */
type AdoptHooks = TargetHooks;

interface Planned {
  key: string;
  livePath: string;
  expectedRealpath: string;
  proposedFile: string;
  proposedSha: string;
  baselineSha: string;
  backupRel: string;
  receipt: (after: string, backup: string) => LegacyReceipt | SkillReceipt;
  allowCreateDirs: boolean;
}

/** Refuse with the spec's guidance. */
function refuse(msg: string): never {
  throw new StagingError(msg, {
    data: { kind: "adoption_refused" },
    hint: "discard this night (`skillopt sleep reject`) and rerun `skillopt sleep review`",
  });
}

const LegacyReceiptSchema = v.object({
  target: v.picklist(["skill", "memory"]),
  live_path: v.string(),
  sha256_before: v.string(),
  sha256_after: v.string(),
  backup_path: v.string(),
});
const SkillReceiptSchema = v.object({
  skill_name: v.string(),
  live_skill_path: v.string(),
  sha256_before: v.string(),
  sha256_after: v.string(),
  backup_path: v.string(),
});

function damaged(path: string, why: string): never {
  throw new StagingError(
    `${path} is damaged: ${why}; move it aside to adopt this night again, or restore its backups by hand`,
    {
      data: { path, kind: "invalid_staging" },
    },
  );
}

/**
 * The receipt rows of a night's receipt file ([] when absent), validated. With a scope, every
 * row must also carry this user's seal (rollback acts on them); without one (listing), rows are
 * only shape-checked.
 */
export function readReceipts<T extends LegacyReceipt | SkillReceipt>(path: string, scope?: NightScope): T[] {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return [];
  }
  if (!st.isFile()) damaged(path, `it is ${fileKind(st)}`);
  if (scope) checkStagingPath(scope, path);
  const data = readJsonFile(path, "the receipt file");
  if (!Array.isArray(data)) damaged(path, "not a list of receipts");
  const schema = basename(path) === "adopted_skills.json" ? SkillReceiptSchema : LegacyReceiptSchema;
  return data.map((row, i) => {
    if (scope) {
      const problem = sealProblem(scope.key, `receipt:${basename(path)}`, scope.dir, row);
      if (problem) untrusted(`${path}: receipt ${i + 1} was not written by this user's adoption: ${problem}`);
    }
    const parsed = v.safeParse(schema, unsealed(row));
    if (!parsed.success)
      damaged(path, `receipt ${i + 1} at ${v.getDotPath(parsed.issues[0]!) ?? "(root)"}: ${parsed.issues[0]!.message}`);
    return parsed.output as T;
  });
}

/** Receipt rows as written: each sealed with this user's key. */
function sealRows(
  key: SealKey,
  dir: string,
  file: string,
  rows: ReadonlyArray<LegacyReceipt | SkillReceipt>,
): unknown[] {
  return rows.map((r) => sealObject(key, `receipt:${file}`, dir, { ...r } as Record<string, unknown>));
}

/** Fan-out rows pending adoption (not yet in adopted_skills.json). */
export function pendingSkills(stagingDir: string, m: Manifest, scope?: NightScope): string[] {
  const done = new Set(
    readReceipts<SkillReceipt>(join(stagingDir, "adopted_skills.json"), scope).map((r) => r.skill_name),
  );
  return (m.skills ?? []).map((s) => s.skill_name).filter((n) => !done.has(n));
}

/** Managed rows not yet adopted from this night (a receipt names the live file it covers). */
export function pendingLegacy(stagingDir: string, m: Manifest): ManagedRow[] {
  const done = new Set(readReceipts<LegacyReceipt>(join(stagingDir, "adopted_legacy.json")).map((r) => r.live_path));
  return legacyRows(m).filter((r) => !done.has(r.row.live_path));
}

function plan(
  stagingDir: string,
  m: Manifest,
  sel: Selection,
  scope?: NightScope,
): { planned: Planned[]; receiptFile: string } {
  if (sel.mode === "legacy") {
    const done = new Set(
      readReceipts<LegacyReceipt>(join(stagingDir, "adopted_legacy.json"), scope).map((r) => r.live_path),
    );
    const rows = legacyRows(m);
    for (const r of rows)
      if (done.has(r.row.live_path))
        refuse(`the ${r.which} proposal for ${r.row.live_path} of ${stagingDir} was already adopted`);
    return {
      receiptFile: "adopted_legacy.json",
      planned: rows.map(({ key, which, row, backup }) => ({
        key,
        livePath: row.live_path,
        expectedRealpath: row.live_realpath,
        proposedFile: row.proposed_file,
        proposedSha: row.sha256,
        baselineSha: row.live_sha256,
        backupRel: backup,
        allowCreateDirs: true,
        receipt: (after, backup) => ({
          target: which,
          live_path: row.live_path,
          sha256_before: row.live_sha256,
          sha256_after: after,
          backup_path: backup,
        }),
      })),
    };
  }
  const rows = m.skills ?? [];
  if (rows.length === 0)
    throw new StagingError(`${stagingDir} has no staged skills`, {
      data: { path: stagingDir, kind: "no_staged_skills" },
    });
  if (!m.skill_roots?.length) refuse("the manifest records no skill roots");
  const pending = new Set(pendingSkills(stagingDir, m, scope));
  const names = sel.names === "all" ? [...pending] : sel.names;
  if (new Set(names).size !== names.length)
    throw new StagingError("a skill was selected twice", { data: { kind: "invalid_selection" } });
  const unknown = names.filter((n) => !rows.some((r) => r.skill_name === n));
  if (unknown.length)
    throw new StagingError(`no staged proposal for: ${unknown.join(", ")}`, { data: { kind: "adoption_refused" } });
  const again = names.filter((n) => !pending.has(n));
  if (again.length) refuse(`already adopted from this night: ${again.join(", ")}`);
  return {
    receiptFile: "adopted_skills.json",
    planned: names.map((n) => {
      const row = rows.find((r) => r.skill_name === n)!;
      const inRoot = m.skill_roots!.some((root) => !relative(root, row.live_skill_path).startsWith(".."));
      if (!inRoot) refuse(`${row.live_skill_path} is outside the recorded skill roots`);
      return {
        key: `skill '${n}'`,
        livePath: row.live_skill_path,
        expectedRealpath: row.live_realpath,
        proposedFile: row.proposed_file,
        proposedSha: row.sha256,
        baselineSha: row.live_sha256,
        backupRel: join("backup", "skills", n, "SKILL.md"),
        allowCreateDirs: false,
        receipt: (after, backup) => ({
          skill_name: n,
          live_skill_path: row.live_skill_path,
          sha256_before: row.live_sha256,
          sha256_after: after,
          backup_path: backup,
        }),
      };
    }),
  };
}

/** Verify one target and snapshot its live bytes (spec §7.9 step 5). */
function snapshot(
  scope: NightScope,
  p: Planned,
): {
  proposal: Buffer;
  original: Buffer | null;
  mode: number | null;
  fileId: [number, number] | null;
  createDirs: string[];
} {
  const stagingDir = scope.dir;
  if (!/^proposed_[^/\\]+$/.test(p.proposedFile) || p.proposedFile.includes(".."))
    refuse(`unsafe proposal file name ${p.proposedFile}`);
  const staged = join(stagingDir, p.proposedFile);
  checkStagingPath(scope, staged);
  const proposal = readRegularFile(staged, { missingOk: true });
  if (!proposal) refuse(`${staged} is missing`);
  if (sha256(proposal) !== p.proposedSha) refuse(`${staged} does not match its pinned hash (edited after staging?)`);
  const createDirs: string[] = [];
  let dir = dirname(p.livePath);
  while (!existsSync(dir) && !isLink(dir)) {
    createDirs.unshift(dir);
    dir = dirname(dir);
  }
  if (createDirs.length && !p.allowCreateDirs) refuse(`${dirname(p.livePath)} does not exist`);
  if (!lstatSync(dir).isDirectory()) refuse(`${dir} is not a directory`);
  if (canonicalMissing(p.livePath) !== p.expectedRealpath)
    refuse(`${p.livePath} now resolves to ${canonicalMissing(p.livePath)}, not the pinned ${p.expectedRealpath}`);
  const { exists, mode } = checkLivePath(scope, p.livePath);
  if (!exists) {
    if (p.baselineSha !== "") refuse(`${p.livePath} was deleted since this night was staged`);
    return { proposal, original: null, mode: null, fileId: null, createDirs };
  }
  const st = lstatSync(p.livePath);
  const original = readRegularFile(p.livePath);
  if (sha256(original) !== p.baselineSha) refuse(`${p.livePath} changed since this night was staged (baseline drift)`);
  const backup = join(stagingDir, p.backupRel);
  checkStagingPath(scope, backup);
  if (existsSync(backup) || isLink(backup)) refuse(`backup ${backup} already exists`);
  return { proposal, original, mode, fileId: [st.dev, st.ino], createDirs };
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Create a backup inside the night: never replaces anything, never through a link. */
function writeBackup(scope: NightScope, path: string, data: Buffer, mode: number): void {
  checkStagingPath(scope, path);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  checkStagingPath(scope, dirname(path), true);
  checkStagingPath(scope, path);
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    mode & 0o777,
  );
  try {
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Directories adoptions of a night created (sealed sidecar, so a rollback can remove them again). */
const CREATED_DIRS_FILE = join("backup", "created_dirs.json");

/** The created-directory list of a night; entries this user did not seal are ignored (never removed). */
export function readCreatedDirs(scope: NightScope): string[] {
  const side = join(scope.dir, CREATED_DIRS_FILE);
  if (!existsSync(side) && !isLink(side)) return [];
  checkStagingPath(scope, side);
  const data = readJsonFile(side, "the created-directory list");
  if (sealProblem(scope.key, "created_dirs", scope.dir, data)) return [];
  const dirs = (unsealed(data) as { dirs?: unknown }).dirs;
  return Array.isArray(dirs) ? dirs.filter((d): d is string => typeof d === "string") : [];
}

/**
 * Adopt a night (spec §7.9–7.11): verify the night is sealed by this user, recover any
 * interrupted transaction, verify every pin, lock, journal, back up, replace, write receipts,
 * and commit by deleting the journal. Any error before the commit rolls everything back. Every
 * write passes the night's path rule (guard.ts) at the moment it is made.
 */
export function adoptNight(
  stagingDir: string,
  sel: Selection,
  opts: { stateDir: string; hooks?: AdoptHooks },
): AdoptResult {
  const hooks = opts.hooks ?? {};
  trustNight(stagingDir, opts.stateDir);
  const rec: Recovery = recoverJournal(stagingDir, { stateDir: opts.stateDir });
  if (rec.inProgress)
    throw new StagingError(`an adoption or rollback of ${stagingDir} is already in progress`, {
      data: { path: stagingDir },
    });
  const scope0 = trustNight(stagingDir, opts.stateDir);
  const { planned, receiptFile } = plan(scope0.dir, scope0.manifest, sel, scope0);
  if (planned.length === 0)
    return { mode: sel.mode, updated_paths: [], receipts: [], recovered: rec.restored, created_dirs: [] };
  const locks = lockAll(
    scope0.dir,
    planned.map((p) => p.livePath),
    `adoption of ${stagingDir}`,
  );
  try {
    const scope = trustNight(stagingDir, opts.stateDir);
    stagingDir = scope.dir;
    const samePaths = plan(stagingDir, scope.manifest, sel, scope).planned.map((p) => p.livePath);
    if (samePaths.join("\n") !== planned.map((p) => p.livePath).join("\n"))
      refuse("the manifest changed while locking");
    const snaps = planned.map((p) => snapshot(scope, p));
    const receiptPath = join(stagingDir, receiptFile);
    checkStagingPath(scope, receiptPath);
    const prevReceipts = readRegularFile(receiptPath, { missingOk: true }) ?? null;
    const prevList = readReceipts<LegacyReceipt | SkillReceipt>(receiptPath, scope);
    const newRows = planned.map((p, i) =>
      p.receipt(p.proposedSha, snaps[i]!.original ? join(stagingDir, p.backupRel) : ""),
    );
    const receiptText = `${JSON.stringify(sealRows(scope.key, stagingDir, receiptFile, [...prevList, ...newRows]), null, 2)}\n`;
    const journal: Journal = {
      version: 2,
      kind: sel.mode,
      targets: planned.map((p, i): JournalTarget => {
        const s = snaps[i]!;
        return {
          key: p.key,
          live_path: p.livePath,
          expected_realpath: p.expectedRealpath,
          expected_basename: basename(p.livePath),
          proposed_sha256: p.proposedSha,
          original_b64: s.original ? s.original.toString("base64") : null,
          original_mode: s.mode,
          original_file_id: s.fileId,
          baseline_sha256: p.baselineSha,
          backup_path: s.original ? join(stagingDir, p.backupRel) : "",
          created_dirs: [],
          created_dir_ids: [],
        };
      }),
      receipt: {
        path: receiptPath,
        original_b64: prevReceipts ? prevReceipts.toString("base64") : null,
        original_mode: prevReceipts ? statSync(receiptPath).mode : null,
        original_file_id: null,
        baseline_sha256: prevReceipts ? sha256(prevReceipts) : "",
        proposed_sha256: sha256(receiptText),
      },
    };
    writeJournal(scope, journal, true);
    const liveNow = (p: string) => {
      const b = readLive(scope, p);
      return b ? sha256(b) : "";
    };
    try {
      planned.forEach((p, i) => {
        const s = snaps[i]!;
        const t = journal.targets[i]!;
        for (const d of s.createDirs) {
          // The target's path rule covers its ancestors: no link may have appeared on the way.
          checkLivePath(scope, p.livePath);
          mkdirSync(d, { mode: 0o700 });
          const st = lstatSync(d);
          t.created_dirs.push(d);
          t.created_dir_ids.push([st.dev, st.ino]);
          writeJournal(scope, journal, false);
        }
        if (s.original) {
          writeBackup(scope, t.backup_path, s.original, s.mode ?? 0o644);
          if (sha256(readRegularFile(t.backup_path)) !== p.baselineSha)
            throw new StagingError(`backup ${t.backup_path} does not verify`, { data: { path: t.backup_path } });
        }
        if (liveNow(p.livePath) !== p.baselineSha)
          throw new StagingError(`${p.livePath} changed during adoption`, { data: { path: p.livePath } });
        writeGuarded(() => checkLivePath(scope, p.livePath), p.livePath, s.proposal, s.mode ?? 0o644);
        if (liveNow(p.livePath) !== p.proposedSha)
          throw new StagingError(`${p.livePath} does not verify after writing`, { data: { path: p.livePath } });
        hooks.afterTarget?.(i, p.livePath);
      });
      for (const p of planned)
        if (liveNow(p.livePath) !== p.proposedSha)
          throw new StagingError(`${p.livePath} changed during adoption`, { data: { path: p.livePath } });
      const nowReceipt = readRegularFile(receiptPath, { missingOk: true });
      if ((nowReceipt ? sha256(nowReceipt) : "") !== journal.receipt.baseline_sha256)
        throw new StagingError(`${receiptPath} changed during adoption`, { data: { path: receiptPath } });
      writeGuarded(() => checkStagingPath(scope, receiptPath), receiptPath, receiptText, 0o600);
    } catch (err) {
      recoverJournal(stagingDir, { stateDir: opts.stateDir, held: true });
      throw err;
    }
    // Commit point: the journal is gone, the adoption stands.
    removeGuarded(() => checkStagingPath(scope, join(stagingDir, JOURNAL_FILE)), join(stagingDir, JOURNAL_FILE));
    const created = journal.targets.flatMap((t) => t.created_dirs);
    if (created.length) {
      // Receipts keep upstream's schema; created directories go to a sealed sidecar.
      const side = join(stagingDir, CREATED_DIRS_FILE);
      // A night whose targets were all new files has no backup folder yet.
      checkStagingPath(scope, dirname(side), true);
      mkdirSync(dirname(side), { recursive: true, mode: 0o700 });
      checkStagingPath(scope, dirname(side), true);
      const body = sealObject(scope.key, "created_dirs", stagingDir, { dirs: [...readCreatedDirs(scope), ...created] });
      writeGuarded(() => checkStagingPath(scope, side), side, `${JSON.stringify(body, null, 2)}\n`, 0o600);
    }
    return {
      mode: sel.mode,
      updated_paths: planned.map((p) => p.livePath),
      receipts: newRows,
      recovered: rec.restored,
      created_dirs: created,
    };
  } finally {
    unlockAll(locks);
  }
}
