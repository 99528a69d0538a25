import * as v from "valibot";
import { str, strOrNum, perRole } from "../fields.ts";
import { defineBackend } from "./define.ts";

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

/** A Qwen model behind vLLM/SGLang (spec §7.5); built in src/backends/presets.ts. */
export const qwenChat = defineBackend({
  name: "qwen_chat",
  runs: "chat",
  usage: "tokens",
  defaultModel: "Qwen/Qwen3.5-4B",
  settings: {
    ...perRole(qwenKeys),
  },
});
