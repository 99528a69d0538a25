import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import * as v from "valibot";
import type {
  Position,
  readConfigFile,
  SLEEP_BACKENDS,
  SleepBackendName,
  SLEEP_NAMES,
  sleepBackend,
  unknownBackend,
  validationError,
} from "../config/index.ts";
import { assertSafeKeyPath, closest, ConfigError, homeDir, nullProtoRecord } from "../lib/index.ts";

const str = (def: string, doc: string) => v.optional(v.pipe(v.string("expected a string"), v.description(doc)), def);
const bool = (def: boolean, doc: string) =>
  v.optional(v.pipe(v.boolean("expected true or false"), v.description(doc)), def);
const nullableBool = (doc: string) =>
  v.optional(v.pipe(v.nullable(v.boolean("expected true, false or null")), v.description(doc)), null);
const int = (def: number, min: number, doc: string) =>
  v.optional(
    v.pipe(
      v.number(`expected an integer ≥ ${min}`),
      v.integer(`expected an integer ≥ ${min}`),
      v.minValue(min, `expected an integer ≥ ${min}`),
      v.description(doc),
    ),
    def,
  );
const frac = (def: number, doc: string) =>
  v.optional(
    v.pipe(
      v.number("expected a number in [0, 1]"),
      v.minValue(0, "expected a number in [0, 1]"),
      v.maxValue(1, "expected a number in [0, 1]"),
      v.description(doc),
    ),
    def,
  );
const nullableInt = (doc: string) =>
  v.optional(
    v.pipe(
      v.nullable(
        v.pipe(v.number("expected an integer or null"), v.integer("expected an integer or null"), v.minValue(0)),
      ),
      v.description(doc),
    ),
    null,
  );
const nullableNum = (doc: string) =>
  v.optional(
    v.pipe(v.nullable(v.pipe(v.number("expected a number or null"), v.minValue(0))), v.description(doc)),
    null,
  );

export type { SleepBackendName };

/**
 * What the Sleep config takes from the config layer at run time: the one backend-name table
 * (config/backend-names.ts; aliases of spec §5.9 folded) and the config-file reader. Sleep imports
 * config/ for its types only; the callers (cli/, ui/) pass the layer in.
 */
export interface SleepConfigLayer {
  readConfigFile: typeof readConfigFile;
  validationError: typeof validationError;
  SLEEP_BACKENDS: typeof SLEEP_BACKENDS;
  SLEEP_NAMES: typeof SLEEP_NAMES;
  sleepBackend: typeof sleepBackend;
  unknownBackend: typeof unknownBackend;
}

/** The `backend` keys: names accepted by `--backend` / `backend`, folded to the canonical name. */
function backendFields(layer: SleepConfigLayer) {
  const { sleepBackend, unknownBackend, SLEEP_NAMES } = layer;
  const names = Object.keys(layer.SLEEP_BACKENDS) as SleepBackendName[];
  const Backend = v.optional(
    v.pipe(
      v.string("expected a backend name"),
      v.check(
        (s) => sleepBackend(s) !== undefined,
        (issue) => `${unknownBackend(issue.input, SLEEP_NAMES)} (expected one of ${names.join(", ")} or an alias)`,
      ),
      v.transform((s) => sleepBackend(s)!),
      v.description(`model backend for mining, replay and reflection: ${names.join(", ")} (mock makes no model call)`),
    ),
    "mock",
  );
  const OptBackend = v.optional(
    v.pipe(
      v.string("expected a backend name"),
      v.check(
        (s) => s === "" || sleepBackend(s) !== undefined,
        (issue) => `${unknownBackend(issue.input, SLEEP_NAMES)} (expected "" or one of ${names.join(", ")})`,
      ),
      v.transform((s): SleepBackendName | "" => (s === "" ? "" : sleepBackend(s)!)),
      v.description('backend of one role when it differs from `backend` ("" = same)'),
    ),
    "",
  );
  return { Backend, OptBackend };
}

const SOURCES = [
  "claude",
  "codex",
  "copilot",
  "copilot_cli",
  "cursor",
  "devin",
  "pi",
  "opencode",
  "auto",
  "all",
] as const;

