import { roleBackend, SLEEP_BACKENDS, sleepBackend } from "../config/index.ts";
import { UnsupportedError } from "../lib/index.ts";
import type { BackendConfig } from "./settings.ts";

/**
 * A model-layer config for a Sleep backend name (sleep.md §5.9), so Sleep gets retries, the
 * persistent call cache and cost accounting. `extra` carries model.* keys (endpoints, auth mode…).
 * cursor, pi and opencode run their CLIs headless as chat models (src/backends/cli/agent-chat.ts).
 */
export function sleepModelConfig(
  backend: string,
  o: { model?: string; optimizerModel?: string; extra?: Record<string, unknown> } = {},
): BackendConfig {
  // A role backend name (the simulator, or a name the caller already mapped) serves as itself.
  const named = sleepBackend(backend);
  const layer = named ? SLEEP_BACKENDS[named] : roleBackend(backend);
  if (!layer) {
    throw new UnsupportedError(
      `sleep backend ${JSON.stringify(backend)} is not available through the model layer`,
      { feature: "sleep backend", backend },
      {
        hint: "use claude, codex, copilot, cursor, pi, opencode, azure_openai, openai_compatible, or --backend mock / handoff",
      },
    );
  }
  const model: Record<string, unknown> = {
    ...o.extra,
    backend: layer,
    optimizer_backend: layer,
    target_backend: layer,
  };
  if (o.model) model.target = o.model;
  if (o.optimizerModel ?? o.model) model.optimizer = o.optimizerModel ?? o.model;
  return { model };
}
