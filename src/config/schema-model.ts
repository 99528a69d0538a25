import * as v from "valibot";
import {
  backendLabel,
  DEFINED_SETTINGS,
  LABEL_NAMES,
  ROLE_NAMES,
  roleBackend,
  unknownBackend,
} from "./backend-names.ts";
import { bool, nonNegInt, nullableBool, nullableNum, nullablePosInt, posInt, str, strOrNum } from "./fields.ts";

/** A backend name checked against the one table (config/backend-names.ts), with a did-you-mean. */
function backendName(def: string, doc: string, known: (s: string) => boolean, names: readonly string[]) {
  return v.optional(
    v.pipe(
      v.string("expected a backend name"),
      v.check(known, (issue) => unknownBackend(issue.input, names)),
      v.description(doc),
    ),
    def,
  );
}

const AZURE_SCOPE = "https://cognitiveservices.azure.com/.default";
const AZURE_VERSION = "2024-12-01-preview";

function prefixed(prefix: string, entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).map(([k, val]) => [`${prefix}${k}`, val]));
}

/**
 * A family of per-role keys, three times: for both roles (no prefix), then `optimizer_…` and
 * `target_…`. `entries` words each copy's docs for its role (`who`; `envPrefix` is "", "OPTIMIZER_"
 * or "TARGET_").
 */
function perRole<T extends Record<string, unknown>>(
  entries: (who: string, envPrefix: string) => T,
): { [K in keyof T & string as K | `optimizer_${K}` | `target_${K}`]: T[K] } {
  return {
    ...prefixed("", entries("both roles", "")),
    ...prefixed("optimizer_", entries("the optimizer", "OPTIMIZER_")),
    ...prefixed("target_", entries("the target", "TARGET_")),
  } as never;
}

function azureKeys(who: string) {
  return {
    azure_openai_endpoint: str("", `Azure OpenAI endpoint for ${who} (or base URL in openai_compatible auth mode)`),
    azure_openai_api_version: str(AZURE_VERSION, `Azure OpenAI API version for ${who}`),
    azure_openai_api_key: str("", `Azure OpenAI key for ${who}; prefer AZURE_OPENAI_API_KEY in the environment`),
    azure_openai_auth_mode: str(
      "",
      `api_key | azure_cli | managed_identity | openai_compatible for ${who}; empty → environment, then azure_cli`,
    ),
    azure_openai_ad_scope: str(AZURE_SCOPE, `AAD token scope for ${who}`),
    azure_openai_managed_identity_client_id: str("", `user-assigned managed identity client id for ${who}`),
  };
}

function qwenKeys(who: string) {
  return {
    qwen_chat_base_url: str(
      "",
      `Qwen (vLLM/SGLang) base URL for ${who}; empty → QWEN_CHAT_BASE_URL → http://localhost:8000/v1`,
    ),
    qwen_chat_api_key: str("", `Qwen endpoint key for ${who}`),
    qwen_chat_temperature: strOrNum("", `Qwen temperature for ${who}; empty → 0.7; none/off → omitted`),
    qwen_chat_timeout_seconds: strOrNum("", `Qwen per-call timeout (s) for ${who}; empty → 300`),
    qwen_chat_max_tokens: strOrNum("", `Qwen max_tokens cap for ${who}; empty → 8000`),
    qwen_chat_enable_thinking: v.optional(
      v.pipe(
        v.union([v.boolean(), v.string()], "expected true, false or a string"),
        v.description(`Legacy thinking switch for ${who} (qwen_chat_thinking_mode wins)`),
      ),
      "",
    ),
    qwen_chat_thinking_mode: str("", `server_default | enabled | disabled for ${who}; empty = unset`),
  };
}

function compatKeys(who: string, envPrefix: string) {
  return {
    openai_compatible_base_url: str(
      "",
      `OpenAI-compatible base URL for ${who}; empty → ${envPrefix}OPENAI_COMPATIBLE_BASE_URL → https://api.openai.com/v1`,
    ),
    openai_compatible_api_key: str("", `OpenAI-compatible key for ${who}; prefer the environment variable`),
    openai_compatible_model: str("", `model name override for ${who} on the OpenAI-compatible backend`),
    openai_compatible_temperature: nullableNum(`sampling temperature for ${who}; null → omitted`),
    openai_compatible_max_tokens: nullablePosInt(`max_tokens cap for ${who}; null → 8000 (upstream default)`),
    openai_compatible_timeout_seconds: nullableNum(`per-call timeout (s) for ${who}; null → 300`),
    openai_compatible_stream: bool(false, `stream responses (SSE) for ${who}`),
  };
}

