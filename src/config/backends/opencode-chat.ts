import { defineBackend } from "./define.ts";

/** The OpenCode CLI answering as a chat model (a Sleep backend); no token usage. */
export const opencodeChat = defineBackend({ name: "opencode_chat", runs: "chat", usage: "none" });
