import type { ArgDef } from "citty";
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { ConfigError, homeDir, UsageError } from "../../lib/index.ts";
import { STATE_DB } from "../../run/index.ts";
import {
  expandUserPath,
  type LoadedSleepConfig,
  loadSleepConfig,
  resolveMemoryPaths,
  resolveProject,
  resolveSkillPath,
  resolveStateDir,
  type SleepConfig,
  tightenStateDir,
} from "../../sleep/index.ts";
import { globalArgs, helpShows, jsonArg, repeatedFlag } from "../args.ts";
import { processEnv } from "../../config/index.ts";
import { sleepConfigLayer } from "./config-layer.ts";

/** The flags that say where each agent keeps its sessions. */
export const SESSION_STORE_FLAGS = [
  "claude-home",
  "codex-home",
  "cursor-home",
  "pi-home",
  "vscode-workspace-storage",
  "copilot-cli-session-store",
  "opencode-db",
] as const;

/** The flags whose values are file or folder paths: made absolute against the working directory. */
export const PATH_FLAGS: ReadonlySet<string> = new Set([
  "codex-path",
  "cursor-path",
  "pi-path",
  "opencode-path",
  ...SESSION_STORE_FLAGS,
  "state-dir",
]);

/** Flags every `sleep` subcommand accepts (spec §2.1). */
export const sleepArgs = {
  ...globalArgs,
  ...jsonArg,
  project: { type: "string", description: "Project under evolution (default: current directory)", valueHint: "PATH" },
  scope: { type: "string", description: "Which projects' sessions to read: invoked or all", valueHint: "invoked|all" },
  backend: {
    type: "string",
    description: "mock, handoff, claude, codex, copilot, cursor, pi, opencode, azure_openai, openai",
    valueHint: "NAME",
  },
  model: { type: "string", description: "Backend model", valueHint: "NAME" },
  "codex-path": { type: "string", description: "codex executable", valueHint: "PATH" },
  "cursor-path": { type: "string", description: "cursor-agent executable", valueHint: "PATH" },
  "pi-path": { type: "string", description: "pi executable", valueHint: "PATH" },
  "opencode-path": { type: "string", description: "opencode executable", valueHint: "PATH" },
  "opencode-tool-replay": { type: "boolean", description: "Allow OpenCode tool-aware replay" },
  "claude-home": { type: "string", description: "Claude Code home (also relocates the state dir)", valueHint: "PATH" },
  "codex-home": { type: "string", description: "Codex home", valueHint: "PATH" },
  "cursor-home": { type: "string", description: "Cursor home", valueHint: "PATH" },
  "pi-home": { type: "string", description: "Pi home", valueHint: "PATH" },
  source: {
    type: "string",
    description: "claude, codex, copilot, copilot_cli, cursor, devin, pi, opencode, auto or all",
    valueHint: "NAME",
  },
  "vscode-workspace-storage": { type: "string", description: "VS Code workspaceStorage root", valueHint: "PATH" },
  "copilot-cli-session-store": { type: "string", description: "Copilot CLI session-store.db", valueHint: "PATH" },
  "opencode-db": { type: "string", description: "OpenCode database", valueHint: "PATH" },
  "lookback-hours": { type: "string", description: "First-night window in hours (0 = full history)", valueHint: "N" },
  "edit-budget": { type: "string", description: "Max edits per reflect call (0 allowed)", valueHint: "N" },
  "max-sessions": { type: "string", description: "Harvested-session cap", valueHint: "N" },
  "harvest-threads": {
    type: "string",
    description: "Worker threads reading session files (default: by the work and the cores; 0 = none)",
    valueHint: "N",
  },
  "harvest-prefetch": {
    type: "string",
    description: "A thread reading session files ahead: on, off or auto (default: by the work, the cores and the load)",
    valueHint: "on|off|auto",
  },
  "max-tasks": { type: "string", description: "Mined-task cap", valueHint: "N" },
  "target-skill-path": {
    type: "string",
    description: "Skill to evolve (default: the managed skill)",
    valueHint: "PATH",
  },
  "memory-target": {
    type: "string",
    description: "Memory files below the project: auto (every one it uses) or a comma list such as CLAUDE.md,AGENTS.md",
    valueHint: "PATH",
  },
  "skill-root": { type: "string", description: "Extra skill root (repeatable)", valueHint: "PATH" },
  "state-dir": { type: "string", description: "State directory (default ~/.skillopt-sleep)", valueHint: "PATH" },
  "tasks-file": {
    type: "string",
    description: "Replay a reviewed tasks file instead of harvesting",
    valueHint: "PATH",
  },
  progress: { type: "boolean", description: "Show progress per phase on stderr" },
  "auto-adopt": { type: "boolean", description: "Adopt an accepted managed proposal automatically" },
  preferences: { type: "string", description: "Free-text prior for reflection", valueHint: "TEXT" },
} as const satisfies Record<string, ArgDef>;