/** The keys before the backend group (spec §9.1 plus our additive keys). */
const HEAD = {
  claude_home: str("", "Claude Code home (default ~/.claude); also relocates the state dir"),
  codex_home: str("", "Codex home (default $CODEX_HOME or ~/.codex)"),
  pi_home: str("", "Pi home, parent of agent/sessions (default ~/.pi)"),
  cursor_home: str("", "Cursor home (default ~/.cursor)"),
  vscode_workspace_storage: str("", 'VS Code workspaceStorage root ("" = per-OS default)'),
  copilot_cli_session_store: str("", 'Copilot CLI session-store.db ("" = ~/.copilot/session-store.db)'),
  opencode_db: str("", 'OpenCode database ("" = env / XDG default; :memory: = none)'),
  devin_transcripts: str(
    "",
    'Devin CLI transcript folder of ATIF *.json ("" = per-OS default, ~/.local/share/devin/cli/transcripts on Linux)',
  ),
  devin_user_dir: str(
    "",
    'Devin editor user-data folder holding User/workspaceStorage ("" = per-OS default, ~/.config/Devin on Linux)',
  ),
  cursor_user_dir: str(
    "",
    'Cursor editor user-data folder holding User/globalStorage/state.vscdb ("" = per-OS default, ~/.config/Cursor on Linux)',
  ),
  transcript_source: v.optional(
    v.pipe(
      v.union(
        [v.picklist(SOURCES), v.array(v.picklist(SOURCES.slice(0, 7)))],
        `expected one of ${SOURCES.join(", ")} or a list`,
      ),
      v.description("which agents' sessions to read: one source, auto (those present), all, or a list"),
    ),
    "claude",
  ),
  projects: v.optional(
    v.pipe(
      v.union([v.picklist(["invoked", "all"]), v.array(v.string())], 'expected "invoked", "all" or a list of paths'),
      v.description("whose sessions count: the invoked project, all projects, or a list of paths"),
    ),
    "invoked",
  ),
  invoked_project: str("", 'project under evolution ("" = cwd)'),
  lookback_hours: int(72, 0, "first-night window in hours; 0 = full history"),
  max_tasks_per_night: int(40, 0, "mined-task cap"),
  max_sessions_per_night: nullableInt("harvested-session cap (null = 3 × max_tasks_per_night)"),
  harvest_threads: nullableInt(
    "worker threads reading session files beside the main one (null = auto: past 512 MB to read, by the cores; 0 = none, and no prefetch thread under auto)",
  ),
  harvest_prefetch: nullableBool(
    "a thread reading session files ahead when no worker does (null = auto: past 16 MB, a core to spare or files not cached)",
  ),
  max_tokens_per_night: nullableInt("token ceiling per night, enforced from the ledger (null = none)"),
  max_calls_per_night: nullableInt("model-call ceiling per night (null = none)"),
  max_seconds_per_night: nullableInt("wall-clock ceiling per night in seconds (null = none)"),
  max_cost_usd_per_night: nullableNum("money ceiling per night in USD (null = none)"),
  holdout_fraction: frac(0.34, "legacy alias of val_fraction"),
  val_fraction: frac(0.34, "share of real tasks in the gate slice. DL: validation split"),
  test_fraction: frac(0, "share of real tasks in the write-only test slice"),
  min_val_tasks: int(2, 1, "fewer held-out tasks than this ⇒ reject_unverified"),
};

