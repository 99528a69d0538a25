import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { BenchmarkContext } from "../../engine/index.ts";
import { homeDir, isWithin } from "../../lib/index.ts";

/**
 * Resolve a data path from the config. Upstream resolves relative paths against the project
 * root (the working directory); a user's own config usually sits beside its data. So: absolute
 * as given; else the first that exists of `<cwd>/p` and `<configDir>/p`; else `<cwd>/p` (so the
 * error names the path the user most likely meant).
 */
export function resolveDataPath(ctx: Pick<BenchmarkContext, "configDir">, p: string): string {
  if (isAbsolute(p)) return p;
  const expanded = p.startsWith("~/") ? join(homeDir(), p.slice(2)) : p;
  if (isAbsolute(expanded)) return expanded;
  const fromCwd = resolve(process.cwd(), expanded);
  if (existsSync(fromCwd)) return fromCwd;
  if (ctx.configDir) {
    const fromConfig = resolve(ctx.configDir, expanded);
    if (existsSync(fromConfig)) return fromConfig;
  }
  return fromCwd;
}

/** System folders whose "files" are views of a process or a device, never a benchmark's data. */
const SYSTEM_DIRS = ["/proc", "/sys", "/dev"];

/**
 * The real path of a data file a dataset or an imported config names, when it lies under /proc,
 * /sys or /dev (followed through links): such a file is never read as data (it would put the
 * process's environment or a device into a prompt). Undefined otherwise, or when it does not exist.
 */
export function systemFile(path: string): string | undefined {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  return SYSTEM_DIRS.some((d) => isWithin(d, real)) ? real : undefined;
}
