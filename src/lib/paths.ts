import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve, sep } from "node:path";

/** The user's home directory (HOME wins, so tests can redirect it). */
export function homeDir(): string {
  return process.env.HOME || process.env.USERPROFILE || homedir();
}

/** XDG cache root: $XDG_CACHE_HOME, else ~/.cache (macOS: ~/Library/Caches, Windows: %LOCALAPPDATA%). */
function userCacheDir(): string {
  if (process.env.XDG_CACHE_HOME) return process.env.XDG_CACHE_HOME;
  if (process.platform === "darwin") return join(homeDir(), "Library", "Caches");
  if (process.platform === "win32" && process.env.LOCALAPPDATA) return process.env.LOCALAPPDATA;
  return join(homeDir(), ".cache");
}

/** Directory of SkillOpt's model-call cache: $SKILLOPT_CACHE_DIR, else <user cache>/skillopt. */
export function skilloptCacheDir(): string {
  return process.env.SKILLOPT_CACHE_DIR || join(userCacheDir(), "skillopt");
}

/** XDG state root for logs: $XDG_STATE_HOME, else ~/.local/state. */
export function userStateDir(): string {
  if (process.env.XDG_STATE_HOME) return process.env.XDG_STATE_HOME;
  return join(homeDir(), ".local", "state");
}

/** True when `p` is `root` or below it, by path (both absolute; links are the caller's to resolve). */
export function isWithin(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Resolve `rel` (already URL-decoded) inside `root`; null when it would leave it, by `..`, an
 * absolute path, a NUL byte or a symlink pointing outside.
 */
export function resolveInside(root: string, rel: string): string | null {
  if (rel.includes("\0") || isAbsolute(rel) || /^[a-zA-Z]:/.test(rel) || rel.includes("\\")) return null;
  const rootAbs = resolve(root);
  const target = resolve(rootAbs, rel);
  const r = relative(rootAbs, target);
  if (r.startsWith("..") || isAbsolute(r)) return null;
  try {
    const realRoot = realpathSync(rootAbs);
    const realTarget = realpathSync(target);
    const rr = relative(realRoot, realTarget);
    if (rr.startsWith(`..${sep}`) || rr === ".." || isAbsolute(rr)) return null;
    return realTarget;
  } catch {
    return target;
  }
}
