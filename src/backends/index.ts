/**
 * The model layer: every backend behind one ModelClient, with a limiter per role and endpoint,
 * retries (src/backends/retry.ts), a persistent call cache, budget caps and a call ledger.
 *
 *   const loaded = loadConfig({ config, set });
 *   const client = await createModelClient(loaded.config, { env: loaded.environ, noCache, maxCostUsd, onCall });
 *   client.resolved.auto        // set when model.backend=auto chose for the user (say so on the first line)
 *   client.info.target          // { backend, model, endpoint, exec }
 *   await client.chat("target", { stage: "rollout", messages, sampleIndex });
 *   await client.chatJson("optimizer", { stage: "analyst", messages }, Schema);  // never throws for bad JSON
 *   client.taskRunner()         // the exec harness when the target is an agent CLI
 *   client.ledger.summary()     // totals, by_stage, by_role, dropped; client.snapshot() / budgetExceeded()
 *   await client.close();
 *
 * Errors: ConfigError (exit 2) at start-up for bad roles/settings; BackendError for a systemic
 * failure of a call (auth/not_found/bad_request fail fast, others after the retries); BudgetError
 * before a paid call once a cap is reached. A cache hit is never blocked by a cap and costs 0.
 */
import { backendUsage } from "../config/index.ts";
import type { Role } from "../engine/index.ts";
import { closest, ConfigError, log, skilloptCacheDir } from "../lib/index.ts";
import { openCallCache, type Store } from "../store/index.ts";
import { type BatchEvent, Batcher, type BatchMode } from "./batcher.ts";
import { type CallEvent, LayeredModelClient, type RoleBinding } from "./client.ts";
import { buildChatBackend, buildTaskRunner, cliRoleModel, execTimeoutMs } from "./factory.ts";
import { CallLedger } from "./ledger.ts";
import { loadUserPricing, parsePricing, PriceTable, userPricingPath } from "./pricing.ts";
import type { RetryPolicy } from "./retry.ts";
import { isExecHarness, type ResolvedRoles, resolveRoles } from "./roles.ts";
import { type BackendConfig, type EnvLookup, NO_ENV, roleWorkers, Settings } from "./settings.ts";
import type { ChatBackend } from "./types.ts";
import type { ContextWindow } from "./context-window.ts";

export type { BatchEvent, BatchMode } from "./batcher.ts";
export type { CallEvent } from "./client.ts";
export { cacheKey } from "./call-cache.ts";
export type { ContextWindow } from "./context-window.ts";

export { probeCli } from "./exec/probe.ts";

export { Limiter } from "./limiter.ts";
export { builtinPrices, loadUserPricing, parsePricing, PriceTable, userPricingPath } from "./pricing.ts";
export { backoffDelay, parseRetryAfter, type RetryPolicy, withRetry } from "./retry.ts";
export { type BackendName, isExecHarness, type ResolvedRoles, resolveRoles } from "./roles.ts";
export { type BackendConfig, type EnvLookup, Settings } from "./settings.ts";
export { sleepModelConfig } from "./sleep.ts";
export type { ChatBackend, RawCompletion } from "./types.ts";
export { SIM_MODEL, simAnswer, type SimOptions, simOptions } from "./sim/index.ts";

export interface ModelClientOptions {
  /** Environment: the config module's snapshot (`LoadedConfig.environ`) or a lookup function; default none. */
  env?: EnvLookup | Readonly<Record<string, string | undefined>>;
  /** Do not read or write the call cache (`--no-cache`). */
  noCache?: boolean;
  /** Directory of the call cache; default `model.cache_dir`, then $SKILLOPT_CACHE_DIR / the XDG cache. */
  cacheDir?: string;
  /** Budget caps checked before every paid call (override model.max_cost_usd / model.max_calls). */
  maxCostUsd?: number;
  maxCalls?: number;
  /** Streamed accounting events (one per call, per retry, per dropped structured result). */
  onCall?: (event: CallEvent) => void;
  /** Persist the call ledger into this store (e.g. the run's store) under `runId`. */
  ledgerStore?: Store;
  runId?: string;
  /**
   * Roles whose model is a shipped placeholder nobody chose (`LoadedConfig.placeholderModels`): each
   * backend replaces it with a model it can call (a Claude model for claude, the CLI's default for
   * copilot_exec, …). Models the user chose are always passed unchanged.
   */
  placeholderModels?: readonly Role[];
  /** How the user gave `maxCostUsd`, for messages (default `--max-cost`). */
  maxCostFrom?: string;
  /**
   * A money cap the caller enforces itself (e.g. `sleep.max_cost_usd_per_night`): every role's cost
   * must then be knowable, as for `maxCostUsd`, or createModelClient refuses (ConfigError, exit 2).
   */
  requirePricesFor?: string;
  /** Build only these roles (e.g. eval needs only the target); default both. */
  roles?: Role[];
  /** Concurrency per role (default from the config's worker keys). */
  concurrency?: Partial<Record<Role, number>>;
  /** Retry policy overrides (tests and benches shorten the backoff). */
  retry?: Partial<Omit<RetryPolicy, "attempts">> & { attempts?: Partial<Record<Role, number>> };
  /**
   * Tests only: accept a loopback http server as an Azure OpenAI host for Azure AD / managed-identity
   * tokens (the CLI never sets it; everywhere else such tokens go only to https Azure OpenAI hosts).
   */
  azureAdLoopbackForTests?: boolean;
  /** Use these chat backends instead of the configured ones (benches, integration tests). */
  backends?: Partial<Record<Role, ChatBackend>>;
  /** Progress of provider batches (model.batch): submitted, status changes, settled, fallbacks. */
  onBatch?: (event: BatchEvent) => void;
}

