import { join } from "node:path";
import { type BatchEvent, createModelClient, describeRoles, sleepModelConfig } from "../../backends/index.ts";
import { UnsupportedError } from "../../lib/index.ts";
import type { ConnectModels, SleepConfig } from "../../sleep/index.ts";

type Env = Readonly<Record<string, string | undefined>>;

/** The layer's backend name for a Sleep backend (spec §5.9). */
const layerName = (b: string) => (b === "openai" ? "openai_compatible" : b);

/** The model layer's extra keys a Sleep config implies: endpoint, key, executables, batching (sleep.md §5.9, §2.1, §9.3). */
function layerExtra(cfg: SleepConfig, env: Env): Record<string, unknown> {
  // Sleep's own azure_openai request shape (fixed token budget, opt-in extra body), sleep.md §5.9.
  const extra: Record<string, unknown> = { sleep_requests: true };
  if (cfg.azure_endpoint) {
    extra.openai_compatible_base_url = cfg.azure_endpoint;
    extra.azure_openai_endpoint = cfg.azure_endpoint;
  }
  // Executables (spec §2.1 / §9.3): the flag or config key, then the SKILLOPT_SLEEP_* variable.
  const exec = {
    codex_exec_path: cfg.codex_path || env.SKILLOPT_SLEEP_CODEX_PATH,
    copilot_exec_path: env.SKILLOPT_SLEEP_COPILOT_PATH,
    cursor_exec_path: cfg.cursor_path || env.SKILLOPT_SLEEP_CURSOR_PATH,
    pi_exec_path: cfg.pi_path || env.SKILLOPT_SLEEP_PI_PATH,
    opencode_exec_path: cfg.opencode_path || env.SKILLOPT_SLEEP_OPENCODE_PATH,
  };
  for (const [k, path] of Object.entries(exec)) if (path) extra[k] = path;
  if (cfg.api_key_env) {
    const key = env[cfg.api_key_env];
    if (!key)
      throw new UnsupportedError(`api_key_env names ${cfg.api_key_env}, which is not set in the environment`, {
        feature: "api key",
        needs: `${cfg.api_key_env} set in the environment`,
        key: "sleep.api_key_env",
        value: cfg.api_key_env,
      });
    extra.openai_compatible_api_key = key;
  }
  // A night is an evaluation nobody waits on: model.batch=eval sends its replays through a batch.
  if (cfg.batch) Object.assign(extra, { batch: "eval", batch_poll_seconds: cfg.batch_poll_seconds });
  return extra;
}

/**
 * The model-layer port a provider night is given (src/sleep/ports.ts): one client for both roles,
 * built from the Sleep config with retries, the call cache (in the state dir, so a night writes
 * nothing outside it and the project's staging folder) and cost accounting.
 */
export function connectModels(onBatch?: (event: BatchEvent) => void): ConnectModels {
  return async (roles, cfg, opts) => {
    const extra = layerExtra(cfg, opts.env);
    const t = sleepModelConfig(layerName(roles.target.backend), { model: roles.target.model, extra });
    const o = sleepModelConfig(layerName(roles.optimizer.backend), { model: roles.optimizer.model, extra });
    const config = {
      model: {
        ...t.model,
        optimizer_backend: o.model.optimizer_backend,
        ...(o.model.optimizer ? { optimizer: o.model.optimizer } : {}),
      },
    };
    const client = await createModelClient(config, {
      env: opts.env,
      concurrency: { target: cfg.workers, optimizer: cfg.workers },
      ...(onBatch ? { onBatch } : {}),
      ...(opts.stateDir ? { cacheDir: join(opts.stateDir, "cache") } : {}),
      // A money ceiling the night enforces itself: refuse to start when a role's cost is unknowable.
      ...(cfg.max_cost_usd_per_night !== null && cfg.max_cost_usd_per_night !== undefined
        ? { requirePricesFor: "max_cost_usd_per_night" }
        : {}),
    });
    return { client, describe: describeRoles(client) };
  };
}