/** The keys after the backend group. */
const TAIL = {
  azure_endpoint: str("", "endpoint for Azure / OpenAI-compatible backends"),
  api_key_env: str("", "environment variable holding the API key of an OpenAI-compatible backend"),
  gate_mode: v.optional(
    v.pipe(
      v.picklist(["on", "off", "none", "false", "greedy"], "expected on, off, none, false or greedy"),
      v.description("on: stage only edits the gate accepts; off/none/false/greedy: stage every edit"),
    ),
    "on",
  ),
  gate_metric: v.optional(
    v.pipe(
      v.picklist(["hard", "soft", "mixed"], "expected hard, soft or mixed"),
      v.description("gate score: hard (pass/fail), soft (partial credit) or mixed"),
    ),
    "mixed",
  ),
  gate_mixed_weight: frac(0.5, "soft weight in the mixed gate score"),
  gate_no_regression: bool(false, "per-task no-regression veto"),
  gate_margin: v.optional(
    v.pipe(
      v.number("expected a number ≥ 0"),
      v.minValue(0, "expected a number ≥ 0"),
      v.description("a candidate must beat the incumbent by more than this (noise guard)"),
    ),
    0,
  ),
  gate_granularity: v.optional(
    v.pipe(
      v.picklist(["edit", "batch"], "expected edit or batch"),
      v.description("gate each edit on its own, or the night's edits together"),
    ),
    "edit",
  ),
  gate_rule: v.optional(
    v.pipe(
      v.picklist(["strict", "paired", "posterior", "auto"], "expected strict, paired, posterior or auto"),
      v.description(
        "strict: candidate mean above the incumbent's; paired: sequential test on per-task differences; posterior: posterior probability " +
          "of a gain; auto: paired or posterior by the number of held-out tasks (docs/gate.md)",
      ),
    ),
    "strict",
  ),
  gate_confidence: v.optional(
    v.pipe(
      v.number("expected a number in [0.5, 0.999]"),
      v.minValue(0.5, "expected a number in [0.5, 0.999]"),
      v.maxValue(0.999, "expected a number in [0.5, 0.999]"),
      v.description("paired gate: confidence of each decision"),
    ),
    0.95,
  ),
  codex_path: str("", "codex executable"),
  pi_path: str("", "pi executable"),
  cursor_path: str("", "cursor-agent executable"),
  opencode_path: str("", "opencode executable"),
  opencode_tool_replay: bool(false, "allow OpenCode tool-aware replay"),
  edit_budget: int(4, 0, "max edits per reflect call. DL: learning rate"),
  preferences: str("", "free-text prior for reflection"),
  replay_mode: str("mock", "report label only"),
  replay_uncheckable: bool(false, "replay tasks with no checkable reference (judged against their own intent)"),
  dream_rollouts: int(1, 1, ">1 enables multi-rollout contrastive reflection"),
  dream_factor: int(0, 0, "synthetic variants per real train task. DL: data augmentation"),
  recall_k: int(0, 0, "archived tasks recalled per night. DL: replay buffer (rehearsal)"),
  evolve_memory: bool(true, "consolidate the memory file"),
  evolve_skill: bool(true, "consolidate the skill"),
  llm_mine: bool(true, "mine checkable tasks with the backend (non-mock)"),
  target_skill_path: str("", "explicit skill target (relative ⇒ below project)"),
  memory_target: v.optional(
    v.pipe(
      v.union(
        [v.string(), v.array(v.string())],
        "expected auto, a memory file path, a comma-separated list or a list of paths",
      ),
      v.transform((x) => (Array.isArray(x) ? x : x.split(",")).map((p) => p.trim()).filter(Boolean)),
      v.check((l) => l.length > 0, "expected auto or at least one memory file path"),
      v.check((l) => !l.includes("auto") || l.length === 1, "auto cannot be combined with paths"),
      v.description(
        "memory files below the project, one staged file each: auto (every one the project uses), or paths such as CLAUDE.md, AGENTS.md, " +
          ".github/copilot-instructions.md, .cursor/rules/<name>.mdc",
      ),
    ),
    "auto",
  ),
  learn_lessons: bool(true, "propose recurring corrections/preferences as memory lessons (works with no model)"),
  lesson_retire_nights: int(30, 0, "propose retiring an adopted lesson unused for this many nights (0 = never)"),
  skill_roots: v.optional(
    v.pipe(v.array(v.string()), v.description("extra skill directories considered for multi-skill fan-out")),
    () => [],
  ),
  target_task_filter: bool(true, "prefer tasks matching the target skill"),
  progress: bool(false, "progress on stderr"),
  evidence_log: bool(true, "write evidence.jsonl"),
  evidence_max_chars: int(4000, 200, "per-field cap of evidence strings"),
  multi_skill_fanout: nullableBool("route edits to the installed skill each task used (null = multi_skill_report)"),
  multi_skill_report: bool(false, "legacy alias of multi_skill_fanout"),
  auto_adopt: bool(false, "adopt an accepted managed proposal automatically"),
  managed_skill_name: str("skillopt-sleep-learned", "managed skill dir name"),
  redact_secrets: bool(true, "redact evidence-log strings (staging/harvest redaction is always on)"),
  seed: v.optional(
    v.pipe(
      v.number("expected an integer"),
      v.integer("expected an integer"),
      v.description("seed of every sampled choice of a night"),
    ),
    42,
  ),
  state_dir: str("", "explicit state directory"),
  workers: int(4, 1, "concurrent replays"),
  batch: bool(
    false,
    "replay each phase's tasks through the provider's Batch API at half the price (openai_compatible and Azure only; " +
      "docs/batch.md); a night then waits on each batch",
  ),
  batch_poll_seconds: v.optional(
    v.pipe(
      v.number("expected a number of seconds"),
      v.minValue(0.001, "expected a positive number of seconds"),
      v.description("first wait between polls of a pending batch"),
    ),
    15,
  ),
};

