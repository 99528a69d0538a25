import { readdirSync } from "node:fs";
import { join } from "node:path";
import { tightenPrivate } from "../lib/index.ts";

/** The folders of a Sleep state directory whose every file is private (lessons quote sessions, the cache holds prompts). */
const PRIVATE_FOLDERS = ["lessons", "cache", "evidence"];
/** Its files that hold private data (the state database and its WAL, the seal key). */
const PRIVATE_FILES = ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm", "night-seal.key"];

/**
 * Tighten a Sleep state directory made before its data was kept private (umask 022 left it 0755,
 * its files 0644): the directory and its known folders become 0700, the files they hold 0600.
 * Only SkillOpt's own entries are touched (never a whole tree: the directory may be one the user
 * named), links and other users' entries are left alone. Returns what it changed.
 */
export function tightenStateDir(stateDir: string): string[] {
  const changed: string[] = [];
  const touch = (p: string) => {
    if (tightenPrivate(p)) changed.push(p);
  };
  touch(stateDir);
  for (const f of PRIVATE_FILES) touch(join(stateDir, f));
  for (const d of PRIVATE_FOLDERS) {
    const dir = join(stateDir, d);
    touch(dir);
    let names: string[] = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const n of names) touch(join(dir, n));
  }
  return changed;
}
