import { defineBackend } from "./define.ts";

/** The Claude Code CLI answering as a chat model; it reports each call's dollar cost itself. */
export const claudeChat = defineBackend({
  name: "claude_chat",
  runs: "chat",
  usage: "own_cost",
  defaultModel: "claude-sonnet-5-5",
});
