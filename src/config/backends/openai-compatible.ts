import { defineBackend } from "./define.ts";

/** Any OpenAI Chat Completions server (spec §7.4); built in src/backends/presets.ts. */
export const openaiCompatible = defineBackend({ name: "openai_compatible", runs: "chat", usage: "tokens" });