/** `~/.skillopt-sleep/config.{json,yaml,yml}` (spec §9.1) plus our additive keys, with the layer's backend names. */
export function sleepConfigSchema(layer: SleepConfigLayer) {
  const { Backend, OptBackend } = backendFields(layer);
  return v.strictObject({
    ...HEAD,
    backend: Backend,
    model: str("", "backend model / deployment"),
    optimizer_backend: OptBackend,
    optimizer_model: str("", "optimizer model (dual-role routing)"),
    target_backend: OptBackend,
    target_model: str("", "target model (dual-role routing)"),
    ...TAIL,
  });
}

export type SleepConfig = v.InferOutput<ReturnType<typeof sleepConfigSchema>>;

/** Where the user config file was found. */
export interface LoadedSleepConfig {
  config: SleepConfig;
  /** File the values came from ("" when none). */
  file: string;
  /** Keys set by the file or by an override (for the val/holdout alias). */
  userKeys: Set<string>;
}

/** The user config file path that exists (json, then yaml, then yml), or "". */
function findSleepConfigFile(home = homeDir()): string {
  for (const name of ["config.json", "config.yaml", "config.yml"]) {
    const p = join(home, ".skillopt-sleep", name);
    if (existsSync(p)) return p;
  }
  return "";
}

/** Read the user config file (if any), apply overrides, validate once; errors name file:line:col like the engine's config. */
export function loadSleepConfig(
  layer: SleepConfigLayer,
  overrides: Record<string, unknown> = {},
  opts: { file?: string; home?: string } = {},
): LoadedSleepConfig {
  const SleepConfigSchema = sleepConfigSchema(layer);
  const file = opts.file ?? findSleepConfigFile(opts.home);
  const source = file ? layer.readConfigFile(file, "a mapping of Sleep settings") : undefined;
  const fromFile = source?.data ?? {};
  const at = (key: string) => source?.positions.get(key);
  for (const key of Object.keys(fromFile)) {
    if (Object.hasOwn(SleepConfigSchema.entries, key)) continue;
    const guess = closest(key, Object.keys(SleepConfigSchema.entries));
    const pos = at(key);
    throw new ConfigError(
      `${file}${pos ? `:${pos.line}:${pos.col}` : ""}: ${key}: unknown key${guess ? ` (did you mean "${guess}"?)` : ""}`,
      {
        file,
        line: pos?.line,
        col: pos?.col,
        key,
        issues: [{ path: key, message: "unknown key" }],
      },
    );
  }
  const merged: Record<string, unknown> = Object.assign(nullProtoRecord(), fromFile);
  for (const [k, val] of Object.entries(overrides)) {
    assertSafeKeyPath([k], "override");
    if (val !== undefined) merged[k] = val;
  }
  const parsed = v.safeParse(SleepConfigSchema, merged);
  if (!parsed.success) {
    const fromFlag = (path: string) => overrides[path.split(".")[0]!] !== undefined;
    const first = v.getDotPath(parsed.issues[0]) ?? "";
    const fallback = file && !fromFlag(first) ? `${file} (or a flag)` : "flags";
    throw layer.validationError(
      parsed.issues,
      (path) =>
        file && !fromFlag(path) && Object.hasOwn(fromFile, path.split(".")[0]!)
          ? { file, pos: nearest(source!.positions, path) }
          : undefined,
      fallback,
    );
  }
  return {
    config: Object.freeze(parsed.output) as SleepConfig,
    file,
    userKeys: new Set([...Object.keys(fromFile), ...Object.keys(overrides).filter((k) => overrides[k] !== undefined)]),
  };
}

/** The position of a key, or of its nearest parent that has one. */
function nearest(positions: ReadonlyMap<string, Position>, path: string): Position | undefined {
  for (let p = path; p; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
    const pos = positions.get(p);
    if (pos) return pos;
  }
  return undefined;
}

