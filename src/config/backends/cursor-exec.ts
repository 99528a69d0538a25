import { defineBackend } from "./define.ts";

/** The Cursor agent CLI running whole tasks as the target. */
export const cursorExec = defineBackend({ name: "cursor_exec", runs: "tasks", usage: "tokens" });
