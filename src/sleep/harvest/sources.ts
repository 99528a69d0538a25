import { claudeSource } from "./claude.ts";
import { codexSource } from "./codex.ts";
import { copilotCliSource } from "./copilot-cli.ts";
import { copilotVscodeSource } from "./copilot-vscode.ts";
import { cursorSource } from "./cursor.ts";
import { devinSource } from "./devin.ts";
import { opencodeSource } from "./opencode.ts";
import { piSource } from "./pi.ts";
import type { SessionSource } from "./source.ts";
import type { SourceName } from "./types.ts";

/** Every harvester, by `--source` name. */
export const SOURCES: Record<SourceName, SessionSource> = {
  claude: claudeSource,
  codex: codexSource,
  copilot: copilotVscodeSource,
  copilot_cli: copilotCliSource,
  cursor: cursorSource,
  devin: devinSource,
  opencode: opencodeSource,
  pi: piSource,
};
