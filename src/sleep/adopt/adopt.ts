import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import { StagingError, sha256, writeFileAtomic } from "../../lib/index.ts";
import { legacyRows, type Manifest, readManifest } from "../manifest.ts";
import { canonicalMissing } from "../stage.ts";
import { type Journal, type JournalTarget, recoverJournal, writeJournal, JOURNAL_FILE } from "./journal.ts";
import { lockAll, unlockAll } from "./locks.ts";

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
export interface AdoptResult {
  mode: "legacy" | "skills";
  updated_paths: string[];
  receipts: Array<LegacyReceipt | SkillReceipt>;
  recovered: string[];
}

/** Test seam: called after each target is written (a crash test kills the process here). */
export interface AdoptHooks {
  afterTarget?: (index: number, livePath: string) => void;
}

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
  throw new StagingError(msg, { data: { kind: "adoption_refused" }, hint: "discard this night (`skillopt sleep reject`) and rerun `skillopt sleep review`" });
}

function readReceipts<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  try {
    const data = JSON.parse(readFileSync(path, "utf8"));
    if (!Array.isArray(data)) throw new Error("not a list");
    return data as T[];
  } catch (err) {
    throw new StagingError(`${path} is unreadable: ${String(err)}`, { data: { kind: "invalid_staging" } });
  }
}

/** Fan-out rows pending adoption (not yet in adopted_skills.json). */
export function pendingSkills(stagingDir: string, m: Manifest): string[] {
  const done = new Set(readReceipts<SkillReceipt>(join(stagingDir, "adopted_skills.json")).map((r) => r.skill_name));
  return (m.skills ?? []).map((s) => s.skill_name).filter((n) => !done.has(n));
}

/** Managed rows not yet adopted from this night. */
export function pendingLegacy(stagingDir: string, m: Manifest): Array<"skill" | "memory"> {
  const done = new Set(readReceipts<LegacyReceipt>(join(stagingDir, "adopted_legacy.json")).map((r) => r.target));
  return legacyRows(m)
    .map((r) => r.which)
    .filter((w) => !done.has(w));
}

function plan(stagingDir: string, m: Manifest, sel: Selection): { planned: Planned[]; receiptFile: string } {
  if (sel.mode === "legacy") {
    const done = new Set(readReceipts<LegacyReceipt>(join(stagingDir, "adopted_legacy.json")).map((r) => r.target));
    const rows = legacyRows(m);
    for (const r of rows) if (done.has(r.which)) refuse(`the ${r.which} proposal of ${stagingDir} was already adopted`);
    return {
      receiptFile: "adopted_legacy.json",
      planned: rows.map(({ key, which, row }) => ({
        key,
        livePath: row.live_path,
        expectedRealpath: row.live_realpath,
        proposedFile: row.proposed_file,
        proposedSha: row.sha256,
        baselineSha: row.live_sha256,
        backupRel: join("backup", which === "skill" ? "SKILL.md" : basename(row.live_path)),
        allowCreateDirs: true,
        receipt: (after, backup) => ({ target: which, live_path: row.live_path, sha256_before: row.live_sha256, sha256_after: after, backup_path: backup }),
      })),
    };
  }
  const rows = m.skills ?? [];
  if (rows.length === 0) throw new StagingError(`${stagingDir} has no staged skills`, { data: { kind: "no_staged_skills" } });
  if (!m.skill_roots?.length) refuse("the manifest records no skill roots");
  const pending = new Set(pendingSkills(stagingDir, m));
  const names = sel.names === "all" ? [...pending] : sel.names;
  if (new Set(names).size !== names.length) throw new StagingError("a skill was selected twice", { data: { kind: "invalid_selection" } });
  const unknown = names.filter((n) => !rows.some((r) => r.skill_name === n));
  if (unknown.length) throw new StagingError(`no staged proposal for: ${unknown.join(", ")}`, { data: { kind: "adoption_refused" } });
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
        receipt: (after, backup) => ({ skill_name: n, live_skill_path: row.live_skill_path, sha256_before: row.live_sha256, sha256_after: after, backup_path: backup }),
      };
    }),
  };
}

/** Verify one target and snapshot its live bytes (spec §7.9 step 5). */
function snapshot(stagingDir: string, p: Planned): { proposal: Buffer; original: Buffer | null; mode: number | null; fileId: [number, number] | null; createDirs: string[] } {
  if (!/^proposed_[^/\\]+$/.test(p.proposedFile) || p.proposedFile.includes("..")) refuse(`unsafe proposal file name ${p.proposedFile}`);
  const staged = join(stagingDir, p.proposedFile);
  if (!existsSync(staged) || !lstatSync(staged).isFile()) refuse(`${staged} is missing`);
  const proposal = readFileSync(staged);
  if (sha256(proposal) !== p.proposedSha) refuse(`${staged} does not match its pinned hash (edited after staging?)`);
  const createDirs: string[] = [];
  let dir = dirname(p.livePath);
  while (!existsSync(dir)) {
    createDirs.unshift(dir);
    dir = dirname(dir);
  }
  if (createDirs.length && !p.allowCreateDirs) refuse(`${dirname(p.livePath)} does not exist`);
  if (!lstatSync(dir).isDirectory()) refuse(`${dir} is not a directory`);
  if (canonicalMissing(p.livePath) !== p.expectedRealpath) refuse(`${p.livePath} now resolves to ${canonicalMissing(p.livePath)}, not the pinned ${p.expectedRealpath}`);
  if (!existsSync(p.livePath)) {
    if (p.baselineSha !== "") refuse(`${p.livePath} was deleted since this night was staged`);
    return { proposal, original: null, mode: null, fileId: null, createDirs };
  }
  const st = lstatSync(p.livePath);
  if (st.isSymbolicLink() || !st.isFile() || st.nlink !== 1) refuse(`${p.livePath} must be a regular file with one link`);
  const original = readFileSync(p.livePath);
  if (sha256(original) !== p.baselineSha) refuse(`${p.livePath} changed since this night was staged (baseline drift)`);
  if (existsSync(join(stagingDir, p.backupRel))) refuse(`backup ${join(stagingDir, p.backupRel)} already exists`);
  return { proposal, original, mode: st.mode, fileId: [st.dev, st.ino], createDirs };
}

