import { openaiChat } from "./openai-chat.ts";
import { openaiCompatible } from "./openai-compatible.ts";
import { qwenChat } from "./qwen-chat.ts";
import { minimaxChat } from "./minimax-chat.ts";
import { claudeChat } from "./claude-chat.ts";
import { copilotChat } from "./copilot-chat.ts";
import { codexExec } from "./codex-exec.ts";
import { claudeCodeExec } from "./claude-code-exec.ts";
import { cursorExec } from "./cursor-exec.ts";
import { copilotExec } from "./copilot-exec.ts";
import { cursorChat } from "./cursor-chat.ts";
import { piChat } from "./pi-chat.ts";
import { opencodeChat } from "./opencode-chat.ts";
import { sim } from "./sim.ts";

/**
 * Every role backend: one definition per backend, in its own file in this folder, registered here
 * once. The order is the order of suggestions. The name table, the role and cost lists, the
 * `model.*` keys of the schema and the built-in prices are derived from this list
 * (src/config/backend-names.ts); test/backends/declared.test.ts checks the set is complete.
 */
export const DEFINITIONS = [
  openaiChat,
  openaiCompatible,
  qwenChat,
  minimaxChat,
  claudeChat,
  copilotChat,
  codexExec,
  claudeCodeExec,
  cursorExec,
  copilotExec,
  cursorChat,
  piChat,
  opencodeChat,
  sim,
] as const;
