import { packageSections, packPackage, sectionText, unpackPackage } from "../lib/index.ts";

/**
 * A skill package in one text: SKILL.md, then each text file of the skill folder between markers.
 * The engine trains, checkpoints, gates and resumes this text like any skill; the CLI packs a folder
 * into it and unpacks the best one into `best_skill/`. A skill without files is its SKILL.md alone,
 * so nothing about single-file skills changes.
 *
 *   <SKILL.md>
 *   <!-- SKILLOPT_FILE references/formats.md -->
 *   <the file's text>
 *   <!-- SKILLOPT_FILE_END -->
 *
 * A file packed `(fixed)` is shown to the target but never trained: the optimizer sees only its
 * name, and a candidate that changes it is refused (optimizer.skill_files=carry).
 */

/** Whether a skill text is a package with at least one file. */
export function hasFiles(pkg: string): boolean {
  return packageSections(pkg).length > 0;
}

/** Where the file sections lie (protected from SKILL.md edits), and where the first one starts (-1 = none). */
export function fileSpans(pkg: string): { start: number; end: number }[] {
  return packageSections(pkg).map((s) => ({ start: s.start, end: s.end }));
}

/** Apply `fn` to SKILL.md of a package and put the files back after it (for the slow update and the appendix). */
export function onSkillMd(pkg: string, fn: (skillMd: string) => string): string {
  const secs = packageSections(pkg);
  if (!secs.length) return fn(pkg);
  const { skillMd, files } = unpackPackage(pkg);
  return packPackage(fn(skillMd), files);
}

/** The text of one file of a package, or undefined when the package has no such file. */
export function fileText(pkg: string, path: string): string | undefined {
  return packageSections(pkg).find((s) => s.path === path)?.text;
}

/** Whether a package file is packed fixed (carried, not trained). */
export function isFixedFile(pkg: string, path: string): boolean {
  return packageSections(pkg).some((s) => s.path === path && s.fixed);
}

/** The package with one file's text replaced, or the file added at the end when it is new. */
export function setFileText(pkg: string, path: string, text: string): string {
  const s = packageSections(pkg).find((x) => x.path === path);
  if (!s) return pkg + sectionText({ path, text, fixed: false });
  return pkg.slice(0, s.textStart) + text + pkg.slice(s.textEnd);
}

/**
 * Why `path` may not name a new file of a package, or undefined when it may: a relative,
 * `/`-separated path inside the folder, of a Markdown or text file, not SKILL.md.
 */
export function badFilePath(path: string): string | undefined {
  if (!path.trim() || path !== path.trim()) return "an empty path, or one with leading or trailing spaces";
  if (path.startsWith("/") || path.includes("\\") || /^[A-Za-z]:/.test(path)) return "not a relative path";
  if (path.split("/").some((p) => p === ".." || p === "." || p === "")) return "a path must stay inside the folder";
  if (!/\.(md|txt)$/i.test(path)) return "only Markdown or text files (.md, .txt) can be proposed";
  if (path === "SKILL.md") return "SKILL.md is the default file; leave `file` out to edit it";
  if (/[\u0000-\u001f<>]/.test(path) || path.length > 200) return "control characters, '<', '>' or over 200 characters";
  return undefined;
}

/**
 * What the optimizer is shown of a package: the package itself, with the text of each fixed file
 * replaced by a note (it cannot be edited, and its text is not the optimizer's to see).
 */
export function optimizerView(pkg: string): string {
  const secs = packageSections(pkg).filter((s) => s.fixed);
  let out = pkg;
  for (const s of [...secs].reverse())
    out = `${out.slice(0, s.textStart)}(not shown: this file is carried unchanged)${out.slice(s.textEnd)}`;
  return out;
}

/** The limits a package is held to (optimizer.max_file_tokens, optimizer.max_package_tokens). */
export interface PackageLimits {
  maxFileTokens: number | null;
  maxPackageTokens: number | null;
}

/**
 * A whole-package rewrite with its files put right: a file the rewrite left out, and every fixed
 * file, comes back as it is in `current`; files the rewrite kept or added stay as rewritten.
 */
export function restoreFiles(current: string, rewritten: string): string {
  const cur = unpackPackage(current).files;
  if (!cur.length && !hasFiles(rewritten)) return rewritten;
  const next = unpackPackage(rewritten);
  const files = cur.map((f) => {
    const r = next.files.find((x) => x.path === f.path);
    return f.fixed || !r ? f : { ...r, fixed: false };
  });
  for (const r of next.files) if (!cur.some((f) => f.path === r.path)) files.push({ ...r, fixed: false });
  return packPackage(next.skillMd, files);
}

/** The package limits of a config's optimizer section. */
export function packageLimits(o: { max_file_tokens: number | null; max_package_tokens: number | null }): PackageLimits {
  return { maxFileTokens: o.max_file_tokens, maxPackageTokens: o.max_package_tokens };
}

/** Why a candidate package breaks its files' rules against the current one, or undefined when it does not. */
export function packageViolation(
  candidate: string,
  current: string,
  limits: PackageLimits,
  tokens: (text: string) => number,
):
  | { kind: "file_too_large"; file: string; tokens: number; max: number }
  | { kind: "package_too_large"; tokens: number; max: number }
  | { kind: "bad_file"; file: string; reason: string }
  | undefined {
  const cand = packageSections(candidate);
  const cur = new Map(packageSections(current).map((s) => [s.path, s]));
  for (const s of cand) {
    const before = cur.get(s.path);
    if (before?.fixed && (before.text !== s.text || !s.fixed))
      return { kind: "bad_file", file: s.path, reason: "a carried file (optimizer.skill_files=carry) cannot change" };
    if (!before) {
      const why = badFilePath(s.path);
      if (why) return { kind: "bad_file", file: s.path, reason: why };
    }
  }
  for (const [path, s] of cur)
    if (!cand.some((c) => c.path === path))
      return { kind: "bad_file", file: path, reason: s.fixed ? "a carried file was dropped" : "a file was dropped" };
  if (limits.maxFileTokens)
    for (const s of cand) {
      const n = tokens(s.text);
      if (n > limits.maxFileTokens)
        return { kind: "file_too_large", file: s.path, tokens: n, max: limits.maxFileTokens };
    }
  if (limits.maxPackageTokens && cand.length) {
    const n = tokens(candidate);
    if (n > limits.maxPackageTokens) return { kind: "package_too_large", tokens: n, max: limits.maxPackageTokens };
  }
  return undefined;
}
