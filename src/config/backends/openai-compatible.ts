import { bool, nullableNum, nullablePosInt, str, perRole } from "../fields.ts";
import { defineBackend } from "./define.ts";

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

/** Any OpenAI Chat Completions server (spec §7.4); built in src/backends/presets.ts. */
export const openaiCompatible = defineBackend({
  name: "openai_compatible",
  runs: "chat",
  usage: "tokens",
  settings: {
    ...perRole(compatKeys),
  },
});