/** What a role resolved to, for the CLI's first line and `--json` output. */
interface RoleInfo {
  backend: string;
  model: string | undefined;
  endpoint: string | undefined;
  exec: boolean;
  /** The agent CLI this role runs (name on PATH or path), for the start-up check that it answers `--version`. */
  cli?: string;
}

/** The model layer as the CLI builds it: a ModelClient with accounting accessors. */
export interface SkilloptModelClient extends LayeredModelClient {
  readonly resolved: ResolvedRoles;
  /** Built-in prices, then the user pricing file, then model.pricing. */
  readonly prices: PriceTable;
  readonly info: Record<Role, RoleInfo | undefined>;
  /** model.batch per role as resolved (off for a role whose backend has no Batch API). */
  readonly batchModes: Record<Role, BatchMode>;
  /** The role's model's context window where its server tells it (never a paid call), else undefined. */
  contextWindow(role: Role): Promise<ContextWindow | undefined>;
  close(): Promise<void>;
}

/** Which backend and model each role resolved to, with the simulator named as such (the first line of a run or a night). */
export function describeRoles(client: SkilloptModelClient): string {
  const role = (r: "optimizer" | "target") => {
    const i = client.info[r];
    if (!i) return `${r}=(none)`;
    return i.backend === "sim"
      ? `${r}=sim (offline simulator — not a real model)`
      : `${r}=${i.model ?? "(the CLI's default model)"} (${i.backend})`;
  };
  const auto = client.resolved.auto
    ? ` [backend auto → ${client.resolved.auto.chose}: ${client.resolved.auto.reason}]`
    : "";
  return `${role("optimizer")} ${role("target")}${auto}`;
}

