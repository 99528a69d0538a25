import { type LoadedConfig, loadConfig } from "../config/index.ts";
import { log, UsageError } from "../lib/index.ts";
import { multiValueFlag, repeatedFlag } from "./args.ts";

/** Load the config named by a command's --config/--set/--cfg-options/--env-file flags. */
export function loadConfigFromArgs(
  args: { config?: string; "env-file"?: string },
  rawArgs: readonly string[],
  extra: { legacy?: Record<string, string | boolean>; required?: boolean; fallback?: string } = {},
): LoadedConfig {
  const name = args.config ?? extra.fallback;
  if (!name) throw new UsageError("missing --config (a bundled name such as quickstart, or a YAML file)", {
    hint: "run `skillopt configs` to list the bundled configs",
  });
  const loaded = loadConfig({
    config: name,
    set: repeatedFlag(rawArgs, "set"),
    cfgOptions: multiValueFlag(rawArgs, "cfg-options"),
    envFile: args["env-file"],
    legacy: extra.legacy,
  });
  for (const w of loaded.warnings) log.warn(w);
  return loaded;
}
