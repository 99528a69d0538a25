import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import type { TaskRecord } from "./types.ts";

/** Outcome of resolving one skill name (spec §7.14). */
type SkillResolution =
  | { status: "found"; path: string }
  | { status: "missing" | "ambiguous" | "rejected"; reason: string };

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

function versionKey(name: string): Array<number | string> {
  const m = /^(\d+(?:\.\d+)*)(.*)$/.exec(name);
  if (!m) return [Number.NEGATIVE_INFINITY, name];
  // A bare release beats a prerelease with the same numeric prefix.
  return [...m[1]!.split(".").map(Number), m[2] ? 0 : 1, name];
}

function newest(names: string[]): string | undefined {
  return [...names].sort((a, b) => {
    const ka = versionKey(a);
    const kb = versionKey(b);
    for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
      const x = ka[i] ?? -1;
      const y = kb[i] ?? -1;
      if (x === y) continue;
      return typeof x === "number" && typeof y === "number" ? y - x : String(y).localeCompare(String(x));
    }
    return 0;
  })[0];
}

/** Skill search roots, in order, existing and de-duplicated by realpath (spec §7.14). */
export function skillRoots(project: string, claudeHome: string, extra: readonly string[]): string[] {
  const roots = [".agents/skills", ".claude/skills", ".cursor/skills", ".devin/skills"].map((r) => join(project, r));
  if (claudeHome.trim()) roots.push(join(claudeHome, "skills"));
  for (const r of extra) roots.push(isAbsolute(r) ? r : resolve(project, r));
  const cache = join(claudeHome, "plugins", "cache");
  if (claudeHome.trim() && isDir(cache)) {
    for (const market of readdirSync(cache).sort()) {
      for (const plugin of isDir(join(cache, market)) ? readdirSync(join(cache, market)).sort() : []) {
        const base = join(cache, market, plugin);
        if (!isDir(base)) continue;
        const versions = readdirSync(base).filter((v) => isDir(join(base, v, "skills")));
        const v = newest(versions);
        if (v) roots.push(join(base, v, "skills"));
        else if (isDir(join(base, "skills"))) roots.push(join(base, "skills"));
      }
    }
  }
  const seen = new Set<string>();
  return roots.filter((r) => {
    if (!isDir(r)) return false;
    const real = realpathSync(r);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

/** A single-segment skill name that is safe to use in a file name (spec §7.4). */
export function safeSkillName(name: string): boolean {
  const n = name.trim();
  return n !== "" && n !== "." && n !== ".." && !/[\\/:*?"<>|~\u0000-\u001f]/.test(n) && !/[. ]$/.test(n);
}

/** Resolve a skill name to its SKILL.md below exactly one root. */
export function resolveSkill(name: string, roots: readonly string[]): SkillResolution {
  const n = name.trim();
  if (!safeSkillName(n)) return { status: "rejected", reason: `unsafe skill name ${JSON.stringify(name)}` };
  const hits = new Set<string>();
  for (const root of roots) {
    const p = join(root, n, "SKILL.md");
    if (!existsSync(p) || !statSync(p).isFile()) continue;
    const real = realpathSync(p);
    if (relative(realpathSync(root), real).startsWith("..")) continue;
    hits.add(real);
  }
  if (hits.size === 0) return { status: "missing", reason: `no SKILL.md for ${n} in the skill roots` };
  if (hits.size > 1) return { status: "ambiguous", reason: `${n} is defined in ${hits.size} roots` };
  return { status: "found", path: [...hits][0]! };
}

/** Group tasks by their single skill hint; unhinted or conflicting tasks go to the catch-all (spec §4.8). */
export function groupBySkillHint(tasks: readonly TaskRecord[], managedName: string): Map<string, TaskRecord[]> {
  const hints = new Map<string, Set<string>>();
  for (const t of tasks) {
    const set = hints.get(t.id) ?? new Set<string>();
    set.add(t.skill_hint.trim());
    hints.set(t.id, set);
  }
  const groups = new Map<string, TaskRecord[]>();
  const placed = new Set<string>();
  for (const t of tasks) {
    if (placed.has(t.id)) continue;
    placed.add(t.id);
    const h = [...hints.get(t.id)!];
    const name = h.length === 1 && h[0] ? h[0] : managedName;
    groups.set(name, [...(groups.get(name) ?? []), t]);
  }
  return groups;
}