/** Build the model layer from the config: role resolution, backends, cache, limiter, ledger. */
export async function createModelClient(
  config: BackendConfig,
  opts: ModelClientOptions = {},
): Promise<SkilloptModelClient> {
  const env = opts.env;
  const lookup: EnvLookup = typeof env === "function" ? env : env ? (name) => env[name] : NO_ENV;
  const settings = new Settings(
    config,
    lookup,
    new Set(opts.placeholderModels ?? []),
    opts.azureAdLoopbackForTests === true,
  );
  const resolved = resolveRoles(settings);
  const pricing = parsePricing(config.model.pricing);
  if ("error" in pricing)
    throw new ConfigError(pricing.error, { issues: [{ path: "model.pricing", message: pricing.error }] });
  const userPrices = loadUserPricing(lookup);
  const prices = new PriceTable(userPrices.prices, pricing.prices);
  const wanted = new Set<Role>(opts.roles ?? ["optimizer", "target"]);
  const bindings = {} as Record<Role, RoleBinding>;
  const info: Record<Role, RoleInfo | undefined> = { optimizer: undefined, target: undefined };
  for (const role of ["optimizer", "target"] as const) {
    const name = resolved[role];
    const chat =
      opts.backends?.[role] ?? (wanted.has(role) ? await buildChatBackend(name, role, settings, config) : undefined);
    const runner =
      role === "target" && wanted.has(role) && !opts.backends?.target
        ? await buildTaskRunner(name, settings, prices)
        : undefined;
    bindings[role] = {
      chat,
      runner,
      name: chat?.name ?? name,
      built: wanted.has(role) || chat !== undefined,
      model: chat?.defaultModel ?? (isExecHarness(name) ? cliRoleModel(name, role, settings) : settings.model(role)),
      timeoutMs: execTimeoutMs(settings),
      concurrency: opts.concurrency?.[role] ?? roleWorkers(settings, role),
    };
    if (wanted.has(role) || chat) {
      const cli = (runner as { bin?: string } | undefined)?.bin ?? chat?.bin;
      info[role] = {
        backend: chat?.name ?? name,
        model: bindings[role].model,
        endpoint: chat?.endpoint,
        exec: runner !== undefined,
        ...(cli ? { cli } : {}),
      };
    }
  }
  const capCost = opts.maxCostUsd ?? positive(config.model.max_cost_usd, "model.max_cost_usd");
  const capName =
    opts.maxCostUsd !== undefined
      ? (opts.maxCostFrom ?? "--max-cost")
      : capCost !== undefined
        ? "model.max_cost_usd"
        : opts.requirePricesFor;
  if (capName !== undefined) {
    for (const role of ["optimizer", "target"] as const) {
      if (info[role] && !opts.backends?.[role])
        refuseUncosted(
          capName,
          role,
          info[role],
          prices,
          userPrices.path ?? userPricingPath(lookup)?.path,
          opts.requirePricesFor === capName,
        );
    }
  }
  const capCalls = opts.maxCalls ?? positive(config.model.max_calls, "model.max_calls");
  const cacheDir =
    opts.cacheDir ??
    (typeof config.model.cache_dir === "string" && config.model.cache_dir.trim()
      ? config.model.cache_dir
      : skilloptCacheDir());
  const modes = batchModes(config, bindings, opts.noCache === true);
  // SkillOpt's own cache folders are tightened to 0700; a model.cache_dir the user named is only created so.
  const ownCacheDir =
    opts.cacheDir !== undefined || !(typeof config.model.cache_dir === "string" && config.model.cache_dir.trim());
  const cache = opts.noCache ? undefined : openCallCache(cacheDir, { tightenDir: ownCacheDir });
  const ledger = new CallLedger(opts.ledgerStore, opts.runId ?? "default");
  let self: LayeredModelClient | undefined;
  const batcher =
    cache && (modes.optimizer !== "off" || modes.target !== "off")
      ? new Batcher({
          store: cache,
          modes,
          fallback: config.model.batch_fallback === "stop" ? "stop" : "live",
          required: config.model.batch_required === true,
          pollMs: (typeof config.model.batch_poll_seconds === "number" ? config.model.batch_poll_seconds : 15) * 1000,
          prices,
          maxCostUsd: capCost,
          maxCalls: capCalls,
          spent: () => ledger.spentUsd,
          paidCalls: () => self?.paidCalls ?? 0,
          cacheAnswer: (key, backend, endpoint, model, completion) =>
            self?.cacheBatchAnswer(key, backend, endpoint, model, completion),
          onEvent: opts.onBatch,
        })
      : undefined;
  const client = new LayeredModelClient({
    batcher,
    roles: bindings,
    prices,
    cache,
    ledger,
    maxCostUsd: capCost,
    maxCalls: capCalls,
    onCall: opts.onCall,
    ...(opts.retry ? { retry: opts.retry } : {}),
  }) as SkilloptModelClient;
  self = client;
  Object.defineProperties(client, {
    resolved: { value: resolved },
    prices: { value: prices },
    info: { value: info },
    batchModes: { value: modes },
    contextWindow: {
      value: async (role: Role) => {
        const chat = bindings[role].chat;
        const model = info[role]?.model;
        return chat?.contextWindow && model ? chat.contextWindow(model) : undefined;
      },
    },
    close: {
      value: async () => {
        batcher?.close();
        for (const b of [bindings.optimizer.chat, bindings.target.chat]) await b?.close?.();
        cache?.close();
      },
    },
  });
  return client;
}

/**
 * model.batch per role (`<role>_batch` wins over `batch`). A role whose backend has no Batch API is
 * called live with one warning, or refused (exit 2) under model.batch_required; batch answers land
 * in the call cache, so --no-cache cannot be combined with a batch.
 */
