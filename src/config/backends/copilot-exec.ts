import { nullableBool, str } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** The Copilot CLI running whole tasks as the target; it reports no token usage. */
export const copilotExec = defineBackend({
  name: "copilot_exec",
  runs: "tasks",
  usage: "none",
  defaultModel: null,
  settings: {
    copilot_exec_path: str("", "Copilot CLI binary; empty → COPILOT_EXEC_PATH → copilot"),
    copilot_exec_home: str("", "COPILOT_HOME for child processes"),
    copilot_exec_allow_all_tools: nullableBool("Pass --allow-all-tools to copilot_exec (file-edit rollouts)"),
  },
});
