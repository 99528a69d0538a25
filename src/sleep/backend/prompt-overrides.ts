import { existsSync, readFileSync, statSync } from "node:fs";
import { log } from "../../lib/index.ts";

/** Template names that may be overridden (spec §4.10). */
const PROMPT_NAMES = ["miner", "attempt", "judge", "reflect"] as const;
type PromptName = (typeof PROMPT_NAMES)[number];

let path = "";
let cache: { mtimeMs: number; templates: Partial<Record<PromptName, string>> } | undefined;

/** Where the override file lives ($SKILLOPT_SLEEP_PROMPTS_PATH or ~/.skillopt-sleep/prompts.json); "" = none. */
export function configurePromptOverrides(file: string): void {
  path = file;
  cache = undefined;
}

/** The override template of a prompt, re-read whenever the file's mtime changes; unknown names and blank values are ignored. */
export function promptOverride(name: PromptName): string | undefined {
  if (!path || !existsSync(path)) return undefined;
  const mtimeMs = statSync(path).mtimeMs;
  if (!cache || cache.mtimeMs !== mtimeMs) {
    const templates: Partial<Record<PromptName, string>> = {};
    try {
      const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
      for (const n of PROMPT_NAMES)
        if (typeof data[n] === "string" && (data[n] as string).trim()) templates[n] = data[n] as string;
    } catch (err) {
      log.warn(`sleep: ignoring prompt overrides in ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
    cache = { mtimeMs, templates };
  }
  return cache.templates[name];
}

/** Plain `__NAME__` replacement (templates contain JSON, so no format braces). */
export function fillTemplate(template: string, vars: Record<string, string>): string {
  let out = template;
  for (const [k, val] of Object.entries(vars)) out = out.split(`__${k}__`).join(val);
  return out;
}
