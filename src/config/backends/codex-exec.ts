import * as v from "valibot";
import { nullableBool, str } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** The Codex CLI: a chat model, and a harness that runs whole tasks as the target. */
export const codexExec = defineBackend({
  name: "codex_exec",
  runs: "chat+tasks",
  usage: "tokens",
  settings: {
    codex_exec_path: str("", "Codex binary; empty → CODEX_EXEC_PATH/CODEX_CLI_BIN/CODEX_PATH → codex"),
    codex_exec_sandbox: str(
      "",
      "Codex sandbox: read-only, workspace-write, danger-full-access; empty → workspace-write",
    ),
    codex_exec_profile: str("", "Codex profile"),
    codex_exec_reasoning_effort: str("", "Codex model_reasoning_effort; empty → not sent"),
    codex_exec_use_sdk: v.optional(
      v.pipe(
        v.nullable(v.union([v.string(), v.boolean()], "expected auto, sdk, cli or a boolean")),
        v.description("auto, sdk or cli; there is no SDK in this build, so the CLI is used (sdk warns)"),
      ),
      null,
    ),
    codex_exec_network_access: nullableBool("Network access in the workspace-write sandbox"),
    codex_exec_web_search: nullableBool("Codex web search (live when true)"),
    codex_exec_approval_policy: str("", "Codex approval policy; empty → never"),
    codex_exec_full_auto: nullableBool("Deprecated and ignored (warns)"),
  },
});
