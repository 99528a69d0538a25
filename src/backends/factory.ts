import { type BackendDef, BACKENDS, runsTasks } from "../config/index.ts";
import type { Role, TaskRunner } from "../engine/index.ts";
import { ConfigError, hashJson, log, UnsupportedError, warnKeyOverPlainHttp } from "../lib/index.ts";
import type { HarnessName } from "./exec/harness.ts";
import type { PriceTable } from "./pricing.ts";
import type { BackendName } from "./roles.ts";
import { numberOf, type Settings } from "./settings.ts";
import type { ChatBackend } from "./types.ts";

/** Per-call timeout for CLI-based chat and exec harnesses: env.exec_timeout seconds (default 120). */
export function execTimeoutMs(settings: Settings): number {
  const t = settings.section("env").exec_timeout;
  return typeof t === "number" && t > 0 ? t * 1000 : 120_000;
}

/**
 * The model a role sends on an agent-CLI backend: the model the user chose, else the backend's own
 * default (its definition's defaultModel; spec §4.1 sentinel defaults, the Claude one moved to a
 * current model). codex_exec serves OpenAI model names, so it keeps a shipped placeholder (as upstream).
 */
export function cliRoleModel(name: BackendName, role: Role, settings: Settings): string | undefined {
  const chosen = settings.chosenModel(role);
  if (chosen !== undefined) return chosen;
  if (name === "codex_exec") return settings.placeholderModel(role) ?? "gpt-4o";
  // Its definition's default (src/config/backends/): null passes no --model, so the CLI uses its own.
  const fallback = (BACKENDS[name] as BackendDef).defaultModel;
  if (fallback !== undefined) return fallback ?? undefined;
  return settings.model(role);
}

/** Executable for a CLI: config key, then env vars, then the default name (resolved on the child's PATH). */
function bin(settings: Settings, keys: string[], envs: string[], fallback: string): string {
  return settings.first(keys, envs)?.value ?? fallback;
}

function positiveSeconds(settings: Settings, keys: string[], envs: string[]): number | undefined {
  const found = settings.first(keys, envs);
  if (!found) return undefined;
  const n = numberOf(found.value);
  if (n === undefined || Number.isNaN(n) || n <= 0)
    throw new ConfigError(`${found.from}: expected a positive number of seconds, got ${JSON.stringify(found.value)}`, {
      key: found.from,
    });
  return n;
}

/**
 * Agent CLIs get their provider key and base URL from the environment (allow-listed into the
 * child): warn when that key would travel over plain http to a host other than loopback.
 */
function warnCliKeyOverHttp(name: BackendName, settings: Settings): void {
  const pairs: [string, string][] =
    name === "codex_exec"
      ? [["OPENAI_API_KEY", "OPENAI_BASE_URL"]]
      : name === "claude_chat" || name === "claude_code_exec"
        ? [["ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"]]
        : [];
  for (const [key, url] of pairs) {
    const base = settings.envVar(url);
    if (settings.envVar(key) && base)
      warnKeyOverPlainHttp(base, `${key} (given to the ${name} CLI, which sends it to ${url})`);
  }
}

/**
 * Each backend family is imported when a role uses it, so a run loads only its own: the HTTP
 * presets bring the openai SDK (about 240 modules), which a run on the simulator or an agent CLI
 * never needs, and which is most of the start-up before the first request.
 */
const presets = () => import("./presets.ts");

/** Builds the chat backend of a role on one backend, or undefined for an exec-only harness. */
type ChatBuild = (role: Role, settings: Settings, config: unknown) => Promise<ChatBackend | undefined>;

/** An agent CLI answering as a chat model: its executable's config key, env var and default name. */
function agentChat(kind: "cursor_chat" | "pi_chat" | "opencode_chat", exe: [string, string, string]): ChatBuild {
  return async (role, settings) =>
    (await import("./cli/agent-chat.ts")).createAgentChat({
      kind,
      bin: bin(settings, [exe[0]], [exe[1]], exe[2]),
      model:
        settings.first([`${kind}_${role}_model`], [`${kind.toUpperCase()}_${role.toUpperCase()}_MODEL`])?.value ??
        settings.model(role),
      timeoutMs: execTimeoutMs(settings),
      env: settings.env,
    });
}

const execOnly: ChatBuild = async () => undefined;

/** The backends whose definition gives an OpenAI-compatible endpoint: built from it, with no entry below. */
type EndpointDefined = {
  [K in BackendName]: (typeof BACKENDS)[K] extends { openai: unknown } ? K : never;
}[BackendName];

