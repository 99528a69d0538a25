import { defineBackend } from "./define.ts";

/** The GitHub Copilot CLI answering as a chat model; it reports no token usage. */
export const copilotChat = defineBackend({ name: "copilot_chat", runs: "chat", usage: "none" });
