import { existsSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { StagingError, sha256, writeFileAtomic } from "../../lib/index.ts";
import type { LegacyReceipt, SkillReceipt } from "./adopt.ts";
import { recoverJournal } from "./journal.ts";
import { lockAll, unlockAll } from "./locks.ts";

/** What a rollback did. */
export interface RollbackResult {
  staging_dir: string;
  restored: string[];
  removed: string[];
  /** Targets already holding their original bytes (an earlier rollback got that far). */
  already: string[];
}

function receiptsOf(dir: string): Array<{ file: string; live: string; before: string; after: string; backup: string }> {
  const out: Array<{ file: string; live: string; before: string; after: string; backup: string }> = [];
  for (const file of ["adopted_legacy.json", "adopted_skills.json"]) {
    const p = join(dir, file);
    if (!existsSync(p)) continue;
    const rows = JSON.parse(readFileSync(p, "utf8")) as Array<LegacyReceipt | SkillReceipt>;
    for (const r of rows) {
      const live = "live_path" in r ? r.live_path : r.live_skill_path;
      out.push({ file, live, before: r.sha256_before, after: r.sha256_after, backup: r.backup_path });
    }
  }
  return out;
}

/** True when the night has receipts (something was adopted from it). */
export function hasReceipts(dir: string): boolean {
  return existsSync(join(dir, "adopted_legacy.json")) || existsSync(join(dir, "adopted_skills.json"));
}

/**
 * Undo the adoptions of a night from its receipts and backups: every live target must still hold
 * the adopted bytes (else refuse: someone edited it since), and is restored to the backed-up
 * original bytes, or removed when adoption created it. Idempotent: a target already back at its
 * original bytes is skipped, so an interrupted rollback can simply be rerun. Receipts and backups
 * are then renamed aside (`*.rolledback-<ms>`), so the night could be adopted again.
 */
export function rollbackNight(dir: string, opts: { force?: boolean; now?: number } = {}): RollbackResult {
  recoverJournal(dir);
  const rows = receiptsOf(dir);
  if (rows.length === 0) throw new StagingError(`nothing was adopted from ${dir}`, { data: { kind: "nothing_to_rollback" } });
  const locks = lockAll(
    dir,
    rows.map((r) => r.live),
    `rollback of ${dir}`,
  );
  try {
    const plans = rows.map((r) => {
      const now = existsSync(r.live) ? sha256(readFileSync(r.live)) : "";
      if (now === r.before) return { r, action: "already" as const, bytes: undefined };
      if (now !== r.after && !opts.force) {
        throw new StagingError(`${r.live} changed since it was adopted; refusing to overwrite it (use --force to restore anyway)`, { data: { kind: "rollback_refused" } });
      }
      if (r.before === "") return { r, action: "remove" as const, bytes: undefined };
      if (!r.backup || !existsSync(r.backup)) throw new StagingError(`backup ${r.backup || "(none)"} of ${r.live} is missing`);
      const bytes = readFileSync(r.backup);
      if (sha256(bytes) !== r.before) throw new StagingError(`backup ${r.backup} does not hold the original bytes of ${r.live}`);
      return { r, action: "restore" as const, bytes };
    });
    const result: RollbackResult = { staging_dir: dir, restored: [], removed: [], already: [] };
    for (const p of plans) {
      if (p.action === "already") result.already.push(p.r.live);
      else if (p.action === "remove") {
        rmSync(p.r.live, { force: true });
        result.removed.push(p.r.live);
      } else {
        writeFileAtomic(p.r.live, p.bytes!);
        result.restored.push(p.r.live);
      }
    }
    const side = join(dir, "backup", "created_dirs.json");
    if (existsSync(side)) {
      for (const d of (JSON.parse(readFileSync(side, "utf8")) as string[]).reverse()) {
        if (existsSync(d) && readdirSync(d).length === 0) rmdirSync(d);
      }
    }
    const stamp = opts.now ?? Date.now();
    for (const f of ["adopted_legacy.json", "adopted_skills.json", "backup"]) {
      const p = join(dir, f);
      if (existsSync(p)) renameSync(p, join(dir, `${f.replace(/\.json$/, "")}.rolledback-${stamp}${f.endsWith(".json") ? ".json" : ""}`));
    }
    return result;
  } finally {
    unlockAll(locks);
  }
}
