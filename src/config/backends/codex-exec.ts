import { defineBackend } from "./define.ts";

/** The Codex CLI: a chat model, and a harness that runs whole tasks as the target. */
export const codexExec = defineBackend({ name: "codex_exec", runs: "chat+tasks", usage: "tokens" });
