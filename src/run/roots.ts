import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { log, userStateDir, writeJsonAtomic } from "../lib/index.ts";
import { findRuns } from "./status.ts";

/**
 * The folders the user's runs went to (`--out runs/x` puts a run under runs/), most recent first,
 * so `skillopt ui` and `skillopt runs` without a folder find runs made outside ./outputs.
 */
const KEEP = 20;

function rootsFile(): string {
  return join(userStateDir(), "skillopt", "run-roots.json");
}

function readRoots(): string[] {
  try {
    const parsed: unknown = JSON.parse(readFileSync(rootsFile(), "utf8"));
    return Array.isArray(parsed) ? parsed.filter((r): r is string => typeof r === "string") : [];
  } catch {
    return [];
  }
}

/** Note that a run started in `runDir`: its parent folder becomes the most recent root. Never fails a run. */
export function rememberRunRoot(runDir: string): void {
  const root = dirname(resolve(runDir));
  try {
    writeJsonAtomic(rootsFile(), [root, ...readRoots().filter((r) => r !== root)].slice(0, KEEP));
  } catch (err) {
    log.debug(`cannot note the run folder in ${rootsFile()}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Where the runs are when no folder was named, and why that one (for a line saying where it looked). */
interface DefaultRoot {
  root: string;
  /** "default": ./outputs; "last": the folder of the most recent run that still holds runs. */
  source: "default" | "last";
  /** Every folder looked in, in order. */
  looked: string[];
}

/** ./outputs when it holds runs; else the most recent remembered folder that still does; else ./outputs. */
export function defaultRunsRoot(cwd = process.cwd()): DefaultRoot {
  const outputs = resolve(cwd, "outputs");
  const looked = [outputs];
  const holdsRuns = (d: string) => existsSync(d) && findRuns(d).length > 0;
  if (holdsRuns(outputs)) return { root: outputs, source: "default", looked };
  for (const r of readRoots()) {
    if (r === outputs) continue;
    looked.push(r);
    if (holdsRuns(r)) return { root: r, source: "last", looked };
  }
  return { root: outputs, source: "default", looked };
}

/** A folder as the user would type it from `cwd`. */
export function shownPath(p: string, cwd = process.cwd()): string {
  const rel = relative(cwd, p);
  return rel === "" ? "." : rel.startsWith("..") ? p : rel;
}
