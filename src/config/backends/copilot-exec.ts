import { defineBackend } from "./define.ts";

/** The Copilot CLI running whole tasks as the target; it reports no token usage. */
export const copilotExec = defineBackend({ name: "copilot_exec", runs: "tasks", usage: "none" });