const PricingSchema = v.record(
  v.string(),
  v.strictObject({
    input_per_mtok: v.pipe(v.number("expected a price in dollars per million tokens"), v.minValue(0)),
    output_per_mtok: v.pipe(v.number("expected a price in dollars per million tokens"), v.minValue(0)),
    cached_input_per_mtok: v.optional(
      v.pipe(v.number("expected a price in dollars per million tokens"), v.minValue(0)),
    ),
    batch_input_per_mtok: v.optional(v.pipe(v.number("expected a price in dollars per million tokens"), v.minValue(0))),
    batch_output_per_mtok: v.optional(
      v.pipe(v.number("expected a price in dollars per million tokens"), v.minValue(0)),
    ),
  }),
  "expected a map of model name → {input_per_mtok, output_per_mtok}",
);

/** `model:` — backends, models and their settings (engine.md §3.2, §7). */
export const ModelSchema = v.strictObject({
  backend: backendName(
    "azure_openai",
    "High-level backend label mapped onto both roles (§7.2): azure_openai, openai_compatible, claude_chat, codex_exec, claude_code_exec, " +
      "qwen_chat, minimax_chat, copilot_chat, sim, auto, or a local server: ollama, llamacpp, vllm, lmstudio (openai_compatible at its default port), …",
    (s) => backendLabel(s) !== undefined,
    LABEL_NAMES,
  ),
  optimizer: str("gpt-5.5", "Optimizer model or deployment name"),
  target: str("gpt-5.5", "Target model or deployment name"),
  optimizer_backend: backendName(
    "openai_chat",
    "Optimizer role backend (openai_chat counts as 'at default' and follows `backend`)",
    (s) => roleBackend(s) !== undefined,
    ROLE_NAMES,
  ),
  target_backend: backendName(
    "openai_chat",
    "Target role backend (openai_chat counts as 'at default' and follows `backend`)",
    (s) => roleBackend(s) !== undefined,
    ROLE_NAMES,
  ),
  reasoning_effort: str("medium", "Reasoning effort for chat backends that take it: '', low, medium, high, xhigh, max"),
  rewrite_reasoning_effort: str("", "Reasoning effort for the rewrite call; empty = reasoning_effort"),
  rewrite_max_completion_tokens: posInt(64000, "Output cap of the rewrite call"),
  codex_exec_path: str("", "Codex binary; empty → CODEX_EXEC_PATH/CODEX_CLI_BIN/CODEX_PATH → codex"),
  codex_exec_sandbox: str("", "Codex sandbox: read-only, workspace-write, danger-full-access; empty → workspace-write"),
  codex_exec_profile: str("", "Codex profile"),
  codex_exec_reasoning_effort: str("", "Codex model_reasoning_effort; empty → not sent"),
  codex_exec_use_sdk: v.optional(
    v.pipe(
      v.nullable(v.union([v.string(), v.boolean()], "expected auto, sdk, cli or a boolean")),
      v.description("auto, sdk or cli; there is no SDK in this build, so the CLI is used (sdk warns)"),
    ),
    null,
  ),
  codex_exec_network_access: nullableBool("Network access in the workspace-write sandbox"),
  codex_exec_web_search: nullableBool("Codex web search (live when true)"),
  codex_exec_approval_policy: str("", "Codex approval policy; empty → never"),
  codex_exec_full_auto: nullableBool("Deprecated and ignored (warns)"),
  claude_code_exec_path: str("claude", "Claude Code binary for the exec harness"),
  claude_code_exec_profile: str("", "Claude Code profile name"),
  claude_code_exec_use_sdk: v.optional(
    v.pipe(
      v.nullable(v.union([v.string(), v.boolean()], "expected auto, sdk, cli or a boolean")),
      v.description("auto, sdk or cli; there is no SDK in this build, so the CLI is used (sdk warns)"),
    ),
    "auto",
  ),
  claude_code_exec_effort: str("medium", "low, medium, high, max (xhigh → max; none/off/'' → omitted)"),
  claude_code_exec_max_thinking_tokens: nonNegInt(16384, "Max thinking tokens; 0 → not passed"),
  cursor_exec_path: str("", "Cursor agent binary; empty → CURSOR_EXEC_PATH → cursor-agent"),
  cursor_exec_sandbox: str("", "enabled (default) or disabled"),
  copilot_exec_path: str("", "Copilot CLI binary; empty → COPILOT_EXEC_PATH → copilot"),
  copilot_exec_home: str("", "COPILOT_HOME for child processes"),
  copilot_exec_allow_all_tools: nullableBool("Pass --allow-all-tools to copilot_exec (file-edit rollouts)"),
  copilot_chat_optimizer_model: str("", "--model for copilot_chat optimizer calls; empty = CLI default"),
  copilot_chat_target_model: str("", "--model for copilot_chat target calls; empty = CLI default"),
  copilot_chat_timeout: nullablePosInt("Per-call timeout (s) of copilot_chat; null → 600"),
  codex_trace_to_optimizer: bool(
    true,
    "Include Codex trace summaries in analyst prompts when the target is codex_exec",
  ),
  azure_endpoint: str("", "Legacy alias of azure_openai_endpoint"),
  azure_api_version: str("", "Legacy alias of azure_openai_api_version"),
  azure_api_key: str("", "Legacy alias of azure_openai_api_key"),
  ...perRole(azureKeys),
  ...perRole(qwenKeys),
  minimax_region: str("", "global_en (→ https://api.minimax.io/v1) or cn_zh (→ https://api.minimaxi.com/v1)"),
  minimax_base_url: str("", "Explicit MiniMax base URL (wins over region)"),
  minimax_api_key: str("", "MiniMax key; prefer MINIMAX_API_KEY"),
  minimax_model: str("MiniMax-M3", "Target model when the target is minimax_chat"),
  minimax_temperature: strOrNum("0.7", "MiniMax temperature; empty → omitted"),
  minimax_max_tokens: strOrNum("8000", "Cap on MiniMax max_tokens"),
  minimax_enable_thinking: v.optional(
    v.pipe(
      v.union([v.string(), v.boolean()], "expected true, false or a string"),
      v.description("Ask MiniMax to think before answering"),
    ),
    "false",
  ),
  optimizer_minimax_base_url: str("", "Accepted for upstream compatibility; unused (MiniMax has one shared client)"),
  target_minimax_base_url: str("", "Accepted for upstream compatibility; unused"),
  optimizer_minimax_api_key: str("", "Accepted for upstream compatibility; unused"),
  target_minimax_api_key: str("", "Accepted for upstream compatibility; unused"),
  ...perRole(compatKeys),
  structured_outputs: bool(
    true,
    "Send the optimizer's JSON schema as response_format (json_schema) to OpenAI-compatible servers; " +
      "one that refuses it is asked without it (once per endpoint)",
  ),
  max_cost_usd: nullableNum("Stop cleanly at the next step boundary once this many dollars are spent (null = no cap)"),
  max_calls: nullablePosInt("Stop cleanly at the next step boundary after this many paid model calls (null = no cap)"),
  pricing: v.optional(
    v.pipe(
      PricingSchema,
      v.description("Prices per model in dollars per million tokens; a money cap needs one for every model it calls"),
    ),
    {},
  ),
  cache_dir: str("", "Model-call cache directory; empty → $SKILLOPT_CACHE_DIR → <user cache>/skillopt"),
  sim_latency_ms: nonNegInt(0, "Simulated latency per call of the sim backend (benchmarks)"),
  batch: v.optional(
    v.pipe(
      v.picklist(["off", "eval", "all"], "expected off, eval or all"),
      v.description(
        "Provider Batch API (half price, answers within hours): off, eval (skillopt eval and final test evaluations), all (every round of the run)",
      ),
    ),
    "off",
  ),
  optimizer_batch: v.optional(
    v.pipe(
      v.picklist(["", "off", "eval", "all"], "expected '', off, eval or all"),
      v.description("model.batch for the optimizer role only; empty = model.batch"),
    ),
    "",
  ),
  target_batch: v.optional(
    v.pipe(
      v.picklist(["", "off", "eval", "all"], "expected '', off, eval or all"),
      v.description("model.batch for the target role only; empty = model.batch"),
    ),
    "",
  ),
  batch_fallback: v.optional(
    v.pipe(
      v.picklist(["live", "stop"], "expected live or stop"),
      v.description("Entries that expired or failed twice in a batch: ask them live, or stop the run"),
    ),
    "live",
  ),
  batch_required: bool(
    false,
    "Refuse to start (exit 2) when a batched role's backend has no Batch API, instead of calling it live with a warning",
  ),
  batch_poll_seconds: v.optional(
    v.pipe(
      v.number("expected a number of seconds"),
      v.minValue(0.001, "expected a positive number of seconds"),
      v.description("First wait between polls of a pending batch (grows ×1.5 up to 30× this, at most 5 minutes)"),
    ),
    15,
  ),
  max_concurrency: nullablePosInt("Upper bound on concurrent calls per endpoint (null → the worker keys decide)"),
  // The keys each backend definition declares (src/config/backends/); read by name through Settings,
  // so they are left out of the static type.
  ...(DEFINED_SETTINGS as Record<never, never>),
});