/**
 * The chat build function of every other backend defined in `src/config/backends/` (BACKENDS),
 * under the same name; a test checks that the sets are complete.
 */
export const CHAT_BUILDERS: Readonly<Record<Exclude<BackendName, EndpointDefined>, ChatBuild>> = {
  openai_chat: async (role, settings) => (await presets()).azureBackend(settings, role),
  openai_compatible: async (role, settings) => (await presets()).openaiCompatibleBackend(settings, role),
  qwen_chat: async (role, settings) => (await presets()).qwenBackend(settings, role),
  minimax_chat: async (_role, settings) => (await presets()).minimaxBackend(settings),
  claude_chat: async (role, settings) =>
    (await import("./cli/claude-chat.ts")).createClaudeChat({
      bin: bin(settings, [], ["CLAUDE_CLI_BIN"], settings.model("claude_code_exec_path") ?? "claude"),
      defaultModel: cliRoleModel("claude_chat", role, settings)!,
      // spec §7.5: 300 s; CLAUDE_CHAT_TIMEOUT (seconds) is ours, mirroring COPILOT_CHAT_TIMEOUT.
      timeoutMs: (positiveSeconds(settings, [], ["CLAUDE_CHAT_TIMEOUT"]) ?? 300) * 1000,
      env: settings.env,
      permissionMode: settings.envVar("CLAUDE_PERMISSION_MODE") ?? "dontAsk",
      settingSources: settings.envVar("CLAUDE_SETTING_SOURCES") ?? "user,project",
    }),
  copilot_chat: async (role, settings) => {
    const timeout = settings.first(["copilot_chat_timeout"], ["COPILOT_CHAT_TIMEOUT"]);
    const seconds = timeout ? numberOf(timeout.value) : 600;
    if (seconds === undefined || Number.isNaN(seconds) || seconds <= 0 || !Number.isInteger(seconds)) {
      throw new ConfigError(
        `${timeout?.from ?? "model.copilot_chat_timeout"}: expected a positive integer number of seconds`,
        { key: timeout?.from ?? "model.copilot_chat_timeout" },
      );
    }
    return (await import("./cli/copilot-chat.ts")).createCopilotChat({
      bin: bin(settings, ["copilot_exec_path"], ["COPILOT_EXEC_PATH"], "copilot"),
      model: settings.first([`copilot_chat_${role}_model`], [`COPILOT_CHAT_${role.toUpperCase()}_MODEL`])?.value,
      timeoutMs: seconds * 1000,
      env: settings.env,
      home: settings.first(["copilot_exec_home"], ["COPILOT_EXEC_HOME"])?.value,
    });
  },
  codex_exec: async (role, settings) => {
    warnFullAuto(settings);
    return (await import("./cli/codex-chat.ts")).createCodexChat({
      bin: bin(settings, ["codex_exec_path"], ["CODEX_EXEC_PATH", "CODEX_CLI_BIN", "CODEX_PATH"], "codex"),
      defaultModel: cliRoleModel("codex_exec", role, settings)!,
      timeoutMs: execTimeoutMs(settings),
      env: settings.env,
      profile: settings.first(["codex_exec_profile"], ["CODEX_EXEC_PROFILE", "CODEX_PROFILE"])?.value,
      reasoningEffort: settings.first(["codex_exec_reasoning_effort"], ["CODEX_EXEC_REASONING_EFFORT"])?.value,
      networkAccess: codexFlag(settings, "codex_exec_network_access", "CODEX_EXEC_NETWORK_ACCESS") === "true",
      webSearch: codexFlag(settings, "codex_exec_web_search", "CODEX_EXEC_WEB_SEARCH") === "true",
    });
  },
  claude_code_exec: execOnly,
  cursor_exec: execOnly,
  copilot_exec: execOnly,
  cursor_chat: agentChat("cursor_chat", ["cursor_exec_path", "CURSOR_EXEC_PATH", "cursor-agent"]),
  pi_chat: agentChat("pi_chat", ["pi_exec_path", "PI_EXEC_PATH", "pi"]),
  opencode_chat: agentChat("opencode_chat", ["opencode_exec_path", "OPENCODE_EXEC_PATH", "opencode"]),
  sim: (role, _settings, config) => loadSim(role, config),
};

/** The chat backend of a role, or undefined for exec-only harnesses. */
export async function buildChatBackend(
  name: BackendName,
  role: Role,
  settings: Settings,
  config: unknown,
): Promise<ChatBackend | undefined> {
  warnCliKeyOverHttp(name, settings);
  const def: BackendDef = BACKENDS[name];
  if (def.openai) return (await presets()).definedEndpointBackend(def, settings, role);
  return CHAT_BUILDERS[name as Exclude<BackendName, EndpointDefined>](role, settings, config);
}

