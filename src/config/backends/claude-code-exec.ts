import * as v from "valibot";
import { nonNegInt, str } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** The Claude Code CLI running whole tasks as the target. */
export const claudeCodeExec = defineBackend({
  name: "claude_code_exec",
  runs: "tasks",
  usage: "own_cost",
  defaultModel: "claude-sonnet-5-5",
  settings: {
    claude_code_exec_path: str("claude", "Claude Code binary for the exec harness"),
    claude_code_exec_profile: str("", "Claude Code profile name"),
    claude_code_exec_use_sdk: v.optional(
      v.pipe(
        v.nullable(v.union([v.string(), v.boolean()], "expected auto, sdk, cli or a boolean")),
        v.description("auto, sdk or cli; there is no SDK in this build, so the CLI is used (sdk warns)"),
      ),
      "auto",
    ),
    claude_code_exec_effort: str("medium", "low, medium, high, max (xhigh → max; none/off/'' → omitted)"),
    claude_code_exec_max_thinking_tokens: nonNegInt(16384, "Max thinking tokens; 0 → not passed"),
  },
});