type Flags = Record<string, unknown>;

const STRING_FLAGS: ReadonlyArray<readonly [string, string]> = [
  ["backend", "backend"],
  ["model", "model"],
  ["codex-path", "codex_path"],
  ["cursor-path", "cursor_path"],
  ["pi-path", "pi_path"],
  ["opencode-path", "opencode_path"],
  ["claude-home", "claude_home"],
  ["codex-home", "codex_home"],
  ["cursor-home", "cursor_home"],
  ["pi-home", "pi_home"],
  ["source", "transcript_source"],
  ["vscode-workspace-storage", "vscode_workspace_storage"],
  ["copilot-cli-session-store", "copilot_cli_session_store"],
  ["opencode-db", "opencode_db"],
  ["target-skill-path", "target_skill_path"],
  ["memory-target", "memory_target"],
  ["state-dir", "state_dir"],
  ["preferences", "preferences"],
];

const INT_FLAGS: ReadonlyArray<readonly [string, string]> = [
  ["lookback-hours", "lookback_hours"],
  ["edit-budget", "edit_budget"],
  ["max-sessions", "max_sessions_per_night"],
  ["max-tasks", "max_tasks_per_night"],
  ["harvest-threads", "harvest_threads"],
];

/** Sleep config key each flag sets (`--project` and `--scope` also set `projects`). */
export const SLEEP_FLAG_KEYS: Readonly<Record<string, string>> = Object.fromEntries([
  ...STRING_FLAGS,
  ...INT_FLAGS,
  ["project", "invoked_project"],
  ["scope", "projects"],
  ["opencode-tool-replay", "opencode_tool_replay"],
  ["progress", "progress"],
  ["auto-adopt", "auto_adopt"],
  ["skill-root", "skill_roots"],
  ["harvest-prefetch", "harvest_prefetch"],
]);

function intFlag(flags: Flags, name: string): number | undefined {
  const raw = flags[name];
  if (raw === undefined || raw === "") return undefined;
  const s = String(raw).trim();
  if (!/^\d+$/.test(s))
    throw new UsageError(`--${name} expects a non-negative integer, got ${JSON.stringify(raw)}`, {
      flag: name,
      value: raw,
      expected: "non-negative integer",
    });
  return Number(s);
}

const str = (flags: Flags, name: string) =>
  typeof flags[name] === "string" && flags[name] !== "" ? (flags[name] as string) : undefined;

/** A flag that takes one of a few words: its value, or a usage error naming them. */
function choiceFlag<T extends string>(flags: Flags, name: string, choices: readonly T[]): T | undefined {
  const v = str(flags, name);
  if (v === undefined || (choices as readonly string[]).includes(v)) return v as T | undefined;
  const words = `${choices.slice(0, -1).join(", ")} or ${choices[choices.length - 1]}`;
  throw new UsageError(`--${name} expects ${words}, got ${JSON.stringify(v)}`, {
    flag: name,
    value: v,
    choices: [...choices],
  });
}

/** Config overrides from the common flags (only flags actually given). */
function overridesFromFlags(flags: Flags, rawArgs: readonly string[], cwd = process.cwd()): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const project = str(flags, "project");
  if (project) {
    o.invoked_project = resolve(cwd, project);
    o.projects = "invoked";
  }
  const scope = choiceFlag(flags, "scope", ["invoked", "all"]);
  if (scope) o.projects = scope;
  for (const [flag, key] of STRING_FLAGS) {
    const v = str(flags, flag);
    if (v === undefined) continue;
    // Relative skill/memory targets are resolved below the project later; other paths below cwd.
    o[key] = PATH_FLAGS.has(flag) && !v.startsWith("~") ? resolve(cwd, v) : v;
  }
  for (const [flag, key] of INT_FLAGS) {
    const n = intFlag(flags, flag);
    if (n !== undefined) o[key] = n;
  }
  const prefetch = choiceFlag(flags, "harvest-prefetch", ["on", "off", "auto"]);
  if (prefetch) o.harvest_prefetch = prefetch === "auto" ? null : prefetch === "on";
  if (flags["opencode-tool-replay"] === true) o.opencode_tool_replay = true;
  if (flags.progress === true) o.progress = true;
  if (flags["auto-adopt"] === true) o.auto_adopt = true;
  const roots = repeatedFlag(rawArgs, "skill-root");
  if (roots.length) o.skill_roots = roots;
  return o;
}

