import { existsSync } from "node:fs";
import { join } from "node:path";
import { StagingError, sha256 } from "../../lib/index.ts";
import { type LegacyReceipt, readCreatedDirs, readReceipts, type SkillReceipt } from "./adopt.ts";
import { checkStagingPath, type NightScope, readLive, trustNight } from "./guard.ts";
import { completeRollback, type RollbackJournal, recoverJournal, type TargetHooks, writeJournal } from "./journal.ts";
import { lockAll, unlockAll } from "./locks.ts";
import { entryExists, readRegularFile } from "./read.ts";

/** What a rollback did. */
interface RollbackResult {
  staging_dir: string;
  restored: string[];
  removed: string[];
  /** Targets already holding their original bytes (an earlier rollback got that far). */
  already: string[];
  /** An interrupted rollback of this night was completed first. */
  completed_interrupted: boolean;
}

interface Row {
  file: string;
  live: string;
  before: string;
  after: string;
  backup: string;
}

function receiptsOf(scope: NightScope): Row[] {
  const out: Row[] = [];
  for (const file of ["adopted_legacy.json", "adopted_skills.json"]) {
    for (const r of readReceipts<LegacyReceipt | SkillReceipt>(join(scope.dir, file), scope)) {
      const live = "live_path" in r ? r.live_path : r.live_skill_path;
      out.push({ file, live, before: r.sha256_before, after: r.sha256_after, backup: r.backup_path });
    }
  }
  return out;
}

/** True when the night has receipts (something was adopted from it). */
export function hasReceipts(dir: string): boolean {
  return entryExists(join(dir, "adopted_legacy.json")) || entryExists(join(dir, "adopted_skills.json"));
}

/**
 * Undo the adoptions of a night from its sealed receipts and backups: every live target must
 * still hold the adopted bytes (else refuse: someone edited it since), and is restored to the
 * backed-up original bytes, or removed when adoption created it; receipts and backups are then
 * renamed aside (`*.rolledback-<ms>`) so the night could be adopted again. The rollback is
 * journaled: killed at any point, the next status, adopt or rollback completes it.
 */
export function rollbackNight(
  dir: string,
  opts: { stateDir: string; force?: boolean; now?: number; hooks?: TargetHooks },
): RollbackResult {
  trustNight(dir, opts.stateDir);
  const rec = recoverJournal(dir, { stateDir: opts.stateDir, force: opts.force });
  if (rec.inProgress)
    throw new StagingError(`an adoption or rollback of ${dir} is already in progress`, { data: { path: dir } });
  let scope = trustNight(dir, opts.stateDir);
  const result: RollbackResult = {
    staging_dir: scope.dir,
    restored: [],
    removed: [],
    already: [],
    completed_interrupted: rec.kind === "rollback",
  };
  if (rec.kind === "rollback") result.restored.push(...rec.restored);
  let rows = receiptsOf(scope);
  if (rows.length === 0) {
    if (rec.kind === "rollback") return result;
    throw new StagingError(`nothing was adopted from ${dir}`, { data: { path: dir, kind: "nothing_to_rollback" } });
  }
  const locks = lockAll(
    scope.dir,
    rows.map((r) => r.live),
    `rollback of ${dir}`,
  );
  try {
    scope = trustNight(dir, opts.stateDir);
    rows = receiptsOf(scope);
    const targets: RollbackJournal["targets"] = [];
    for (const r of rows) {
      const b = readLive(scope, r.live);
      const now = b ? sha256(b) : "";
      if (now === r.before) {
        result.already.push(r.live);
        continue;
      }
      if (now !== r.after && !opts.force) {
        throw new StagingError(
          `${r.live} changed since it was adopted; refusing to overwrite it (use --force to restore anyway)`,
          {
            data: { path: r.live, kind: "rollback_refused" },
          },
        );
      }
      if (r.before !== "") {
        if (!r.backup) throw new StagingError(`backup (none) of ${r.live} is missing`, { data: { path: r.live } });
        checkStagingPath(scope, r.backup);
        const bytes = readRegularFile(r.backup, { missingOk: true });
        if (!bytes) throw new StagingError(`backup ${r.backup} of ${r.live} is missing`, { data: { path: r.backup } });
        if (sha256(bytes) !== r.before)
          throw new StagingError(`backup ${r.backup} does not hold the original bytes of ${r.live}`, {
            data: { path: r.backup },
          });
      }
      targets.push({ live_path: r.live, sha256_before: r.before, sha256_after: r.after, backup_path: r.backup });
    }
    const stamp = opts.now ?? Date.now();
    const renames = ["adopted_legacy.json", "adopted_skills.json", "backup"]
      .filter((f) => entryExists(join(scope.dir, f)))
      .map((f) => ({
        from: join(scope.dir, f),
        to: join(scope.dir, `${f.replace(/\.json$/, "")}.rolledback-${stamp}${f.endsWith(".json") ? ".json" : ""}`),
      }));
    for (const r of renames)
      if (existsSync(r.to)) throw new StagingError(`${r.to} already exists`, { data: { path: r.to } });
    const journal: RollbackJournal = {
      version: 2,
      kind: "rollback",
      force: opts.force === true,
      targets,
      created_dirs: readCreatedDirs(scope),
      renames,
    };
    writeJournal(scope, journal, true);
    for (const p of completeRollback(scope, journal, opts.hooks)) {
      const t = targets.find((x) => x.live_path === p)!;
      (t.sha256_before === "" ? result.removed : result.restored).push(p);
    }
    return result;
  } finally {
    unlockAll(locks);
  }
}
