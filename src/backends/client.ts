import type * as v from "valibot";
import type {
  CallAccounting,
  CallTotals,
  ChatRequest,
  ChatResponse,
  JsonResult,
  ModelClient,
  Role,
  RoundPurpose,
  RoundTask,
  TaskRunner,
  Usage,
} from "../engine/index.ts";
import {
  BackendError,
  type BackendErrorKind,
  BudgetError,
  type BudgetFacts,
  endpointHost,
  errorMessage,
  InternalError,
  log,
  noteTaskCall,
  redactText,
  SkilloptError,
  UnsupportedError,
} from "../lib/index.ts";
import { getCachedCall, putCachedCall, type Store } from "../store/index.ts";
import { cacheKey, type PaidMark, type StoredResponse } from "./call-cache.ts";
import type { Batcher } from "./batcher.ts";
import type { CallLedger, CallRecord } from "./ledger.ts";
import { Limiter } from "./limiter.ts";
import { notify } from "./listener.ts";
import type { PriceTable } from "./pricing.ts";
import { toJsonSchema } from "./json-schema.ts";
import { askJson } from "./structured.ts";
import { defaultPolicy, OPTIMIZER_ATTEMPTS, ROLLOUT_ATTEMPTS, type RetryPolicy, withRetry } from "./retry.ts";
import type { ChatBackend, RawCompletion } from "./types.ts";

/** A streamed accounting event: one per logical call (its ledger row without endpoint and key), plus one per retry. */
export type CallEvent =
  | ({ type: "call" } & Omit<CallRecord, "endpoint" | "key">)
  | {
      type: "retry";
      role: Role;
      stage: string;
      backend: string;
      model: string;
      attempt: number;
      delayMs: number;
      /** The failure that is retried: its kind and HTTP status (null when it has none), and its message (redacted). */
      kind: BackendErrorKind | null;
      status: number | null;
      error: string;
    }
  | { type: "dropped"; role: Role; stage: string; reason: string };

export interface RoleBinding {
  /** The chat backend, or undefined when the role is an exec-only harness. */
  chat: ChatBackend | undefined;
  runner: TaskRunner | undefined;
  /** Backend name as resolved (e.g. claude_code_exec). */
  name: string;
  /** False when the caller asked not to set this role up (createModelClient `roles`). */
  built: boolean;
  /** The role's model as configured (for ledger rows of exec runs). */
  model?: string | undefined;
  /** Default per-attempt timeout when the backend has none of its own. */
  timeoutMs: number;
  concurrency: number;
}

interface ClientCore {
  roles: Record<Role, RoleBinding>;
  prices: PriceTable;
  cache: Store | undefined;
  ledger: CallLedger;
  maxCostUsd?: number | undefined;
  maxCalls?: number | undefined;
  onCall?: ((event: CallEvent) => void) | undefined;
  retry?: Partial<Omit<RetryPolicy, "attempts">> & { attempts?: Partial<Record<Role, number>> };
  now?: () => number;
  /** The Batch API path (model.batch), when some role uses it. */
  batcher?: Batcher | undefined;
}

/** One logical chat call as the client handles it: the role asking, its backend, the request and its cache key. */
interface Call {
  role: Role;
  backend: ChatBackend;
  req: ChatRequest & { model: string };
  key: string;
}

const ZERO: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 };

/** A target call as the deployed cost of its task counts it: tokens undefined when none were reported. */
interface TaskCall {
  tokens: number | undefined;
  costUsd: number | null;
}

/** A cache entry's usage: prompt and completion tokens, and the provider's own charge when it reported one. */
function storedUsage(value: RawCompletion): NonNullable<StoredResponse["usage"]> {
  const { promptTokens: p, completionTokens: c } = value.usage;
  return value.providerCostUsd === undefined ? [p, c] : [p, c, value.providerCostUsd];
}

/** Prompt + completion tokens of a usage, or undefined when it counts none (nothing was reported). */
function reportedTokens(u: Usage): number | undefined {
  const n = u.promptTokens + u.completionTokens;
  return n > 0 ? n : undefined;
}
const COMPLETE = new Set<ChatResponse["finishReason"]>(["stop", "tool_calls", "unknown"]);

/** The shared layer over the role backends: limits, retries, cache, budget, ledger, JSON. */
export class LayeredModelClient implements ModelClient, CallAccounting {
  private readonly limiters = new Map<string, Limiter>();
  private readonly inflight = new Map<string, Promise<ChatResponse>>();
  /** When this process asked for each call waiting on a provider batch (the answer's paid mark has its latency). */
  private readonly batchAsked = new Map<string, number>();
  private paidStarted: number;
  private readonly warnedUnknownPrice = new Set<string>();
  private accountedRunner: TaskRunner | undefined;

