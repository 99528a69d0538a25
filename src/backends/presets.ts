import type { Role } from "../engine/index.ts";
import { type BackendDef, BACKENDS, backendLabel, LOCAL_SERVER_URLS } from "../config/index.ts";
import { ConfigError, errorMessage, isLoopbackHost, log } from "../lib/index.ts";
import { azureCliTokenProvider, managedIdentityTokenProvider } from "./azure-auth.ts";
import { AZURE_AD_HOST_SUFFIXES, isAzureOpenAiUrl, sanitizeEndpoint } from "./endpoint.ts";
import { createSdkChatBackend } from "./openai-compatible.ts";
import { numberOf, ROLE_ENV_PREFIX, type Settings } from "./settings.ts";
import type { ChatBackend } from "./types.ts";

/** Models that accept `reasoning_effort` on the OpenAI wire (o-series, gpt-5 family). */
function takesReasoningEffort(model: string): boolean {
  const bare = model.toLowerCase().replace(/^.*\//, "");
  return /^(o\d|gpt-5|codex)/.test(bare);
}

/**
 * A number from the first layer that sets it (`fallback` when none does; a blank value or none/off
 * → undefined, so the field is omitted). A value that is not a number, or fails `ok`, is a
 * ConfigError naming the layer it came from.
 */
function numericSetting(
  settings: Settings,
  keys: string[],
  envs: string[],
  fallback: number | undefined,
  ok: (n: number) => boolean,
  expected: string,
): number | undefined {
  const found = settings.first(keys, envs);
  if (!found) return fallback;
  const n = numberOf(found.value);
  if (n !== undefined && (Number.isNaN(n) || !ok(n)))
    throw new ConfigError(`${found.from}: expected ${expected}, got ${JSON.stringify(found.value)}`, {
      key: found.from,
    });
  return n;
}

function numberSetting(settings: Settings, keys: string[], envs: string[], fallback: number | undefined) {
  return numericSetting(settings, keys, envs, fallback, (n) => n > 0, "a positive number");
}

function temperatureSetting(settings: Settings, keys: string[], envs: string[], fallback: number | undefined) {
  return numericSetting(settings, keys, envs, fallback, (n) => n >= 0 && n <= 2, "a temperature from 0 to 2 (or none)");
}

/** Keys and env names of one per-role setting: role config, shared config, role env, shared env. */
function layered(role: Role, prefix: string, suffix: string): { keys: string[]; envs: string[] } {
  const up = `${prefix}_${suffix}`.toUpperCase();
  return { keys: [`${role}_${prefix}_${suffix}`, `${prefix}_${suffix}`], envs: [`${ROLE_ENV_PREFIX[role]}_${up}`, up] };
}

/**
 * A role's model: backend-specific config keys, the role model the user chose, the backend's env
 * vars, then (only where the backend serves the same model names, `keepPlaceholder`) a shipped
 * placeholder such as the base config's gpt-5.5, then the backend's default.
 */
function roleModel(
  settings: Settings,
  role: Role,
  specificKeys: string[],
  specificEnvs: string[],
  fallback: string,
  keepPlaceholder: boolean,
): string {
  return (
    settings.first(specificKeys)?.value ??
    settings.chosenModel(role) ??
    settings.first([], specificEnvs)?.value ??
    (keepPlaceholder ? settings.placeholderModel(role) : undefined) ??
    fallback
  );
}

/** model.structured_outputs (default on): send response schemas to servers that take them. */
function structuredOutputs(settings: Settings): boolean {
  const v = settings.config.model.structured_outputs;
  return !(v === false || ["false", "0", "no", "off"].includes(String(v ?? "").toLowerCase()));
}

/** The default base URL of a local server named by model.backend (ollama, llamacpp, vllm, lmstudio). */
function localServerUrl(settings: Settings): string | undefined {
  const label = backendLabel(settings.model("backend"));
  return label ? LOCAL_SERVER_URLS[label] : undefined;
}

/** openai_compatible for one role (spec §7.4). */
export function openaiCompatibleBackend(settings: Settings, role: Role): ChatBackend {
  const get = (suffix: string) => {
    const l = layered(role, "openai_compatible", suffix);
    return settings.first(l.keys, l.envs);
  };
  const l = (suffix: string) => layered(role, "openai_compatible", suffix);
  const base = get("base_url");
  const key = get("api_key");
  const model = roleModel(
    settings,
    role,
    l("model").keys,
    [...l("model").envs, `${ROLE_ENV_PREFIX[role]}_DEPLOYMENT`],
    "gpt-4o-mini",
    true,
  );
  // Booleans always have a value (default false), so any layer saying true turns streaming on.
  const streamLayers = [
    ...l("stream").keys.map((k) => settings.model(k)),
    ...l("stream").envs.map((e) => settings.envVar(e)),
  ];
  const stream = streamLayers.some((x) => ["1", "true", "yes", "on"].includes((x ?? "").toLowerCase()));
  return createSdkChatBackend({
    name: "openai_compatible",
    kind: "openai",
    url: base?.value ?? localServerUrl(settings) ?? "https://api.openai.com/v1",
    ...(base ? { urlFrom: base.from } : {}),
    ...(key ? { apiKey: key.value } : {}),
    defaultModel: model,
    timeoutMs: (numberSetting(settings, l("timeout_seconds").keys, l("timeout_seconds").envs, 300) ?? 300) * 1000,
    maxTokensCap: numberSetting(settings, l("max_tokens").keys, l("max_tokens").envs, 8000),
    maxTokensField: "max_tokens",
    temperature: temperatureSetting(settings, l("temperature").keys, l("temperature").envs, undefined),
    sendReasoningEffort: takesReasoningEffort,
    stream,
    keyHint: key ? key.from : `${l("api_key").envs[1]} or model.openai_compatible_api_key`,
    structured: structuredOutputs(settings),
  });
}

/**
 * A backend whose definition (src/config/backends/) gives its OpenAI-compatible endpoint: the
 * client of one role. The model is the endpoint's, else the role's chosen one, else the definition's default.
 */
export function definedEndpointBackend(def: BackendDef, settings: Settings, role: Role): ChatBackend {
  const e = def.openai!(settings, role);
  return createSdkChatBackend({
    name: def.name,
    kind: "openai",
    url: e.url,
    urlFrom: e.urlFrom ?? `${def.name} base URL`,
    ...(e.apiKey ? { apiKey: e.apiKey } : {}),
    defaultModel: e.model ?? settings.chosenModel(role) ?? def.defaultModel ?? settings.model(role) ?? "",
    timeoutMs: e.timeoutMs ?? 300_000,
    maxTokensCap: e.maxTokensCap ?? 8000,
    maxTokensField: e.maxTokensField ?? "max_tokens",
    temperature: e.temperature,
    sendReasoningEffort: () => false,
    ...(e.extraBody ? { extraBody: e.extraBody } : {}),
    stream: false,
    keyHint: e.keyHint,
    structured: structuredOutputs(settings),
  });
}

/** qwen_chat's documented default model (spec §7.5), used when the role's model is a shipped placeholder. */
const QWEN_DEFAULT_MODEL = BACKENDS.qwen_chat.defaultModel;

type ThinkingMode = "server_default" | "enabled" | "disabled";
// The reference's accepted spellings (case-insensitive, '-' = '_'); anything else is a typo and an error.
const THINKING_SPELLINGS: Record<string, ThinkingMode> = {
  server_default: "server_default",
  auto: "server_default",
  unset: "server_default",
  enabled: "enabled",
  true: "enabled",
  disabled: "disabled",
  false: "disabled",
};
const warnedThinking = new Set<Role>();

/** The qwen thinking-mode wire policy for a role (spec §7.5). */
function qwenThinkingMode(settings: Settings, role: Role): ThinkingMode {
  const mode = settings.first(
    layered(role, "qwen_chat", "thinking_mode").keys,
    layered(role, "qwen_chat", "thinking_mode").envs,
  );
  const legacy = settings.first(
    layered(role, "qwen_chat", "enable_thinking").keys,
    layered(role, "qwen_chat", "enable_thinking").envs,
  );
  let fromMode: ThinkingMode | undefined;
  if (mode) {
    fromMode = THINKING_SPELLINGS[mode.value.toLowerCase().replaceAll("-", "_")];
    if (!fromMode) {
      throw new ConfigError(`${mode.from}: unknown Qwen thinking mode ${JSON.stringify(mode.value)}`, {
        key: mode.from,
        hint: "use enabled (or true), disabled (or false), or server_default (or auto, unset)",
      });
    }
  }
  let fromLegacy: ThinkingMode | undefined;
  if (legacy) {
    const b = legacy.value.toLowerCase();
    if (!["true", "false", "1", "0", "yes", "no", "on", "off"].includes(b))
      throw new ConfigError(`${legacy.from}: expected true or false, got ${JSON.stringify(legacy.value)}`, {
        key: legacy.from,
      });
    fromLegacy = ["true", "1", "yes", "on"].includes(b) ? "enabled" : "server_default";
  }
  if (fromMode && fromLegacy && fromMode !== fromLegacy) {
    throw new ConfigError(
      `${mode!.from} (${fromMode}) conflicts with the legacy ${legacy!.from} (${legacy!.value}) for the ${role}`,
      { key: legacy!.from, hint: "keep only qwen_chat_thinking_mode" },
    );
  }
  const resolved = fromMode ?? fromLegacy ?? "server_default";
  if (resolved === "server_default" && !warnedThinking.has(role)) {
    warnedThinking.add(role);
    log
      .withTag("model")
      .debug(`qwen_chat ${role}: thinking mode is the server default (chat_template_kwargs not sent)`);
  }
  return resolved;
}

/**
 * Qwen temperature: config keys, then the env vars, else 0.7. An env var that is set but blank
 * (`TARGET_QWEN_CHAT_TEMPERATURE=`), or none/off/null, omits the field, as in the reference.
 */
function qwenTemperature(settings: Settings, keys: string[], envs: string[]): number | undefined {
  const fromConfig = settings.first(keys);
  if (fromConfig) return temperatureSetting(settings, keys, [], 0.7);
  for (const name of envs) {
    const raw = settings.env(name);
    if (raw === undefined) continue;
    if (BLANK_TEMPERATURE.has(raw.trim().toLowerCase())) return undefined;
    return temperatureSetting(settings, [], [name], 0.7);
  }
  return 0.7;
}
const BLANK_TEMPERATURE = new Set(["", "none", "off", "null"]);

/** qwen_chat for one role: an OpenAI-compatible preset with its own knobs (spec §7.5). */
export function qwenBackend(settings: Settings, role: Role): ChatBackend {
  const l = (suffix: string) => layered(role, "qwen_chat", suffix);
  const get = (suffix: string) => settings.first(l(suffix).keys, l(suffix).envs);
  const mode = qwenThinkingMode(settings, role);
  const useMct = get("use_max_completion_tokens")?.value.toLowerCase();
  const key = get("api_key");
  return createSdkChatBackend({
    name: "qwen_chat",
    kind: "openai",
    url: get("base_url")?.value ?? "http://localhost:8000/v1",
    urlFrom: get("base_url")?.from ?? "qwen_chat base URL",
    ...(key ? { apiKey: key.value } : {}),
    defaultModel: roleModel(settings, role, l("model").keys, l("model").envs, QWEN_DEFAULT_MODEL, false),
    timeoutMs: (numberSetting(settings, l("timeout_seconds").keys, l("timeout_seconds").envs, 300) ?? 300) * 1000,
    maxTokensCap: numberSetting(settings, l("max_tokens").keys, l("max_tokens").envs, 8000),
    maxTokensField: useMct === "true" || useMct === "1" || useMct === "yes" ? "max_completion_tokens" : "max_tokens",
    temperature: qwenTemperature(settings, l("temperature").keys, l("temperature").envs),
    sendReasoningEffort: () => false,
    ...(mode === "server_default"
      ? {}
      : { extraBody: { chat_template_kwargs: { enable_thinking: mode === "enabled" } } }),
    stream: false,
    keyHint: key ? key.from : "QWEN_CHAT_API_KEY",
    structured: structuredOutputs(settings),
  });
}

const MINIMAX_REGIONS: Record<string, string> = {
  global_en: "https://api.minimax.io/v1",
  cn_zh: "https://api.minimaxi.com/v1",
};

/** minimax_chat: one shared config for both roles; both use the target deployment (spec §7.5). */
export function minimaxBackend(settings: Settings): ChatBackend {
  const explicit = settings.first(["minimax_base_url"], ["MINIMAX_BASE_URL"]);
  let url = explicit?.value;
  if (!url) {
    const region = settings.first(["minimax_region"], ["MINIMAX_REGION"]);
    const r = (region?.value ?? "global_en").toLowerCase().replaceAll("-", "_");
    url = MINIMAX_REGIONS[r];
    if (!url)
      throw new ConfigError(
        `${region?.from ?? "model.minimax_region"}: unknown MiniMax region ${JSON.stringify(region?.value)}`,
        { key: region?.from ?? "model.minimax_region", hint: "use global_en or cn_zh" },
      );
  }
  const model =
    settings.first(["minimax_model"], ["MINIMAX_MODEL"])?.value ?? settings.chosenModel("target") ?? "MiniMax-M3";
  const thinkingFlag = settings.first(["minimax_enable_thinking"], ["MINIMAX_ENABLE_THINKING"])?.value.toLowerCase();
  const adaptive =
    model.startsWith("MiniMax-M2") || thinkingFlag === "true" || thinkingFlag === "1" || thinkingFlag === "yes";
  const key = settings.first(["minimax_api_key"], ["MINIMAX_API_KEY"]);
  return createSdkChatBackend({
    name: "minimax_chat",
    kind: "openai",
    url,
    urlFrom: explicit?.from ?? "model.minimax_region",
    ...(key ? { apiKey: key.value } : {}),
    defaultModel: model,
    timeoutMs: (numberSetting(settings, [], ["MINIMAX_TIMEOUT_SECONDS"], 300) ?? 300) * 1000,
    maxTokensCap: numberSetting(settings, ["minimax_max_tokens"], ["MINIMAX_MAX_TOKENS"], 8000),
    maxTokensField: "max_tokens",
    // An explicitly empty minimax_temperature means "omit" (the base config's default is "0.7").
    temperature:
      settings.modelRaw("minimax_temperature") === ""
        ? undefined
        : temperatureSetting(settings, ["minimax_temperature"], ["MINIMAX_TEMPERATURE"], 0.7),
    sendReasoningEffort: () => false,
    extraBody: { thinking: { type: adaptive ? "adaptive" : "disabled" } },
    stream: false,
    keyHint: key ? key.from : "MINIMAX_API_KEY or model.minimax_api_key",
  });
}

/** Azure keys: per-role config, shared config (and legacy alias), per-role env (two spellings), shared env. */
function azureSetting(settings: Settings, role: Role, suffix: string, legacy?: string) {
  const R = ROLE_ENV_PREFIX[role];
  const up = suffix.toUpperCase();
  const keys = [`${role}_azure_openai_${suffix}`, `azure_openai_${suffix}`, ...(legacy ? [legacy] : [])];
  return settings.first(keys, [`${R}_AZURE_OPENAI_${up}`, `AZURE_OPENAI_${R}_${up}`, `AZURE_OPENAI_${up}`]);
}

/** Sleep's azure_openai request shape in OpenAI-compatible mode (reference sleep backend). */
function sleepCompatShape(settings: Settings): {
  maxTokensField: "max_tokens";
  fixedMaxTokens: number;
  extraBody?: Record<string, unknown>;
} {
  const rawMax = settings.envVar("SKILLOPT_SLEEP_COMPAT_MAX_TOKENS");
  const max = rawMax === undefined ? 8192 : Number(rawMax);
  if (!Number.isInteger(max) || max <= 0) {
    throw new ConfigError(
      `SKILLOPT_SLEEP_COMPAT_MAX_TOKENS: expected a positive whole number of tokens, got ${JSON.stringify(rawMax)}`,
      { key: "SKILLOPT_SLEEP_COMPAT_MAX_TOKENS" },
    );
  }
  const rawBody = settings.envVar("SKILLOPT_SLEEP_CHAT_EXTRA_BODY");
  if (rawBody === undefined) return { maxTokensField: "max_tokens", fixedMaxTokens: max };
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch (err) {
    throw new ConfigError(`SKILLOPT_SLEEP_CHAT_EXTRA_BODY: not valid JSON (${errorMessage(err)})`, {
      key: "SKILLOPT_SLEEP_CHAT_EXTRA_BODY",
      hint: 'give a JSON object of extra request fields, e.g. {"thinking": {"type": "enabled"}}, or unset it',
    });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ConfigError("SKILLOPT_SLEEP_CHAT_EXTRA_BODY: expected a JSON object of extra request fields", {
      key: "SKILLOPT_SLEEP_CHAT_EXTRA_BODY",
      hint: 'e.g. {"thinking": {"type": "enabled"}}',
    });
  }
  const reserved = Object.keys(body).filter((k) => k === "model" || k === "messages" || k === "__proto__");
  if (reserved.length)
    throw new ConfigError(`SKILLOPT_SLEEP_CHAT_EXTRA_BODY: may not set ${reserved.join(", ")}`, {
      key: "SKILLOPT_SLEEP_CHAT_EXTRA_BODY",
    });
  return { maxTokensField: "max_tokens", fixedMaxTokens: max, extraBody: body as Record<string, unknown> };
}

const AD_MODES = new Set(["azure_cli", "managed_identity", "aad", "azure_ad"]);

/**
 * Azure AD and managed-identity tokens are only created for, and sent to, https endpoints on Azure
 * OpenAI hosts (AZURE_AD_HOST_SUFFIXES). Anything else is refused here, before a token exists.
 */
function checkAzureAdEndpoint(url: string, from: string, mode: string, role: Role, loopbackForTests: boolean): void {
  if (isAzureOpenAiUrl(url)) return;
  if (loopbackForTests) {
    try {
      if (isLoopbackHost(new URL(url).hostname)) return;
    } catch {
      // fall through to the refusal
    }
  }
  const hosts = AZURE_AD_HOST_SUFFIXES.map((s) => `*${s}`).join(", ");
  throw new ConfigError(
    `${from}: refusing to send an Azure AD token (${mode}) for the ${role} to ${JSON.stringify(sanitizeEndpoint(url))}: such tokens only go to https \
endpoints on Azure OpenAI hosts (${hosts})`,
    {
      hint:
        "for an Azure resource use its https://<resource>.openai.azure.com endpoint; for any other server set " +
        "AZURE_OPENAI_AUTH_MODE=openai_compatible (key from AZURE_OPENAI_API_KEY) or use --backend openai_compatible",
      issues: [{ path: from, message: "not an https Azure OpenAI endpoint" }],
    },
  );
}

/** openai_chat (Azure OpenAI, or plain OpenAI in the openai_compatible auth mode), spec §7.3. */
export function azureBackend(settings: Settings, role: Role): ChatBackend {
  const endpoint = azureSetting(settings, role, "endpoint", "azure_endpoint");
  const key = azureSetting(settings, role, "api_key", "azure_api_key");
  const version = azureSetting(settings, role, "api_version", "azure_api_version")?.value ?? "2024-12-01-preview";
  const scope = azureSetting(settings, role, "ad_scope")?.value ?? "https://cognitiveservices.azure.com/.default";
  const clientId = azureSetting(settings, role, "managed_identity_client_id")?.value;
  const modeRaw = azureSetting(settings, role, "auth_mode");
  const mode = (modeRaw?.value ?? "azure_cli").toLowerCase();
  const modeFrom = modeRaw
    ? `auth mode ${mode}, from ${modeRaw.from}`
    : "auth mode azure_cli, the default when AZURE_OPENAI_AUTH_MODE is unset";
  const model = roleModel(
    settings,
    role,
    [],
    [`${ROLE_ENV_PREFIX[role]}_DEPLOYMENT`, "AZURE_OPENAI_DEPLOYMENT"],
    "gpt-4o",
    true,
  );
  if (!endpoint) {
    throw new ConfigError(
      `model.${role}_azure_openai_endpoint: no Azure OpenAI endpoint configured for the ${role} (backend openai_chat)`,
      {
        key: `model.${role}_azure_openai_endpoint`,
        hint: "set model.azure_openai_endpoint or AZURE_OPENAI_ENDPOINT, or choose another backend (e.g. --set model.backend=auto)",
      },
    );
  }
  const common = {
    defaultModel: model,
    timeoutMs: 300_000,
    maxTokensField: "max_completion_tokens" as const,
    // Deployment names are free-form; classic chat models reject reasoning_effort, so skip those.
    sendReasoningEffort: (m: string) => !/gpt-4|gpt-35|gpt-3\.5/i.test(m),
    stream: false,
    responsesApi: true,
  };
  const sleep = settings.modelRaw("sleep_requests") === true;
  if (mode === "openai_compatible" || mode === "compat" || mode === "openai") {
    // Sleep's compat mode (sleep.md §5.9): max_tokens fixed by SKILLOPT_SLEEP_COMPAT_MAX_TOKENS, plus an opt-in extra body.
    const shape = sleep ? sleepCompatShape(settings) : {};
    return createSdkChatBackend({
      ...common,
      ...shape,
      name: "openai_chat",
      kind: "openai",
      url: endpoint.value,
      urlFrom: endpoint.from,
      ...(key ? { apiKey: key.value } : {}),
      keyHint: key?.from ?? "AZURE_OPENAI_API_KEY",
    });
  }
  if (AD_MODES.has(mode))
    checkAzureAdEndpoint(endpoint.value, endpoint.from, modeFrom, role, settings.azureAdLoopbackForTests);
  // Sleep's Azure mode asks for max_completion_tokens 16384 on every call (sleep.md §5.9).
  const base = {
    ...common,
    ...(sleep ? { fixedMaxTokens: 16384 } : {}),
    name: "openai_chat",
    kind: "azure" as const,
    url: endpoint.value,
    urlFrom: endpoint.from,
    apiVersion: version,
  };
  if (mode === "api_key" || mode === "key") {
    if (!key) {
      throw new ConfigError(`model.${role}_azure_openai_api_key: auth mode api_key needs a key for the ${role}`, {
        key: `model.${role}_azure_openai_api_key`,
        hint: "set AZURE_OPENAI_API_KEY (or model.azure_openai_api_key)",
      });
    }
    return createSdkChatBackend({ ...base, apiKey: key.value, keyHint: key.from });
  }
  if (mode === "azure_cli") {
    const azBin = settings.envVar("AZ_CLI_BIN") ?? "az";
    return createSdkChatBackend({
      ...base,
      tokenProvider: azureCliTokenProvider({ azBin, scope, env: settings.env }),
      keyHint: "`az login`",
    });
  }
  if (mode === "managed_identity" || mode === "aad" || mode === "azure_ad") {
    return createSdkChatBackend({
      ...base,
      tokenProvider: managedIdentityTokenProvider({ scope, clientId, env: settings.env }),
      keyHint: "the managed identity's role assignment on the resource",
    });
  }
  throw new ConfigError(
    `${modeRaw?.from ?? "model.azure_openai_auth_mode"}: unknown auth mode ${JSON.stringify(modeRaw?.value)}`,
    {
      key: modeRaw?.from ?? "model.azure_openai_auth_mode",
      hint: "use api_key, azure_cli, managed_identity or openai_compatible",
    },
  );
}