function batchModes(
  config: BackendConfig,
  bindings: Record<Role, RoleBinding>,
  noCache: boolean,
): Record<Role, BatchMode> {
  const modes: Record<Role, BatchMode> = { optimizer: "off", target: "off" };
  const asMode = (v: unknown): BatchMode | undefined => (v === "off" || v === "eval" || v === "all" ? v : undefined);
  for (const role of ["optimizer", "target"] as const) {
    const from = asMode(config.model[`${role}_batch`]) ? `model.${role}_batch` : "model.batch";
    const mode = asMode(config.model[`${role}_batch`]) ?? asMode(config.model.batch) ?? "off";
    const binding = bindings[role];
    if (mode === "off" || !binding.built) continue;
    if (noCache) {
      throw new ConfigError(`${from}=${mode}: batch answers go into the call cache, which --no-cache turns off`, {
        hint: `drop --no-cache, or set ${from}=off`,
        issues: [{ path: from, message: "needs the call cache" }],
      });
    }
    if (!binding.chat?.batch) {
      const what = `${from}=${mode}: the ${role} backend ${binding.name} has no Batch API (batches go to openai_compatible endpoints and Azure OpenAI)`;
      if (config.model.batch_required === true)
        throw new ConfigError(what, {
          hint: `set ${from}=off, or model.batch_required=false to call it live`,
          issues: [{ path: from, message: "no Batch API" }],
        });
      log.withTag("model").warn(`${what}; calling it live`);
      continue;
    }
    modes[role] = mode;
  }
  return modes;
}

/** True when a backend's calls need no price: free (sim) or costed by the backend itself (claude). */
const needsNoPrice = (backend: string) => ["free", "own_cost"].includes(backendUsage(backend) ?? "");

/**
 * Roles whose calls will have no known cost, in words for a start-up warning: a run without a money
 * cap still runs, but a mistyped model name would otherwise only show as "cost unknown" at the end.
 */
export function costUnknownWarnings(client: Pick<SkilloptModelClient, "info" | "prices">): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const role of ["optimizer", "target"] as const) {
    const info = client.info[role];
    if (!info || needsNoPrice(info.backend)) continue;
    const key = `${info.backend}/${info.model}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (backendUsage(info.backend) === "none") {
      out.push(`the ${role} backend ${info.backend} reports no token usage: this run's cost will read "unknown"`);
      continue;
    }
    if (!info.model || client.prices.lookup(info.model)) continue;
    const guess = closest(info.model, client.prices.names());
    out.push(
      `no price is known for the ${role} model ${JSON.stringify(info.model)} (${info.backend})${guess ? ` (did you mean "${guess}"?)` : ""}: \
this run's cost will read "unknown"; give its price with --set model.pricing.${info.model}.input_per_mtok=… and output_per_mtok=…, or check the \
model name`,
    );
  }
  return out;
}

/**
 * A money cap is only a cap when every call it must count has a known cost: refuse to start
 * (ConfigError, exit 2) rather than run uncapped, naming the model and how to give it a price.
 */
function refuseUncosted(
  capName: string,
  role: Role,
  info: RoleInfo,
  prices: PriceTable,
  pricingFile: string | undefined,
  fileOnly: boolean,
): void {
  if (needsNoPrice(info.backend)) return;
  if (backendUsage(info.backend) === "none") {
    throw new ConfigError(
      `${capName}: the ${role} backend ${info.backend} reports no token usage, so a money cap cannot be enforced on it`,
      { key: capName, hint: "cap the number of calls instead (model.max_calls), or use another backend for that role" },
    );
  }
  if (info.model && prices.lookup(info.model)) return;
  const model = info.model ?? "(the CLI's default model)";
  const name = info.model ?? "<model>";
  throw new ConfigError(
    `${capName}: no price is known for the ${role} model ${JSON.stringify(model)} (${info.backend}), so the money cap could not be enforced`,
    {
      hint: fileOnly
        ? `give its price in dollars per million tokens in the user pricing file ${pricingFile ?? "~/.config/skillopt/pricing.yaml"} (or the file \
$SKILLOPT_PRICING_FILE names): "${name}: {input_per_mtok: …, output_per_mtok: …}"; see docs/backends.md`
        : `give its price in dollars per million tokens: --set model.pricing.${name}.input_per_mtok=… --set model.pricing.${name}.output_per_mtok=… \
(or model.pricing in your config, or the user pricing file ${pricingFile ?? "~/.config/skillopt/pricing.yaml"}, or $SKILLOPT_PRICING_FILE); see \
docs/backends.md`,
      issues: [{ path: `model.pricing.${name}`, message: "price unknown while a money cap is set" }],
    },
  );
}

function positive(value: unknown, path: string): number | undefined {
  if (value === undefined || value === null || value === 0) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
    throw new ConfigError(`${path}: expected a positive number, got ${JSON.stringify(value)}`, {
      issues: [{ path, message: "expected a positive number" }],
    });
  }
  return value;
}