  constructor(private readonly core: ClientCore) {
    this.paidStarted = core.ledger.paid;
  }

  get ledger(): CallLedger {
    return this.core.ledger;
  }

  /** Totals for the engine's step records (cost null when some price is unknown). */
  snapshot(): CallTotals {
    const s = this.core.ledger.summary();
    const by_stage: CallTotals["by_stage"] = {};
    for (const [name, t] of Object.entries(s.by_stage)) {
      by_stage[name] = {
        calls: t.calls,
        cached: t.cached,
        prompt_tokens: t.prompt_tokens,
        completion_tokens: t.completion_tokens,
        cost_usd: t.cost_known ? t.cost_usd : null,
      };
    }
    return {
      calls: s.calls,
      cached: s.cached,
      prompt_tokens: s.tokens.prompt,
      completion_tokens: s.tokens.completion,
      cost_usd: s.cost_known ? s.cost_usd : null,
      by_stage,
    };
  }

  /** Why the next step should not start (a budget cap is reached), or undefined. */
  budgetExceeded(): BudgetFacts | undefined {
    const { maxCalls, maxCostUsd, ledger } = this.core;
    const at = { kind: "step_boundary" } as const;
    if (maxCalls !== undefined && this.paidStarted >= maxCalls)
      return { limit: "calls", spent: this.paidStarted, cap: maxCalls, at };
    if (maxCostUsd !== undefined && ledger.spentUsd >= maxCostUsd)
      return { limit: "cost", spent: ledger.spentUsd, cap: maxCostUsd, at };
    return undefined;
  }

  /** Limiter of a role and endpoint (exposed for tests and the bench). */
  limiter(role: Role, endpoint: string): Limiter {
    const id = `${role}|${endpoint}`;
    let l = this.limiters.get(id);
    if (!l) {
      l = new Limiter(this.core.roles[role].concurrency);
      this.limiters.set(id, l);
    }
    return l;
  }

  /**
   * The target's exec harness, wrapped so each task run is bounded by the target limiter, checked
   * against the budget (BudgetError before a run) and recorded in the ledger under stage "rollout".
   * Task runs are not cached: a run has no sample index and its workspace effects are part of it.
   */
  taskRunner(): TaskRunner | undefined {
    const binding = this.core.roles.target;
    const runner = binding.runner;
    if (!runner) return undefined;
    this.accountedRunner ??= {
      runTask: async (skill, task, opts = {}) => {
        this.checkBudget("rollout");
        this.paidStarted++;
        const endpoint = `exec:${binding.name}`;
        const started = this.now();
        const t = await this.limiter("target", endpoint).run(() => runner.runTask(skill, task, opts), opts.signal);
        const status = t.error ? "error" : "ok";
        const latencyMs = this.now() - started;
        noteTaskCall(t.error ? undefined : reportedTokens(t.usage), t.costUsd);
        this.account({
          role: "target",
          stage: "rollout",
          backend: binding.name,
          endpoint,
          model: binding.model ?? binding.name,
          key: null,
          cached: false,
          attempts: 1,
          status,
          usage: t.usage,
          costUsd: t.costUsd,
          latencyMs,
          ...(t.error ? { error: t.error } : {}),
        });
        return t;
      },
    };
    return this.accountedRunner;
  }

  /** Whether calls of rounds of this purpose go through a provider batch (model.batch). */
  batching(purpose: RoundPurpose): boolean {
    return this.core.batcher?.batching(purpose) ?? false;
  }

  /** Run one round of independent rollouts; with model.batch their calls are collected into one provider batch. */
  round<T>(purpose: RoundPurpose, fn: (task: RoundTask) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (!this.core.batcher) return fn((run) => run());
    return this.core.batcher.round(purpose, fn, signal);
  }

  /** Paid calls started so far (the batch path checks the call cap with it). */
  get paidCalls(): number {
    return this.paidStarted;
  }

