import { defineBackend } from "./define.ts";

/** MiniMax's OpenAI-compatible API (spec §7.5); built in src/backends/presets.ts. */
export const minimaxChat = defineBackend({ name: "minimax_chat", runs: "chat", usage: "tokens" });