function writeNoReplace(path: string, data: Buffer, mode: number): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(path, "wx", mode & 0o777);
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Adopt a night (spec §7.9–7.11): recover any interrupted transaction first, verify every pin,
 * lock, journal, back up, replace, write receipts, and commit by deleting the journal. Any error
 * before the commit rolls everything back.
 */
export function adoptNight(stagingDir: string, sel: Selection, hooks: AdoptHooks = {}): AdoptResult {
  const rec = recoverJournal(stagingDir);
  const m = readManifest(join(stagingDir, "manifest.json"));
  const { planned, receiptFile } = plan(stagingDir, m, sel);
  if (planned.length === 0) return { mode: sel.mode, updated_paths: [], receipts: [], recovered: rec.restored };
  const locks = lockAll(
    stagingDir,
    planned.map((p) => p.livePath),
    `adoption of ${stagingDir}`,
  );
  try {
    const again = readManifest(join(stagingDir, "manifest.json"));
    const samePaths = plan(stagingDir, again, sel).planned.map((p) => p.livePath);
    if (samePaths.join("\n") !== planned.map((p) => p.livePath).join("\n")) refuse("the manifest changed while locking");
    const snaps = planned.map((p) => snapshot(stagingDir, p));
    const receiptPath = join(stagingDir, receiptFile);
    const prevReceipts = existsSync(receiptPath) ? readFileSync(receiptPath) : null;
    const prevList = readReceipts<LegacyReceipt | SkillReceipt>(receiptPath);
    const newRows = planned.map((p, i) => p.receipt(p.proposedSha, snaps[i]!.original ? join(stagingDir, p.backupRel) : ""));
    const receiptText = `${JSON.stringify([...prevList, ...newRows], null, 2)}\n`;
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
    writeJournal(stagingDir, journal, true);
    try {
      planned.forEach((p, i) => {
        const s = snaps[i]!;
        const t = journal.targets[i]!;
        for (const d of s.createDirs) {
          mkdirSync(d, { mode: 0o700 });
          const st = statSync(d);
          t.created_dirs.push(d);
          t.created_dir_ids.push([st.dev, st.ino]);
          writeJournal(stagingDir, journal, false);
        }
        if (s.original) {
          writeNoReplace(t.backup_path, s.original, s.mode ?? 0o644);
          if (sha256(readFileSync(t.backup_path)) !== p.baselineSha) throw new StagingError(`backup ${t.backup_path} does not verify`);
        }
        const live = existsSync(p.livePath) ? sha256(readFileSync(p.livePath)) : "";
        if (live !== p.baselineSha) throw new StagingError(`${p.livePath} changed during adoption`);
        writeFileAtomic(p.livePath, s.proposal);
        if (s.mode !== null && process.platform !== "win32") chmodSync(p.livePath, s.mode & 0o7777);
        if (sha256(readFileSync(p.livePath)) !== p.proposedSha) throw new StagingError(`${p.livePath} does not verify after writing`);
        hooks.afterTarget?.(i, p.livePath);
      });
      for (const p of planned) if (sha256(readFileSync(p.livePath)) !== p.proposedSha) throw new StagingError(`${p.livePath} changed during adoption`);
      const nowReceipt = existsSync(receiptPath) ? sha256(readFileSync(receiptPath)) : "";
      if (nowReceipt !== journal.receipt.baseline_sha256) throw new StagingError(`${receiptPath} changed during adoption`);
      writeFileAtomic(receiptPath, receiptText);
    } catch (err) {
      recoverJournal(stagingDir, { held: true });
      throw err;
    }
    // Commit point: the journal is gone, the adoption stands.
    rmSync(join(stagingDir, JOURNAL_FILE), { force: true });
    const created = journal.targets.flatMap((t) => t.created_dirs);
    if (created.length) {
      // Directories the adoption created, so a rollback can remove them again (sidecar: receipts keep upstream's schema).
      const side = join(stagingDir, "backup", "created_dirs.json");
      const prev = existsSync(side) ? (JSON.parse(readFileSync(side, "utf8")) as string[]) : [];
      writeFileAtomic(side, `${JSON.stringify([...prev, ...created], null, 2)}\n`);
    }
    return { mode: sel.mode, updated_paths: planned.map((p) => p.livePath), receipts: newRows, recovered: rec.restored };
  } finally {
    unlockAll(locks);
  }
}