  async chat(role: Role, request: ChatRequest, opts: { signal?: AbortSignal } = {}): Promise<ChatResponse> {
    const binding = this.core.roles[role];
    const backend = binding.chat;
    if (!backend) {
      if (!binding.built)
        throw new InternalError(`the ${role} role was not set up for this command (createModelClient roles option)`);
      throw new UnsupportedError(
        `the ${role} backend ${binding.name} runs whole tasks and is not a chat model`,
        { feature: "chat", backend: binding.name, role, needs: "a chat backend" },
        { hint: "benchmarks route exec targets through taskRunner(); judges need a chat backend" },
      );
    }
    const req = { ...request, model: request.model || backend.defaultModel };
    const key = cacheKey(backend, req);
    const call: Call = { role, backend, req, key };
    const started = this.now();
    if (this.core.cache) {
      const hit = getCachedCall(this.core.cache, key);
      if (hit !== undefined) {
        const stored = JSON.parse(hit) as StoredResponse;
        if (this.core.ledger.unrecorded(key, stored.paid)) return this.recovered(call, stored, stored.paid!);
        return this.served(call, stored, started, this.deployedOf(req.model, stored));
      }
      const pending = this.inflight.get(key);
      if (pending) {
        const shared = await (this.core.batcher ? this.core.batcher.hold(pending) : pending).catch((err: unknown) => {
          // Another caller's cancellation is not ours: make the call ourselves.
          if (err instanceof SkilloptError || opts.signal?.aborted) throw err;
          return undefined;
        });
        if (shared)
          return this.served(call, shared, started, { tokens: reportedTokens(shared.usage), costUsd: shared.costUsd });
        if (this.inflight.get(key) === pending) this.inflight.delete(key);
        return this.chat(role, request, opts);
      }
    }
    this.checkBudget(req.stage);
    this.paidStarted++;
    const p =
      this.core.cache && this.core.batcher?.wants(role, backend, req)
        ? this.viaBatch(call, binding, opts.signal)
        : this.execute(call, binding, opts.signal);
    if (!this.core.cache) return p;
    this.inflight.set(key, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(key);
    }
  }

  chatJson<S extends v.GenericSchema>(
    role: Role,
    request: ChatRequest,
    schema: S,
    opts: { signal?: AbortSignal } = {},
  ): Promise<JsonResult<v.InferOutput<S>>> {
    // The schema travels only to a backend that sends it, so it keys the cache only where it changes the answer.
    const structured = this.core.roles[role].chat?.structuredOutputs === true;
    return askJson(
      (req) => this.chat(role, req, opts),
      structured
        ? { ...request, responseSchema: { name: schemaName(request.stage), schema: toJsonSchema(schema) } }
        : request,
      schema,
      (reason, response, detail) => this.dropJson(role, request.stage, reason, response, detail),
    );
  }

  private dropJson<T>(
    role: Role,
    stage: string,
    reason: string,
    response: ChatResponse,
    detail: string,
  ): JsonResult<T> {
    this.core.ledger.drop(stage, reason);
    this.emit({ type: "dropped", role, stage, reason });
    log.withTag("model").debug(`dropped ${stage} result: ${reason}: ${redactText(detail).slice(0, 200)}`);
    return { ok: false, reason: `${reason}: ${detail}`, response };
  }

  private checkBudget(stage: string): void {
    const { maxCalls, maxCostUsd, ledger } = this.core;
    const at = { kind: "call", stage } as const;
    if (maxCalls !== undefined && this.paidStarted >= maxCalls) {
      throw new BudgetError(
        { limit: "calls", spent: this.paidStarted, cap: maxCalls, at },
        { hint: "the run stops at the next step boundary with its state saved; resume with a larger model.max_calls" },
      );
    }
    if (maxCostUsd !== undefined && ledger.spentUsd >= maxCostUsd) {
      throw new BudgetError(
        { limit: "cost", spent: ledger.spentUsd, cap: maxCostUsd, at },
        {
          hint: "the run stops at the next step boundary with its state saved; resume with a larger --max-cost / model.max_cost_usd",
        },
      );
    }
  }

  /** A call through the provider's Batch API (same key, cache and ledger as a live call, priced at the batch rate). */
  private async viaBatch(call: Call, binding: RoleBinding, signal: AbortSignal | undefined): Promise<ChatResponse> {
    const started = this.now();
    this.batchAsked.set(call.key, started);
    let out: RawCompletion | "live";
    try {
      out = await this.core.batcher!.ask(call.role, call.backend, call.req, call.key);
    } finally {
      this.batchAsked.delete(call.key);
    }
    if (out === "live") return this.execute(call, binding, signal);
    return this.answered(call, out, started, 1, true);
  }

