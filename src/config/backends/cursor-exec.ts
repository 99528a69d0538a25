import { str } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** The Cursor agent CLI running whole tasks as the target. */
export const cursorExec = defineBackend({
  name: "cursor_exec",
  runs: "tasks",
  usage: "tokens",
  defaultModel: "composer-2.5",
  settings: {
    cursor_exec_path: str("", "Cursor agent binary; empty → CURSOR_EXEC_PATH → cursor-agent"),
    cursor_exec_sandbox: str("", "enabled (default) or disabled"),
  },
});
