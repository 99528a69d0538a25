import { UnsupportedError } from "../lib/index.ts";
import type { BackendConfig } from "./settings.ts";

// sleep.md §5.9 aliases → the model layer's role backend that serves them.
const SLEEP_TO_LAYER: Record<string, string> = {
  claude: "claude_chat",
  anthropic: "claude_chat",
  claude_cli: "claude_chat",
  claude_code: "claude_chat",
  codex: "codex_exec",
  codex_cli: "codex_exec",
  openai_codex: "codex_exec",
  azure: "openai_chat",
  azure_openai: "openai_chat",
  aoai: "openai_chat",
  copilot: "copilot_chat",
  github_copilot: "copilot_chat",
  copilot_cli: "copilot_chat",
  gh_copilot: "copilot_chat",
  openai_compatible: "openai_compatible",
  compat: "openai_compatible",
  cursor: "cursor_chat",
  cursor_agent: "cursor_chat",
  cursor_cli: "cursor_chat",
  pi: "pi_chat",
  pi_cli: "pi_chat",
  pi_coding_agent: "pi_chat",
  opencode: "opencode_chat",
  opencode_cli: "opencode_chat",
  sim: "sim",
};

/**
 * A model-layer config for a Sleep backend name (sleep.md §5.9), so Sleep gets retries, the
 * persistent call cache and cost accounting. `extra` carries model.* keys (endpoints, auth mode…).
 * cursor, pi and opencode run their CLIs headless as chat models (src/backends/cli/agent-chat.ts).
 */
export function sleepModelConfig(
  backend: string,
  o: { model?: string; optimizerModel?: string; extra?: Record<string, unknown> } = {},
): BackendConfig {
  const name = backend.trim().toLowerCase().replaceAll("-", "_");
  const layer = SLEEP_TO_LAYER[name];
  if (!layer) {
    throw new UnsupportedError(`sleep backend ${JSON.stringify(backend)} is not available through the model layer`, {
      hint: "use claude, codex, copilot, cursor, pi, opencode, azure_openai, openai_compatible, or --backend mock / handoff",
    });
  }
  const model: Record<string, unknown> = { ...o.extra, backend: layer, optimizer_backend: layer, target_backend: layer };
  if (o.model) model.target = o.model;
  if (o.optimizerModel ?? o.model) model.optimizer = o.optimizerModel ?? o.model;
  return { model };
}