  /**
   * Cache an answer under its key when it is complete, marked as paid by this run's ledger
   * (StoredResponse.paid). The batcher calls this as it settles a batch (one request, at the batch
   * price, its latency from when this process asked for it): that is a batch answer's only write,
   * before the batch is settled, so a kill after it never pays for the answer again.
   */
  cacheBatchAnswer(
    key: string,
    backend: string,
    endpoint: string,
    model: string,
    value: RawCompletion,
    paid: { attempts: number; latencyMs: number; costUsd: number | null } = {
      attempts: 1,
      latencyMs: this.batchAsked.has(key) ? this.now() - this.batchAsked.get(key)! : 0,
      costUsd: this.price(model, value, true),
    },
  ): void {
    if (!this.core.cache || !COMPLETE.has(value.finishReason) || (value.text === "" && value.toolCalls.length === 0))
      return;
    const mark = this.core.ledger.paidMark({ ...paid, usage: value.usage });
    // The model last: the store then keeps the answer without it when it is its origin's (elideModel).
    const stored: StoredResponse = {
      text: value.text,
      finishReason: value.finishReason,
      toolCalls: value.toolCalls,
      ...(value.usageMissing ? {} : { usage: storedUsage(value) }),
      ...(mark ? { paid: mark } : {}),
      model: value.model || model,
    };
    putCachedCall(this.core.cache, { key, backend, endpoint, model, response: JSON.stringify(stored) });
  }

  private answered(call: Call, value: RawCompletion, started: number, attempts: number, batch: boolean): ChatResponse {
    const { backend, req } = call;
    const costUsd = this.price(req.model, value, batch);
    const response: ChatResponse = {
      text: value.text,
      finishReason: value.finishReason,
      toolCalls: value.toolCalls,
      usage: value.usage,
      latencyMs: this.now() - started,
      costUsd,
      attempts,
      cached: false,
      model: value.model || req.model,
    };
    // A batch answer is already in the cache (the batcher put it there as it settled the batch).
    if (!batch) this.cacheBatchAnswer(call.key, backend.name, backend.endpoint, req.model, value, response);
    // Deployed, the task pays the live price, not a Batch API's discount.
    this.record(call, response, response.finishReason === "length" ? "truncated" : "ok", undefined, {
      tokens: value.usageMissing ? undefined : reportedTokens(value.usage),
      costUsd: batch ? this.price(req.model, value, false) : costUsd,
    });
    return response;
  }

  private async execute(call: Call, binding: RoleBinding, signal: AbortSignal | undefined): Promise<ChatResponse> {
    const { role, backend, req } = call;
    const started = this.now();
    const { attempts: perRole, ...overrides } = this.core.retry ?? {};
    const attempts = perRole?.[role] ?? (role === "target" ? ROLLOUT_ATTEMPTS : OPTIMIZER_ATTEMPTS);
    const policy = defaultPolicy(attempts, overrides);
    const limiter = this.limiter(role, backend.endpoint);
    const timeoutMs = backend.timeoutMs ?? binding.timeoutMs;
    let made = 0;
    try {
      const { value, attempts: used } = await withRetry(
        (attempt) => {
          made = attempt;
          return limiter.run(() => backend.complete(req, { ...(signal ? { signal } : {}), timeoutMs }), signal);
        },
        policy,
        {
          ...(signal ? { signal } : {}),
          onRetry: ({ attempt, error, delayMs }) => {
            if (error instanceof BackendError && error.kind === "rate_limit" && error.retryAfterMs !== undefined)
              limiter.pause(delayMs);
            this.emit({
              type: "retry",
              role,
              stage: req.stage,
              backend: backend.name,
              model: req.model,
              attempt,
              delayMs,
              kind: error instanceof BackendError ? error.kind : null,
              status: error instanceof BackendError ? (error.status ?? null) : null,
              error: redactText(errorMessage(error)),
            });
          },
        },
      );
      return this.answered(call, value, started, used, false);
    } catch (err) {
      const failed: ChatResponse = {
        text: "",
        finishReason: "error",
        toolCalls: [],
        usage: ZERO,
        latencyMs: this.now() - started,
        costUsd: null,
        attempts: made,
        cached: false,
        model: req.model,
      };
      this.record(call, failed, "error", redactText(errorMessage(err)));
      if (err instanceof BackendError)
        err.at({ backend: backend.name, host: endpointHost(backend.endpoint), role, model: req.model });
      throw err;
    }
  }

