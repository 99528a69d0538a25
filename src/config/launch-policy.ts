import { isAbsolute, resolve } from "node:path";
import * as v from "valibot";
import { resolveInside } from "../lib/index.ts";
import { loadConfig } from "./load.ts";
import { TrainConfigSchema } from "./schema.ts";
import type { ConfigSource } from "./sources.ts";

/** The flag that lifts every refusal below; named in each refusal. */
export const ALLOW_FLAG = "--allow-commands";

/** What a launch from the dashboard (or an MCP client) may do. */
export interface LaunchPolicy {
  /** `skillopt ui --allow-commands`: launches may run programs, name any file, and set endpoints. */
  allowCommands: boolean;
  /** The command whose ALLOW_FLAG lifts the refusals, for their message (default `skillopt ui`). */
  command?: string;
}

const AGENT_NAMES = new Set(["", "claude", "codex", "cursor-agent", "copilot"]);

/** Keys whose value is a program to run (or the tasks evaluator that runs one). */
function runsProgram(path: string, value: unknown): boolean {
  if (path === "env.evaluator") return String(value).trim().toLowerCase() === "command";
  if (path === "env.evaluator_command")
    return Array.isArray(value) ? value.length > 0 : String(value ?? "").trim() !== "";
  if (path === "env.python" || path === "env.alfworld_python") return String(value ?? "").trim() !== "";
  if (/^model\.\w+_exec_path$/.test(path)) return !AGENT_NAMES.has(String(value ?? "").trim());
  return false;
}

/** Keys that loosen an agent harness's sandbox. */
const SANDBOX_KEYS = new Set([
  "model.codex_exec_sandbox",
  "model.codex_exec_approval_policy",
  "model.cursor_exec_sandbox",
  "model.copilot_exec_allow_all_tools",
]);
/** Keys naming where files are written. */
const OUTPUT_PATH_KEYS = new Set([
  "env.split_output_dir",
  "env.out_root",
  "model.cache_dir",
  "model.copilot_exec_home",
]);
/** Keys naming files or directories that are read (allowed inside the dashboard's directory). */
const INPUT_PATH_KEYS = new Set([
  "env.skill_init",
  "env.data_path",
  "env.split_dir",
  "env.data_dirs",
  "env.docs_dirs",
  "env.data_root",
]);
/** Keys that say where requests (and the credentials for them) go. */
const ENDPOINT_KEY = /(_url|endpoint|api_key|auth_env|api_version)$/;

/** Every leaf of a resolved config by dotted path. */
function leaves(obj: unknown, prefix = "", out = new Map<string, unknown>()): Map<string, unknown> {
  if (typeof obj === "object" && obj !== null && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  } else out.set(prefix, obj);
  return out;
}

function pathsOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).filter((s) => s.trim() !== "");
  const s = String(value ?? "").trim();
  return s === "" ? [] : [s];
}

const needsFlag = (what: string, policy: LaunchPolicy) =>
  policy.command && policy.command !== "skillopt ui"
    ? `${what}; an MCP client may do this only when \`${policy.command} ${ALLOW_FLAG}\` started the server`
    : `${what}; a dashboard launch may do this only when \`skillopt ui ${ALLOW_FLAG}\` started the dashboard`;

/** The config an empty config file resolves to: what no project file had to say. */
let schemaDefaults: Map<string, unknown> | undefined;
function defaultsOfSchema(): Map<string, unknown> {
  schemaDefaults ??= leaves(v.parse(TrainConfigSchema, {}));
  return schemaDefaults;
}

/**
 * What the launch may not do under this policy, by key path (the config picker is "config").
 * `resolved` is the config the run would get; `base` the same config without the launch's
 * overrides, so a key counts as set by the launch exactly when its resolved value differs.
 * Programs are refused wherever they come from (a cloned project's YAML is no more trusted than
 * the form). Endpoints, sandboxes and file paths are refused when the launch sets them, and when a
 * config file (not a bundled config) sets them to anything but the built-in default: a project's
 * `configs/*.yaml` may come from a cloned repository.
 */