/** A codex boolean switch: the config key when set (true/false), else the env var; default false. */
function codexFlag(settings: Settings, key: string, env: string): "true" | "false" {
  const raw = settings.modelRaw(key);
  if (typeof raw === "boolean") return raw ? "true" : "false";
  const v = settings.envVar(env)?.toLowerCase();
  return v === "1" || v === "true" || v === "yes" || v === "on" ? "true" : "false";
}

const warnedFullAuto = new Set<string>();

/**
 * codex_exec_full_auto / CODEX_EXEC_FULL_AUTO is deprecated upstream and ignored: say so once when
 * it is turned on (spec §3.5), instead of silently dropping it.
 */
function warnFullAuto(settings: Settings): void {
  const raw = settings.modelRaw("codex_exec_full_auto");
  const env = settings.envVar("CODEX_EXEC_FULL_AUTO")?.toLowerCase();
  const on = raw === true || (raw !== false && (env === "1" || env === "true" || env === "yes" || env === "on"));
  const from = raw === true ? "model.codex_exec_full_auto" : "CODEX_EXEC_FULL_AUTO";
  if (!on || warnedFullAuto.has(from)) return;
  warnedFullAuto.add(from);
  log
    .withTag("model")
    .warn(
      `${from} is deprecated and ignored: codex runs with --sandbox (model.codex_exec_sandbox) and approval_policy (model.codex_exec_approval_policy) instead`,
    );
}

/** The SDK paths of the harnesses are not built (no SDK dependency): `sdk` falls back to the CLI, loudly. */
function warnNoSdk(settings: Settings, key: string, env: string, what: string): void {
  const v = settings.first([key], [env])?.value.toLowerCase();
  if (v && ["sdk", "true", "1", "yes", "on"].includes(v))
    log.withTag("model").warn(`model.${key}: the ${what} is not available in this build; using the CLI`);
}

/** The harness-specific part of a target's task runner: its executable and knobs (sandbox, effort, profile, …). */
type TaskBuild = (settings: Settings) => { bin: string; options: Record<string, string | undefined> };

/**
 * The task-runner build function of every backend declared to run whole tasks in
 * `src/config/backend-names.ts` (TASK_RUNNERS), under the same name; a test checks the two sets are the same.
 */
