import { chmodSync, existsSync, linkSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { StagingError, sha256, writeFileAtomic } from "../../lib/index.ts";
import { acquireLock, type Lock, releaseLock, STAGING_LOCK } from "./locks.ts";

/** The write-ahead journal of an adoption (spec §7.11, version 2 layout). */
export const JOURNAL_FILE = ".adopt-transaction.json";

const FileId = v.nullable(v.tuple([v.number(), v.number()]));
const JournalTargetSchema = v.object({
  key: v.string(),
  live_path: v.string(),
  expected_realpath: v.string(),
  expected_basename: v.string(),
  proposed_sha256: v.string(),
  original_b64: v.nullable(v.string()),
  original_mode: v.nullable(v.number()),
  original_file_id: FileId,
  baseline_sha256: v.string(),
  backup_path: v.string(),
  created_dirs: v.array(v.string()),
  created_dir_ids: v.array(v.tuple([v.number(), v.number()])),
});
export const JournalSchema = v.object({
  version: v.literal(2),
  kind: v.picklist(["skills", "legacy", "rollback"]),
  targets: v.array(JournalTargetSchema),
  receipt: v.object({
    path: v.string(),
    original_b64: v.nullable(v.string()),
    original_mode: v.nullable(v.number()),
    original_file_id: FileId,
    baseline_sha256: v.string(),
    proposed_sha256: v.string(),
  }),
});
export type Journal = v.InferOutput<typeof JournalSchema>;
export type JournalTarget = v.InferOutput<typeof JournalTargetSchema>;

const fileSha = (p: string): string | undefined => (existsSync(p) ? sha256(readFileSync(p)) : undefined);

/** Publish the journal; the first write must not replace an existing one (hard-link publish). */
export function writeJournal(stagingDir: string, j: Journal, first: boolean): void {
  const path = join(stagingDir, JOURNAL_FILE);
  const text = `${JSON.stringify(j, null, 2)}\n`;
  if (!first) {
    writeFileAtomic(path, text);
    return;
  }
  const tmp = join(stagingDir, `.adopt-transaction.${process.pid}.tmp`);
  writeFileAtomic(tmp, text);
  try {
    linkSync(tmp, path);
  } catch (err) {
    throw new StagingError(`an adoption journal already exists in ${stagingDir}; run \`skillopt sleep status\` to recover it first`, { cause: err });
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The journal of a night, validated, or undefined when there is none. */
export function readJournal(stagingDir: string): Journal | undefined {
  const path = join(stagingDir, JOURNAL_FILE);
  if (!existsSync(path)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new StagingError(`${path} is unreadable (${String(err)}); resolve it by hand: compare the live files with backup/ and delete the journal`);
  }
  const parsed = v.safeParse(JournalSchema, data);
  if (!parsed.success) throw new StagingError(`${path} is not a valid adoption journal; resolve it by hand`);
  for (const t of parsed.output.targets) {
    if (t.original_b64 !== null && sha256(Buffer.from(t.original_b64, "base64")) !== t.baseline_sha256) throw new StagingError(`${path}: journal bytes of ${t.live_path} do not match its baseline hash`);
  }
  return parsed.output;
}

function restore(path: string, b64: string | null, mode: number | null): void {
  if (b64 === null) {
    rmSync(path, { force: true });
    return;
  }
  writeFileAtomic(path, Buffer.from(b64, "base64"));
  if (mode !== null && process.platform !== "win32") chmodSync(path, mode & 0o7777);
}

/**
 * Undo an interrupted transaction (spec §7.11 rollback). For every target, in reverse: baseline
 * bytes → nothing to do; proposal bytes → restore the original (or remove a created file); other
 * bytes → conflict (someone edited it), keep everything and stop. Same for the receipt. Then
 * remove backups that still hold the baseline, empty created dirs, and the journal.
 * Returns the paths restored.
 */
export function recoverJournal(
  stagingDir: string,
  opts: { held?: boolean } = {},
): { recovered: boolean; restored: string[]; inProgress?: boolean } {
  if (!existsSync(join(stagingDir, JOURNAL_FILE))) return { recovered: false, restored: [] };
  if (opts.held) return recoverLocked(stagingDir);
  // A journal is only abandoned if no live process holds the night's staging lock: recovering
  // under a running adoption would roll back its work mid-way.
  let lock: Lock;
  try {
    lock = acquireLock(join(stagingDir, STAGING_LOCK), `recovery of ${stagingDir}`);
  } catch (err) {
    if (err instanceof StagingError && /already in progress/.test(err.message)) return { recovered: false, restored: [], inProgress: true };
    throw err;
  }
  try {
    return recoverLocked(stagingDir);
  } finally {
    releaseLock(lock);
  }
}

function recoverLocked(stagingDir: string): { recovered: boolean; restored: string[] } {
  const j = readJournal(stagingDir);
  if (!j) return { recovered: false, restored: [] };
  const restored: string[] = [];
  const conflicts: string[] = [];
  for (const t of [...j.targets].reverse()) {
    const now = fileSha(t.live_path) ?? "";
    if (now === t.baseline_sha256) continue;
    if (now === t.proposed_sha256) {
      restore(t.live_path, t.original_b64, t.original_mode);
      restored.push(t.live_path);
    } else conflicts.push(t.live_path);
  }
  const r = j.receipt;
  const rnow = fileSha(r.path) ?? "";
  if (rnow !== r.baseline_sha256) {
    if (rnow === r.proposed_sha256) restore(r.path, r.original_b64, r.original_mode);
    else conflicts.push(r.path);
  }
  if (conflicts.length) {
    throw new StagingError(`cannot recover the interrupted adoption in ${stagingDir}: changed since: ${conflicts.join(", ")}; the journal and backups are kept for manual resolution`);
  }
  for (const t of j.targets) {
    if (t.backup_path && t.original_b64 !== null && fileSha(t.backup_path) === t.baseline_sha256) rmSync(t.backup_path, { force: true });
    for (const d of [...t.created_dirs].reverse()) {
      try {
        if (existsSync(d) && statSync(d).isDirectory() && readdirSync(d).length === 0) rmdirSync(d);
      } catch {
        // A directory someone else filled is left alone.
      }
    }
  }
  rmSync(join(stagingDir, JOURNAL_FILE), { force: true });
  return { recovered: true, restored };
}
