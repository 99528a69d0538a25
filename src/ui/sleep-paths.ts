import { realpathSync } from "node:fs";
import { basename, isAbsolute, relative, resolve } from "node:path";
import { homeDir } from "../lib/paths.ts";

function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (!r.startsWith("..") && !isAbsolute(r));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
}

const MARKDOWN = /\.(md|mdc)$/i;

/**
 * May the dashboard read this live path that a night's manifest names? A night under a project's
 * `.skillopt-sleep/` is untrusted input (a cloned repository can ship one), so a live path must
 * pass the rules adoption applies: absolute, no `..`, no control characters, a SKILL.md or a
 * .md/.mdc memory file, and (after following symlinks) inside the project or the user's home.
 * Returns why not, in one line, or null.
 *
 * This is the dashboard's single entry to the path rule; it is meant to call src/sleep's own
 * check once that exists, so the Sleep page and adoption can never disagree.
 */
export function liveReadRefusal(path: string, which: "skill" | "memory", where: { project: string; home?: string }): string | null {
  if (typeof path !== "string" || !isAbsolute(path) || path.split(/[\\/]/).includes("..") || /[\u0000-\u001f]/.test(path) || path.startsWith("~"))
    return `unsafe ${which} target path: ${JSON.stringify(path)}`;
  if (which === "skill" && basename(path) !== "SKILL.md") return `a skill target must be named SKILL.md: ${path}`;
  if (which === "memory" && !MARKDOWN.test(path)) return `a memory target must be a .md or .mdc file: ${path}`;
  const roots = [resolve(where.project), resolve(where.home || homeDir())];
  const realRoots = roots.map(real);
  if (!roots.some((r) => inside(r, resolve(path)))) return `${path} is outside the project and the home directory; not read`;
  const target = real(path);
  if (!realRoots.some((r) => inside(r, target)) && !roots.some((r) => inside(r, target))) return `${path} leads outside the project and the home directory (${target}); not read`;
  if (!MARKDOWN.test(target)) return `${path} leads to ${target}, which is not a skill or memory file; not read`;
  return null;
}