/** State directory (spec §1.3): state_dir > $SKILLOPT_SLEEP_STATE_DIR > sibling of a non-default claude_home > ~/.skillopt-sleep. */
export function resolveStateDir(
  cfg: SleepConfig,
  env: Readonly<Record<string, string | undefined>> = {},
  home = homeDir(),
): string {
  if (cfg.state_dir) return resolve(expandHome(cfg.state_dir, home));
  if (env.SKILLOPT_SLEEP_STATE_DIR) return resolve(env.SKILLOPT_SLEEP_STATE_DIR);
  const claudeHome = resolveClaudeHome(cfg, home);
  if (claudeHome !== resolve(home, ".claude")) return join(dirname(claudeHome), ".skillopt-sleep");
  return join(home, ".skillopt-sleep");
}

/** Claude home (absolute). */
export function resolveClaudeHome(cfg: SleepConfig, home = homeDir()): string {
  return cfg.claude_home ? resolve(expandHome(cfg.claude_home, home)) : join(home, ".claude");
}

/** Project under evolution (absolute). */
export function resolveProject(cfg: SleepConfig, cwd = process.cwd()): string {
  return resolve(cwd, cfg.invoked_project || ".");
}

/** The managed (or explicit target) skill path, absolute. */
export function resolveSkillPath(cfg: SleepConfig, project: string, home = homeDir()): string {
  if (cfg.target_skill_path) {
    const p = expandHome(cfg.target_skill_path, home);
    return isAbsolute(p) ? resolve(p) : resolve(project, p);
  }
  return join(resolveClaudeHome(cfg, home), "skills", cfg.managed_skill_name, "SKILL.md");
}

/** Memory files agents read, in the order `auto` lists them. */
const MEMORY_CANDIDATES = [
  "CLAUDE.md",
  "AGENTS.md",
  ".github/copilot-instructions.md",
  ".cursor/rules/skillopt-sleep.mdc",
] as const;

/**
 * The memory files lessons are staged for, the night's primary one first. `auto` (the default)
 * follows what the project already uses: every existing one of CLAUDE.md, AGENTS.md and
 * .github/copilot-instructions.md, plus `.cursor/rules/skillopt-sleep.mdc` when a
 * `.cursor/rules/` folder exists; CLAUDE.md when none exists. Otherwise the configured paths
 * (relative ones below the project), duplicates removed.
 */
export function resolveMemoryPaths(cfg: SleepConfig, project: string, home = homeDir()): string[] {
  const targets = cfg.memory_target.length ? cfg.memory_target : ["auto"];
  if (targets[0] === "auto") {
    const used = MEMORY_CANDIDATES.slice(0, 3)
      .map((c) => join(project, c))
      .filter((p) => existsSync(p));
    if (existsSync(join(project, ".cursor", "rules"))) used.push(join(project, MEMORY_CANDIDATES[3]));
    return used.length ? used : [join(project, "CLAUDE.md")];
  }
  const out: string[] = [];
  for (const t of targets) {
    const p = expandHome(t, home);
    const abs = isAbsolute(p) ? resolve(p) : resolve(project, p);
    if (!out.includes(abs)) out.push(abs);
  }
  return out;
}

/** Effective val/test fractions (spec §4.7 `_resolve_split_fractions`). */
export function splitFractions(loaded: LoadedSleepConfig): { val: number; test: number } {
  const { config, userKeys } = loaded;
  const val = userKeys.has("val_fraction")
    ? config.val_fraction
    : userKeys.has("holdout_fraction")
      ? config.holdout_fraction
      : 0.34;
  const test = config.test_fraction;
  if (val + test >= 1)
    throw new ConfigError(`val_fraction + test_fraction must be < 1 (got ${val} + ${test})`, { key: "val_fraction" });
  return { val, test };
}

/** Session cap for a night. */
export function sessionLimit(cfg: SleepConfig): number {
  return cfg.max_sessions_per_night ?? 3 * cfg.max_tasks_per_night;
}

/** A configured path with a leading `~` expanded to the home directory, absolute. */
export function expandUserPath(p: string, home = homeDir()): string {
  return resolve(expandHome(p, home));
}

function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return join(home, p.slice(2));
  return p;
}
