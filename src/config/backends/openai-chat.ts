import { defineBackend } from "./define.ts";

/** Azure OpenAI (or plain OpenAI in the openai_compatible auth mode), spec §7.3; built in src/backends/presets.ts. */
export const openaiChat = defineBackend({ name: "openai_chat", runs: "chat", usage: "tokens" });