export const TASK_BUILDERS: Readonly<Record<HarnessName, TaskBuild>> = {
  claude_code_exec: (settings) => {
    warnNoSdk(settings, "claude_code_exec_use_sdk", "CLAUDE_CODE_EXEC_USE_SDK", "Claude Agent SDK");
    // An explicitly empty effort means "omit" (the base config's default is medium).
    const effortRaw =
      settings.modelRaw("claude_code_exec_effort") === ""
        ? "none"
        : (settings.first(["claude_code_exec_effort"], ["CLAUDE_CODE_EXEC_EFFORT"])?.value ?? "medium").toLowerCase();
    const effort =
      effortRaw === "xhigh"
        ? "max"
        : ["low", "medium", "high", "max"].includes(effortRaw)
          ? effortRaw
          : effortRaw === "none" || effortRaw === "off"
            ? undefined
            : "medium";
    const thinking = numberOf(
      settings.first(["claude_code_exec_max_thinking_tokens"], ["CLAUDE_CODE_EXEC_MAX_THINKING_TOKENS"])?.value ??
        "16384",
    );
    return {
      bin: bin(settings, ["claude_code_exec_path"], ["CLAUDE_CODE_EXEC_PATH"], "claude"),
      options: {
        effort,
        maxThinkingTokens: thinking && thinking > 0 ? String(Math.floor(thinking)) : undefined,
        profile: settings.first(["claude_code_exec_profile"], ["CLAUDE_CODE_EXEC_PROFILE"])?.value,
      },
    };
  },
  codex_exec: (settings) => {
    warnNoSdk(settings, "codex_exec_use_sdk", "CODEX_EXEC_USE_SDK", "Codex SDK");
    warnFullAuto(settings);
    const sandbox =
      settings.first(["codex_exec_sandbox"], ["CODEX_EXEC_SANDBOX", "CODEX_SANDBOX_MODE", "CODEX_SANDBOX"])?.value ??
      "workspace-write";
    if (!["read-only", "workspace-write", "danger-full-access"].includes(sandbox)) {
      throw new ConfigError(
        `model.codex_exec_sandbox: expected read-only, workspace-write or danger-full-access, got ${JSON.stringify(sandbox)}`,
        { key: "model.codex_exec_sandbox" },
      );
    }
    return {
      bin: bin(settings, ["codex_exec_path"], ["CODEX_EXEC_PATH", "CODEX_CLI_BIN", "CODEX_PATH"], "codex"),
      options: {
        sandbox,
        profile: settings.first(["codex_exec_profile"], ["CODEX_EXEC_PROFILE", "CODEX_PROFILE"])?.value,
        reasoningEffort: settings.first(["codex_exec_reasoning_effort"], ["CODEX_EXEC_REASONING_EFFORT"])?.value,
        approvalPolicy: settings.first(["codex_exec_approval_policy"], ["CODEX_EXEC_APPROVAL_POLICY"])?.value,
        networkAccess: codexFlag(settings, "codex_exec_network_access", "CODEX_EXEC_NETWORK_ACCESS"),
        webSearch: codexFlag(settings, "codex_exec_web_search", "CODEX_EXEC_WEB_SEARCH"),
      },
    };
  },
  cursor_exec: (settings) => {
    const sandbox = settings.first(["cursor_exec_sandbox"], ["CURSOR_EXEC_SANDBOX"])?.value ?? "enabled";
    if (sandbox !== "enabled" && sandbox !== "disabled")
      throw new ConfigError(`model.cursor_exec_sandbox: expected enabled or disabled, got ${JSON.stringify(sandbox)}`, {
        key: "model.cursor_exec_sandbox",
      });
    return { bin: bin(settings, ["cursor_exec_path"], ["CURSOR_EXEC_PATH"], "cursor-agent"), options: { sandbox } };
  },
  copilot_exec: (settings) => {
    const allow = settings.modelRaw("copilot_exec_allow_all_tools");
    const allowAll =
      typeof allow === "boolean"
        ? allow
        : ["1", "true", "yes", "on"].includes(settings.envVar("COPILOT_EXEC_ALLOW_ALL_TOOLS")?.toLowerCase() ?? "");
    return {
      bin: bin(settings, ["copilot_exec_path"], ["COPILOT_EXEC_PATH"], "copilot"),
      options: {
        allowAllTools: String(allowAll),
        home: settings.first(["copilot_exec_home"], ["COPILOT_EXEC_HOME"])?.value,
      },
    };
  },
};

/** The exec harness of the target, when the target backend runs whole tasks. */
export async function buildTaskRunner(
  name: BackendName,
  settings: Settings,
  prices: PriceTable,
): Promise<TaskRunner | undefined> {
  if (!runsTasks(name)) return undefined;
  warnCliKeyOverHttp(name, settings);
  const harness: HarnessName = name;
  const retries = numberOf(settings.envVar("EXEC_EMPTY_RESPONSE_RETRIES"));
  const common = {
    name: harness,
    timeoutMs: execTimeoutMs(settings),
    env: settings.env,
    emptyRetries: retries !== undefined && retries >= 0 ? Math.floor(retries) : 1,
  };
  const model = cliRoleModel(harness, "target", settings);
  const { createHarness } = await import("./exec/harness.ts");
  return createHarness({ ...common, model, ...TASK_BUILDERS[harness](settings) }, prices);
}

async function loadSim(role: Role, config: unknown): Promise<ChatBackend> {
  let mod: typeof import("./sim/index.ts");
  try {
    mod = await import("./sim/index.ts");
  } catch (err) {
    throw new UnsupportedError("sim backend not available", { feature: "sim backend", role }, { cause: err });
  }
  if (typeof mod.createSimBackend !== "function")
    throw new UnsupportedError("sim backend not available", { feature: "sim backend", role });
  const sim = await mod.createSimBackend(role, config as Parameters<typeof mod.createSimBackend>[1]);
  if (sim.cacheSalt !== undefined) return sim;
  // Simulated answers depend on the seed and the sim knobs of the config, not only on the request:
  // key the persistent cache on them so a run with other settings never reads another run's answers.
  const c = config as { train?: { seed?: unknown }; env?: unknown; model?: Record<string, unknown> };
  const salt = hashJson({ seed: c.train?.seed ?? null, env: c.env ?? null });
  return {
    name: sim.name,
    endpoint: sim.endpoint,
    defaultModel: sim.defaultModel,
    ...(sim.timeoutMs !== undefined ? { timeoutMs: sim.timeoutMs } : {}),
    cacheSalt: salt,
    complete: (request, opts) => sim.complete(request, opts),
    ...(sim.close ? { close: () => sim.close?.() } : {}),
  };
}
