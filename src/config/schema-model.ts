import * as v from "valibot";
import {
  backendLabel,
  DEFINED_SETTINGS,
  LABEL_NAMES,
  ROLE_NAMES,
  roleBackend,
  settingsOf,
  unknownBackend,
} from "./backend-names.ts";
import { bool, nonNegInt, nullableNum, nullablePosInt, posInt, str } from "./fields.ts";

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
  ...settingsOf("codex_exec"),
  ...settingsOf("claude_code_exec"),
  ...settingsOf("cursor_exec"),
  ...settingsOf("copilot_exec"),
  ...settingsOf("copilot_chat"),
  codex_trace_to_optimizer: bool(
    true,
    "Include Codex trace summaries in analyst prompts when the target is codex_exec",
  ),
  ...settingsOf("openai_chat"),
  ...settingsOf("qwen_chat"),
  ...settingsOf("minimax_chat"),
  ...settingsOf("openai_compatible"),
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
