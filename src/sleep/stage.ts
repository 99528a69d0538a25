import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import {
  compactTimestamp,
  fileKind,
  removeOrphanTemps,
  StagingError,
  sha256,
  writeFileAtomic,
  writeJsonAtomic,
} from "../lib/index.ts";
import { entryExists, readRegularFile } from "./adopt/read.ts";
import { sealKey, sealObject } from "./adopt/seal.ts";
import { type LegacyRow, MANIFEST_SCHEMA, type Manifest, type SkillRow } from "./manifest.ts";
import { safeSkillName } from "./skills.ts";

/** Night folder names: `YYYYMMDD-HHMMSS[-N]`. */
export const NIGHT_NAME = /^\d{8}-\d{6}(-\d+)?$/;

/** Raw live bytes read before consolidation, pinned by hash and identity (spec §7.4). */
export interface Baseline {
  path: string;
  exists: boolean;
  text: string;
  sha256: string;
  realpath: string;
}

/** An accepted per-skill proposal, pinned to its resolved live file. */
export interface SkillProposal {
  name: string;
  text: string;
  baseline: Baseline;
}

/** Read a live skill/memory file as a pinned baseline ("" when absent). Invalid UTF-8 is refused. */
export function readBaseline(path: string): Baseline {
  if (!existsSync(path)) return { path, exists: false, text: "", sha256: "", realpath: canonicalMissing(path) };
  let bytes: Uint8Array;
  try {
    // A FIFO or device in place of a skill or memory file would block the read forever.
    const st = statSync(path);
    if (!st.isFile())
      throw new StagingError(
        `${path} is ${fileKind(st)}, not a regular file; SkillOpt-Sleep will not read or rewrite it`,
        { data: { path } },
      );
    bytes = readRegularFile(realpathSync(path));
  } catch (err) {
    if (err instanceof StagingError) throw err;
    throw new StagingError(`cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`, {
      data: { path },
    });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new StagingError(`${path} is not valid UTF-8; SkillOpt-Sleep will not rewrite it`, { data: { path } });
  }
  return { path, exists: true, text, sha256: sha256(bytes), realpath: realpathSync(path) };
}

/** realpath of a file that may not exist: realpath of the nearest existing ancestor + the rest. */
export function canonicalMissing(path: string): string {
  const abs = resolve(path);
  if (existsSync(abs)) return realpathSync(abs);
  const parent = dirname(abs);
  if (parent === abs) return abs;
  return join(canonicalMissing(parent), basename(abs));
}

/** `<project>/.skillopt-sleep/staging`, refusing symlinked or misplaced roots (spec §7.2). */
function stagingRoot(project: string, create = false): string {
  const base = join(project, ".skillopt-sleep");
  const root = join(base, "staging");
  for (const p of [base, root]) {
    if (!existsSync(p)) {
      if (!create) return root;
      mkdirSync(p, { recursive: true, mode: 0o700 });
    }
    const st = lstatSync(p);
    if (st.isSymbolicLink() || !st.isDirectory())
      throw new StagingError(`${p} must be a real directory (not a link or file)`, { data: { path: p } });
  }
  // Staged evidence (prompts, transcripts excerpts, proposals) is never meant to be committed.
  const ignore = join(base, ".gitignore");
  if (create && !existsSync(ignore) && !entryExists(ignore)) writeFileAtomic(ignore, "*\n");
  if (realpathSync(root) !== join(realpathSync(project), ".skillopt-sleep", "staging"))
    throw new StagingError(`${root} resolves outside the project`, { data: { path: root } });
  return root;
}

/** Whether a night folder holds a staged night (its manifest, written last, is there). */
export function isStaged(dir: string): boolean {
  return existsSync(join(dir, "manifest.json"));
}

/**
 * Remove a night folder that never staged anything (a night that failed, or was killed): only a
 * real folder with a night's name directly in the project's staging folder, and never a staged one.
 */
