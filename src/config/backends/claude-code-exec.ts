import { defineBackend } from "./define.ts";

/** The Claude Code CLI running whole tasks as the target. */
export const claudeCodeExec = defineBackend({ name: "claude_code_exec", runs: "tasks", usage: "own_cost" });