  private price(model: string, raw: RawCompletion, batch = false): number | null {
    if (raw.providerCostUsd !== undefined) return raw.providerCostUsd;
    if (raw.usageMissing) return null;
    const cost =
      this.core.prices.cost(model, raw.usage, { batch }) ??
      (raw.model ? this.core.prices.cost(raw.model, raw.usage, { batch }) : null);
    if (cost === null && this.core.maxCostUsd !== undefined && !this.warnedUnknownPrice.has(model)) {
      this.warnedUnknownPrice.add(model);
      log
        .withTag("model")
        .warn(
          `no price known for model ${model}: its calls do not count toward the cost cap (add it under model.pricing)`,
        );
    }
    return cost;
  }

  /** What a cached answer would cost live (the deployed cost of a task counts it): its stored usage, priced now. */
  private deployedOf(model: string, stored: StoredResponse): TaskCall {
    if (!stored.usage) return { tokens: undefined, costUsd: null };
    const [p, c, charged] = stored.usage;
    const usage: Usage = { promptTokens: p, completionTokens: c, cachedTokens: 0, reasoningTokens: 0 };
    const priced = charged ?? this.core.prices.cost(model, usage) ?? this.core.prices.cost(stored.model, usage);
    return { tokens: p + c, costUsd: priced };
  }

  private served(
    call: Call,
    stored: Pick<StoredResponse, "text" | "finishReason" | "toolCalls" | "model">,
    started: number,
    deployed: TaskCall,
  ): ChatResponse {
    const response: ChatResponse = {
      text: stored.text,
      finishReason: stored.finishReason,
      toolCalls: stored.toolCalls,
      usage: ZERO,
      latencyMs: this.now() - started,
      costUsd: 0,
      attempts: 0,
      cached: true,
      model: stored.model,
    };
    this.record(call, response, response.finishReason === "length" ? "truncated" : "ok", undefined, deployed);
    return response;
  }

  /**
   * A cache answer an earlier process of this run paid for and was killed before its ledger row
   * reached the disk: recorded now as the paid call it was (its facts from the answer's mark), so
   * the run's paid calls and spend come out as without the kill. It counts toward the call cap.
   */
  private recovered(call: Call, stored: StoredResponse, mark: PaidMark): ChatResponse {
    const [, , at, attempts, latencyMs, promptTokens, completionTokens, cachedTokens, reasoningTokens, costUsd] = mark;
    this.paidStarted++;
    const response: ChatResponse = {
      text: stored.text,
      finishReason: stored.finishReason,
      toolCalls: stored.toolCalls,
      usage: { promptTokens, completionTokens, cachedTokens, reasoningTokens },
      latencyMs,
      costUsd,
      attempts,
      cached: false,
      model: stored.model,
    };
    log.withTag("model").debug(`call ${call.key.slice(0, 12)}: paid before a kill, its ledger row lost; recorded now`);
    const status = response.finishReason === "length" ? "truncated" : "ok";
    this.record(call, response, status, undefined, this.deployedOf(call.req.model, stored), at);
    return response;
  }

  /**
   * Write a call's ledger row; a target call also counts toward the current task's deployed cost
   * (`deployed`: what it would cost live; a failed call reported nothing).
   */
  private record(
    call: Call,
    res: ChatResponse,
    status: CallRecord["status"],
    error?: string,
    deployed: TaskCall = { tokens: undefined, costUsd: null },
    at?: number,
  ): void {
    if (call.role === "target") noteTaskCall(deployed.tokens, deployed.costUsd);
    this.account(
      {
        role: call.role,
        stage: call.req.stage,
        backend: call.backend.name,
        endpoint: call.backend.endpoint,
        model: call.req.model,
        key: call.key,
        cached: res.cached,
        attempts: res.attempts,
        status,
        usage: res.usage,
        costUsd: res.costUsd,
        latencyMs: res.latencyMs,
        ...(error ? { error } : {}),
      },
      at,
    );
  }

  /** Write a call's ledger row and stream it to the listener (without endpoint and key). */
  private account(row: CallRecord, at?: number): void {
    this.core.ledger.record(row, at);
    const { endpoint: _endpoint, key: _key, ...event } = row;
    this.emit({ type: "call", ...event });
  }

  private emit(event: CallEvent): void {
    notify(this.core.onCall, event, "onCall");
  }

  private now(): number {
    return (this.core.now ?? performance.now.bind(performance))();
  }
}

/** A structured output's name: the stage, as the letters, digits, _ and - OpenAI accepts (at most 64). */
function schemaName(stage: string): string {
  return (stage.replace(/[^A-Za-z0-9_-]+/g, "_") || "answer").slice(0, 64);
}
