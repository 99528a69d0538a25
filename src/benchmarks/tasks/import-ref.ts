import { existsSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DataError, isWithin as inside, readInputFile } from "../../lib/index.ts";
import { systemFile } from "../shared/paths.ts";

/**
 * The folder an imported file's references must stay in, given the folder that holds the file: the
 * git work tree around it (the nearest folder at or above it with a `.git`), or, outside any
 * repository, that folder itself. A cloned repository cannot move that line: git refuses a tree
 * that ships `.git`.
 */
export function importRoot(dir: string): string {
  const start = realDir(resolve(dir));
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return start;
  }
}

function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/**
 * Read a file an imported config refers to (a promptfoo `file://`, a skill-creator `files:` entry),
 * relative to `base`. The reference is resolved through every link (realpath) and must land inside
 * `root` (importRoot) and outside /proc, /sys and /dev, and be a regular file opened without
 * blocking; anything else is refused with one line naming `where` and the reference (as `shown`).
 * Returns the real path and the bytes.
 */
export function readImportRef(
  root: string,
  base: string,
  ref: string,
  where: string,
  shown = ref,
): { path: string; bytes: Buffer } {
  const asked = resolve(base, ref);
  let real: string;
  try {
    real = realpathSync(asked);
  } catch {
    throw new DataError(`${where}: ${shown} does not exist (looked for ${asked})`, {
      data: { path: asked, problem: "not_found" },
    });
  }
  const refuse = (why: string) =>
    new DataError(`${where}: ${shown} ${why}; an imported file may only name files inside ${root}`, {
      data: { path: asked, problem: "outside_project" },
    });
  if (systemFile(real)) throw refuse(`is a system file (${real})`);
  if (!inside(root, real))
    throw refuse(real === asked ? "is outside the project" : `resolves outside the project (to ${real})`);
  const bytes = readInputFile(real, `${where}: ${shown}:`);
  return { path: real, bytes };
}
