import { chmodSync, existsSync, lstatSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import {
  DataError,
  isWithin,
  type PackageFile,
  packPackage,
  readSkillFile,
  unpackPackage,
  writeFileAtomic,
} from "../lib/index.ts";

/** At most this many files, and this many bytes in all, in a skill folder (SKILL.md and what it points to). */
const MAX_FILES = 500;
const MAX_BYTES = 16 * 1024 * 1024;

/** A skill as agents install it: a folder holding SKILL.md and the files it refers to. */
export interface SkillFolder {
  dir: string;
  /** Paths relative to `dir`, sorted, `/`-separated; regular files only. */
  files: string[];
}

/** Whether `path` is a skill folder (a directory with a SKILL.md file). */
export function isSkillFolder(path: string): boolean {
  try {
    return lstatSync(path).isDirectory() && existsSync(join(path, "SKILL.md"));
  } catch {
    return false;
  }
}

/**
 * Every file of a skill folder. A symbolic link, a device or a FIFO is refused by name (a folder
 * copied into a run must be plain files), and so is a folder over the file or size limits.
 */
export function readSkillFolder(dir: string, label: string): SkillFolder {
  const files: string[] = [];
  let bytes = 0;
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) {
        files.push(relative(dir, p).split("\\").join("/"));
        bytes += st.size;
      } else
        throw new DataError(
          `${label} ${dir}: ${relative(dir, p)} is not a regular file (a link, device or FIFO); a skill folder holds plain files`,
          {
            data: { path: p, input: label, problem: "not_regular_file" },
          },
        );
      if (files.length > MAX_FILES || bytes > MAX_BYTES)
        throw new DataError(
          `${label} ${dir}: more than ${MAX_FILES} files or ${MAX_BYTES / 1024 / 1024} MB; is this a skill folder?`,
          {
            data: { path: dir, input: label, problem: "too_large" },
          },
        );
    }
  };
  walk(dir);
  return { dir, files };
}

/** The SKILL.md text of a skill folder (checked like any skill file). */
export function readFolderSkill(dir: string, label: string): string {
  return readSkillFile(join(dir, "SKILL.md"), label);
}

/** A package file's text: a Markdown or text file in valid UTF-8 without NUL bytes, else undefined (carried as bytes). */
function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** The files of a folder that go into the package text: Markdown and text files beside SKILL.md, in UTF-8. */
function packedFiles(folder: SkillFolder, fixed: boolean): PackageFile[] {
  return folder.files.flatMap((path) => {
    if (path === "SKILL.md" || !/\.(md|txt)$/i.test(path)) return [];
    const text = textOf(readFileSync(join(folder.dir, path)));
    return text === undefined ? [] : [{ path, text, fixed }];
  });
}

/**
 * A skill folder as the text the engine trains: SKILL.md, then its Markdown and text files
 * (trainable, or fixed with optimizer.skill_files=carry). Scripts, binaries and other files are
 * not in it; best_skill/ carries them byte for byte.
 */
export function packFolder(folder: SkillFolder, skillMd: string, mode: "train" | "carry"): string {
  return packPackage(skillMd, packedFiles(folder, mode === "carry"));
}

/**
 * Write `best_skill/` beside a run's best_skill.md: every file of the source folder, each the
 * best package's version when training changed it and its original bytes when not (a run that
 * accepted nothing gives back the folder it was given, byte-exact), and every file the run added.
 * The folder is built beside and renamed into place, so a reader never sees half of it.
 */
export function writeBestSkillFolder(runDir: string, folder: SkillFolder, initial: string, best: string): string {
  const out = join(runDir, "best_skill");
  const tmp = join(runDir, `.best_skill.tmp-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const before = unpackPackage(initial);
  const after = unpackPackage(best);
  const changed = (path: string) => {
    if (path === "SKILL.md") return before.skillMd === after.skillMd ? undefined : after.skillMd;
    const b = before.files.find((f) => f.path === path)?.text;
    const a = after.files.find((f) => f.path === path)?.text;
    return a === undefined || a === b ? undefined : a;
  };
  for (const f of folder.files) {
    writeFileAtomic(join(tmp, f), changed(f) ?? readFileSync(join(folder.dir, f)), { durable: false });
    // A script keeps its mode (an executable stays executable).
    chmodSync(join(tmp, f), statSync(join(folder.dir, f)).mode & 0o777);
  }
  if (!folder.files.includes("SKILL.md")) writeFileAtomic(join(tmp, "SKILL.md"), after.skillMd, { durable: false });
  for (const f of after.files)
    if (!folder.files.includes(f.path) && isWithin(tmp, join(tmp, f.path)))
      writeFileAtomic(join(tmp, f.path), f.text, { durable: false });
  rmSync(out, { recursive: true, force: true });
  renameSync(tmp, out);
  return out;
}