export function removeUnstaged(project: string, dir: string): void {
  if (!dir || !NIGHT_NAME.test(basename(dir)) || !inStaging(project, dir)) return;
  if (!entryExists(dir) || !lstatSync(dir).isDirectory() || isStaged(dir)) return;
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Remove the temp files a killed night's writes left in the project's staging folder (`.latest`)
 * and in `nightDir` (a night killed after staging: a file written after its manifest).
 */
export function removeStagingTemps(project: string, nightDir?: string): void {
  removeOrphanTemps(stagingRoot(project));
  if (nightDir && inStaging(project, nightDir)) removeOrphanTemps(nightDir);
}

/** Whether `dir` sits directly in the project's staging folder. */
function inStaging(project: string, dir: string): boolean {
  return resolve(dirname(dir)) === resolve(stagingRoot(project));
}

/**
 * Reserve a new night folder atomically (mkdir, then -2, -3, … on collision). `claim` is told each
 * name before it is created, so whoever records it (the night's row) knows the folder before it exists.
 */
export function reserveNight(project: string, now = new Date(), claim: (dir: string) => void = () => {}): string {
  const root = stagingRoot(project, true);
  const base = compactTimestamp(now);
  for (let n = 1; n < 1000; n++) {
    const dir = join(root, n === 1 ? base : `${base}-${n}`);
    if (entryExists(dir)) continue;
    claim(dir);
    try {
      mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST")
        throw new StagingError(`cannot create ${dir}: ${String(err)}`, { data: { path: dir } });
    }
  }
  throw new StagingError(`cannot reserve a night folder under ${root}`, { data: { path: root } });
}

/** A proposal to publish, with the baseline it was derived from. */
export interface Proposal {
  which: "skill" | "memory";
  text: string;
  baseline: Baseline;
}

function checkLivePath(p: string, which: "skill" | "memory"): void {
  if (!isAbsolute(p) || p.split(/[\\/]/).includes("..") || /[\u0000-\u001f]/.test(p) || p.startsWith("~"))
    throw new StagingError(`unsafe ${which} target path: ${JSON.stringify(p)}`, { data: { path: p } });
  if (which === "skill" && basename(p) !== "SKILL.md")
    throw new StagingError(`skill target must be named SKILL.md: ${p}`, { data: { path: p } });
  if (which === "memory" && !/\.(md|mdc)$/.test(p))
    throw new StagingError(`memory target must be a .md or .mdc file: ${p}`, { data: { path: p } });
}

/** proposal file name for a target: proposed_SKILL.md, proposed_CLAUDE.md, proposed_AGENTS.md, … */
function proposalFileName(which: "skill" | "memory", livePath: string): string {
  return which === "skill" ? "proposed_SKILL.md" : `proposed_${basename(livePath).replace(/[^A-Za-z0-9._-]/g, "_")}`;
}

/**
 * Publish a night (spec §7.2–7.4): verify pins, write proposals, report.json, report.md, and the
 * manifest last, all atomically; on failure remove what this batch wrote. Then point `.latest` at it.
 */
export function publishNight(
  dir: string,
  o: {
    stateDir: string;
    skillPath: string;
    memoryPath: string;
    accepted: boolean;
    proposals: Proposal[];
    skills?: SkillProposal[];
    skillRoots?: string[];
    reportJson: unknown;
    reportMd: string;
  },
): Manifest {
  const legacy: { skill?: LegacyRow; memory?: LegacyRow } = {};
  const files: Array<[string, string]> = [];
  const skillRows: SkillRow[] = [];
  const fold = (s: string) => s.normalize("NFC").toLowerCase();
  const seen = new Set<string>();
  const managedTarget = o.proposals.find((p) => p.which === "skill")?.baseline.realpath;
  for (const sp of o.skills ?? []) {
    const live = sp.baseline.path;
    if (!safeSkillName(sp.name))
      throw new StagingError(`unsafe skill name ${JSON.stringify(sp.name)}`, {
        data: { kind: "unsafe_path", skill: sp.name, problem: "unsafe_name" },
      });
    checkLivePath(live, "skill");
    if (fold(basename(dirname(live))) !== fold(sp.name))
      throw new StagingError(`${live} is not the SKILL.md of a skill named ${sp.name}`, { data: { path: live } });
    for (const key of [`n:${fold(sp.name)}`, `p:${fold(sp.baseline.realpath)}`]) {
      if (seen.has(key)) {
        const data = { skill: sp.name, path: live, problem: "name_collision" };
        throw new StagingError(`two staged skills collide on ${key.slice(2)}`, { data });
      }
      seen.add(key);
    }
    if (managedTarget && fold(managedTarget) === fold(sp.baseline.realpath))
      throw new StagingError(`${live} is already the managed skill target`, { data: { path: live } });
    if (!sp.text.trim()) {
      const data = { skill: sp.name, path: live, problem: "empty_proposal" };
      throw new StagingError(`refusing to stage an empty proposal for skill ${sp.name}`, { data });
    }
    const now = readBaseline(live);
    if (now.realpath !== sp.baseline.realpath || now.sha256 !== sp.baseline.sha256)
      throw new StagingError(`${live} changed during consolidation; discard and rerun this night`, {
        data: { path: live },
      });
    const file = `proposed_SKILL.${sp.name}.md`;
    files.push([file, sp.text]);
    skillRows.push({
      skill_name: sp.name,
      proposed_file: file,
      live_skill_path: live,
      sha256: sha256(sp.text),
      live_sha256: sp.baseline.sha256,
      live_realpath: sp.baseline.realpath,
    });
  }
  const memories: LegacyRow[] = [];
  const targets = new Set<string>();
  for (const p of o.proposals) {
    checkLivePath(p.baseline.path, p.which);
    if (p.which === "skill" && p.text.trim() === "")
      throw new StagingError("refusing to stage an empty skill proposal", {
        data: { path: p.baseline.path, problem: "empty_proposal" },
      });
    const now = readBaseline(p.baseline.path);
    if (now.realpath !== p.baseline.realpath || now.sha256 !== p.baseline.sha256) {
      throw new StagingError(`${p.baseline.path} changed during consolidation; discard and rerun this night`, {
        data: { path: p.baseline.path },
      });
    }
    // One staged file per live file: two proposals for one file (or one realpath) would race at adoption.
    for (const key of [`p:${p.baseline.path}`, `r:${fold(p.baseline.realpath)}`]) {
      if (targets.has(key))
        throw new StagingError(`two proposals target ${p.baseline.path}`, { data: { path: p.baseline.path } });
      targets.add(key);
    }
    let file = proposalFileName(p.which, p.baseline.path);
    for (let n = 2; files.some(([f]) => fold(f) === fold(file)); n++)
      file = `proposed_${n}_${file.slice("proposed_".length)}`;
    files.push([file, p.text]);
    const row = {
      proposed_file: file,
      live_path: p.baseline.path,
      sha256: sha256(p.text),
      live_sha256: p.baseline.sha256,
      live_realpath: p.baseline.realpath,
    };
    // The night's primary memory file keeps the upstream row; further memory files get rows of their own.
    if (p.which === "memory" && (legacy.memory || p.baseline.path !== o.memoryPath)) memories.push(row);
    else legacy[p.which] = row;
  }
  const manifest: Manifest = {
    schema: MANIFEST_SCHEMA,
    schema_version: 2,
    live_skill_path: o.skillPath,
    live_memory_path: o.memoryPath,
    has_skill: false,
    has_memory: false,
    has_managed_skill: legacy.skill !== undefined,
    has_managed_memory: legacy.memory !== undefined,
    accepted: o.accepted,
    ...(legacy.skill || legacy.memory ? { legacy } : {}),
    ...(memories.length ? { memories } : {}),
    ...(skillRows.length ? { skills: skillRows, skill_roots: o.skillRoots ?? [] } : {}),
  };
  const written: string[] = [];
  try {
    for (const [name, text] of files) {
      writeFileAtomic(join(dir, name), text);
      written.push(name);
    }
    writeJsonAtomic(join(dir, "report.json"), o.reportJson);
    written.push("report.json");
    writeFileAtomic(join(dir, "report.md"), o.reportMd);
    written.push("report.md");
    // Sealed with this user's key: adopt, recovery and rollback act only on nights that carry it.
    const key = sealKey(o.stateDir, { create: true, project: dirname(dirname(dirname(resolve(dir)))) })!;
    writeJsonAtomic(
      join(dir, "manifest.json"),
      sealObject(key, "manifest", dir, manifest as unknown as Record<string, unknown>),
    );
    written.push("manifest.json");
  } catch (err) {
    for (const name of written) rmSync(join(dir, name), { force: true });
    throw new StagingError(`cannot publish ${dir}: ${err instanceof Error ? err.message : String(err)}`, {
      data: { path: dir },
      cause: err,
    });
  }
  const latest = join(dirname(dir), ".latest");
  if (!existsSync(latest) || (lstatSync(latest).isFile() && lstatSync(latest).nlink === 1)) {
    writeFileAtomic(latest, `${basename(dir)}\n`);
  }
  return manifest;
}

/** Published nights of a project (with a manifest), newest first. */
export function listNights(project: string): string[] {
  const root = stagingRoot(project);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((n) => NIGHT_NAME.test(n))
    .map((n) => join(root, n))
    .filter((d) => {
      const m = join(d, "manifest.json");
      return !lstatSync(d).isSymbolicLink() && existsSync(m) && lstatSync(m).isFile();
    })
    .sort(
      (a, b) =>
        statSync(join(b, "manifest.json")).mtimeMs - statSync(join(a, "manifest.json")).mtimeMs ||
        (basename(b) > basename(a) ? 1 : -1),
    );
}

/** The latest published night: `.latest` when valid, else the newest manifest (spec §7.2). */
export function latestStaging(project: string): string | undefined {
  const root = stagingRoot(project);
  const pointer = join(root, ".latest");
  if (existsSync(pointer)) {
    const st = lstatSync(pointer);
    if (st.isFile() && st.nlink === 1) {
      const name = (readRegularFile(pointer, { missingOk: true, maxBytes: 256 })?.toString("utf8") ?? "").trim();
      const dir = join(root, name);
      if (NIGHT_NAME.test(name) && existsSync(join(dir, "manifest.json")) && !lstatSync(dir).isSymbolicLink())
        return dir;
    }
  }
  return listNights(project)[0];
}

/** Resolve a NIGHT argument (folder name or path) to a published night folder of the project. */
export function resolveNight(project: string, night: string | undefined): string | undefined {
  if (!night) return latestStaging(project);
  const root = stagingRoot(project);
  const dir = isAbsolute(night) ? night : NIGHT_NAME.test(night) ? join(root, night) : resolve(night);
  if (!existsSync(join(dir, "manifest.json"))) return undefined;
  return dir;
}