export function launchRefusals(o: {
  source: ConfigSource;
  resolved: unknown;
  base: unknown;
  cwd: string;
  policy: LaunchPolicy;
}): Refusal[] {
  if (o.policy.allowCommands) return [];
  const out: Refusal[] = [];
  if (
    o.source.kind === "file" &&
    !resolveInside(o.cwd, isAbsolute(o.source.path) ? relativeTo(o.cwd, o.source.path) : o.source.path)
  ) {
    out.push({
      path: "config",
      fromLaunch: true,
      message: needsFlag(`${o.source.path} is outside ${o.cwd}`, o.policy),
    });
  }
  const now = leaves(o.resolved);
  const before = leaves(o.base);
  const builtIn = o.source.kind === "file" ? defaultsOfSchema() : before;
  for (const [path, value] of now) {
    const fromLaunch = JSON.stringify(value) !== JSON.stringify(before.get(path));
    const fromProject = !fromLaunch && JSON.stringify(value) !== JSON.stringify(builtIn.get(path));
    const by = fromLaunch ? "" : ` (set by the config ${o.source.display})`;
    const refuse = (why: string) =>
      out.push({ path, fromLaunch, message: needsFlag(`${path}: ${why}${by}`, o.policy) });
    if (runsProgram(path, value)) refuse("runs a program");
    else if (!fromLaunch && !fromProject) continue;
    else if (SANDBOX_KEYS.has(path)) refuse("changes an agent's sandbox");
    else if (OUTPUT_PATH_KEYS.has(path)) refuse("names where files are written");
    else if (ENDPOINT_KEY.test(path)) refuse("says where requests and credentials go");
    else if (INPUT_PATH_KEYS.has(path)) {
      const outside = pathsOf(value).find((p) => !resolveInside(o.cwd, isAbsolute(p) ? relativeTo(o.cwd, p) : p));
      if (outside !== undefined) refuse(`${outside} is outside ${o.cwd}`);
    }
  }
  return out;
}

/**
 * The refusals of a launch given as a config and `--set` overrides (an MCP tool call): the config
 * is loaded as the CLI would (a ConfigError is thrown as it is), then held to launchRefusals.
 * Returns one line per refusal.
 */
export function configRefusals(o: {
  config: string;
  set: readonly string[];
  cwd: string;
  policy: LaunchPolicy;
}): string[] {
  if (o.policy.allowCommands) return [];
  const loaded = loadConfig({ config: o.config, set: [...o.set], cwd: o.cwd });
  const base = o.set.length > 0 ? loadConfig({ config: o.config, set: [], cwd: o.cwd }).config : loaded.config;
  return launchRefusals({ source: loaded.source, resolved: loaded.config, base, cwd: o.cwd, policy: o.policy }).map(
    (r) => r.message,
  );
}

/**
 * A file path an MCP client passes (a skill to score, an output folder) inside `cwd`, or the
 * refusal that names it.
 */
export function pathRefusal(name: string, value: string, cwd: string, policy: LaunchPolicy): string | undefined {
  if (policy.allowCommands) return undefined;
  if (resolveInside(cwd, isAbsolute(value) ? relativeTo(cwd, value) : value) !== null) return undefined;
  return needsFlag(`${name}: ${value} is outside ${cwd}`, policy);
}

/** One refused key: `fromLaunch` when the launch's own overrides set it (else the config file did). */
interface Refusal {
  path: string;
  fromLaunch: boolean;
  message: string;
}

/** `abs` relative to `dir` when inside it; otherwise a marker resolveInside refuses. */
function relativeTo(dir: string, abs: string): string {
  const root = resolve(dir);
  const p = resolve(abs);
  return p === root ? "." : p.startsWith(`${root}/`) ? p.slice(root.length + 1) : "/outside";
}
