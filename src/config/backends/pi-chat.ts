import { defineBackend } from "./define.ts";

/** The Pi coding agent CLI answering as a chat model (a Sleep backend); no token usage. */
export const piChat = defineBackend({ name: "pi_chat", runs: "chat", usage: "none" });
