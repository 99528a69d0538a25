import * as v from "valibot";
import { str, strOrNum } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** MiniMax's OpenAI-compatible API (spec §7.5); built in src/backends/presets.ts. */
export const minimaxChat = defineBackend({
  name: "minimax_chat",
  runs: "chat",
  usage: "tokens",
  settings: {
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
  },
});
