import { defineBackend } from "./define.ts";

/** A Qwen model behind vLLM/SGLang (spec §7.5); built in src/backends/presets.ts. */
export const qwenChat = defineBackend({ name: "qwen_chat", runs: "chat", usage: "tokens" });
