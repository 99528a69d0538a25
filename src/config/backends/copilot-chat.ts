import { nullablePosInt, str } from "../fields.ts";
import { defineBackend } from "./define.ts";

/** The GitHub Copilot CLI answering as a chat model; it reports no token usage. */
export const copilotChat = defineBackend({
  name: "copilot_chat",
  runs: "chat",
  usage: "none",
  settings: {
    copilot_chat_optimizer_model: str("", "--model for copilot_chat optimizer calls; empty = CLI default"),
    copilot_chat_target_model: str("", "--model for copilot_chat target calls; empty = CLI default"),
    copilot_chat_timeout: nullablePosInt("Per-call timeout (s) of copilot_chat; null → 600"),
  },
});