/** The resolved setup of a sleep command. */
interface SleepSetup {
  loaded: LoadedSleepConfig;
  project: string;
  skillPath: string;
  memoryPath: string;
  /** Every memory file lessons are staged for, `memoryPath` first. */
  memoryPaths: string[];
  stateDir: string;
  statePath: string;
}

/** Load the config with the command's flags and resolve every path once. */
export function sleepSetup(
  flags: Flags,
  rawArgs: readonly string[],
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): SleepSetup {
  const overrides = overridesFromFlags(flags, rawArgs);
  // spec §9.3: SKILLOPT_SLEEP_WORKERS sizes the replay pool (env sits between the file and flags).
  const workers = env.SKILLOPT_SLEEP_WORKERS?.trim();
  if (workers && /^\d+$/.test(workers) && Number(workers) > 0) overrides.workers = Number(workers);
  const loaded = loadSleepConfig(sleepConfigLayer, overrides);
  const cfg = loaded.config;
  const project = resolveProject(cfg);
  const stateDir = resolveStateDir(cfg, env);
  for (const t of cfg.memory_target)
    if (t.split(/[\\/]/).includes(".."))
      throw new ConfigError(`memory_target must stay inside the project: ${t}`, { key: "memory_target" });
  const memoryPaths = resolveMemoryPaths(cfg, project);
  // Private on first use: a state directory made before (umask 022) is tightened to 0700/0600.
  tightenStateDir(stateDir);
  return {
    loaded,
    project,
    skillPath: resolveSkillPath(cfg, project),
    memoryPath: memoryPaths[0]!,
    memoryPaths,
    stateDir,
    statePath: join(stateDir, STATE_DB),
  };
}

/** Refuse a project directory that does not exist (one line, exit 2). */
export function requireProject(setup: SleepSetup): void {
  let ok = false;
  try {
    ok = statSync(setup.project).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok)
    throw new UsageError(`--project ${setup.project}: no such directory`, {
      flag: "project",
      value: setup.project,
      path: setup.project,
      expected: "existing directory",
    });
}

/** Where each harvest source lives, from the config (empty = the source's per-OS default). */
export function sourceLocations(cfg: SleepConfig) {
  return {
    claudeHome: cfg.claude_home || undefined,
    codexHome: cfg.codex_home || undefined,
    cursorHome: cfg.cursor_home || undefined,
    piHome: cfg.pi_home || undefined,
    vscodeWorkspaceStorage: cfg.vscode_workspace_storage || undefined,
    copilotCliSessionStore: cfg.copilot_cli_session_store || undefined,
    opencodeDb: cfg.opencode_db || undefined,
    devinTranscripts: cfg.devin_transcripts ? expandUserPath(cfg.devin_transcripts) : undefined,
    devinUserDir: cfg.devin_user_dir ? expandUserPath(cfg.devin_user_dir) : undefined,
    cursorUserDir: cfg.cursor_user_dir ? expandUserPath(cfg.cursor_user_dir) : undefined,
  };
}

/**
 * Where a harvest looked for sessions, in words for a night that found none: each source with the
 * folder it reads (the common ones), the project filter, and how to point it elsewhere.
 */
export function whereSessions(
  cfg: SleepConfig,
  sources: readonly string[],
  project: string,
  env: Readonly<Record<string, string | undefined>> = processEnv(),
): string {
  const home = homeDir();
  const tilde = (p: string) => (p.startsWith(`${home}/`) ? `~/${p.slice(home.length + 1)}` : p);
  const places: Record<string, () => string> = {
    claude: () => join(cfg.claude_home || join(home, ".claude"), "projects"),
    codex: () => join(cfg.codex_home || env.CODEX_HOME || join(home, ".codex"), "sessions"),
    pi: () => join(cfg.pi_home || join(home, ".pi"), "agent", "sessions"),
  };
  const each = sources.map((s) => (places[s] ? `${s} (${tilde(places[s]())})` : `${s} (its default location)`));
  const scope =
    cfg.projects === "all" ? "every project" : `sessions of ${tilde(project)} only (--scope all for every project)`;
  return `looked for ${each.join(", ")}, ${scope}; point it elsewhere with --source, --claude-home or --codex-home \
(\`skillopt docs sleep\` lists every source)`;
}

/** The arguments of a command that acts on one staged night (diff, reject): the night, its project and state. */
export const nightCommandArgs = helpShows(
  {
    ...sleepArgs,
    night: { type: "positional", description: "Night folder name or path (default: the latest)", required: false },
  },
  ["project", "state-dir", "claude-home", "night"],
);
