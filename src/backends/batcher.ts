import { AsyncLocalStorage } from "node:async_hooks";
import type { ChatRequest, Role, RoundPurpose, RoundTask } from "../engine/index.ts";
import { BackendError, BudgetError, ConfigError, log, NoAnswerError, sha256 } from "../lib/index.ts";
import { failedBatchAttempts, insertBatch, pendingBatchOf, type Store } from "../store/index.ts";
import { type Chunk, split, worstCaseUsd } from "./batch-lines.ts";
import { pollBatch } from "./batch-poll.ts";
import { notify } from "./listener.ts";
import type { PriceTable } from "./pricing.ts";
import type { BatchApi, BatchInfo, BatchLineResult, ChatBackend, RawCompletion } from "./types.ts";

/** Which calls of a role go through the provider's Batch API. */
export type BatchMode = "off" | "eval" | "all";

/**
 * A provider batch's progress, for the CLI's progress line and the run folder's status; the CLI
 * words it (report's batchText). `submitted`, `status` and `settled` follow one batch (`id`);
 * `resubmit`: a request of batch `id` got no answer (`reason`) and goes into the next batch;
 * `fallback`: it got no answer a second time; `live`: a request is asked live after `submissions`
 * batches gave it no answer (model.batch_fallback=live); `unsupported`: the endpoint has no Batch API,
 * so `requests` are called live.
 */
export type BatchEvent =
  | { type: "submitted"; id: string; status: string; total: number; model: string }
  | { type: "status" | "settled"; id: string; status: string; completed: number; failed: number; total: number }
  | { type: "resubmit" | "fallback"; id: string; key: string; reason: string }
  | { type: "live"; submissions: number }
  | { type: "unsupported"; backend: string; endpoint: string; requests: number };

interface BatcherOptions {
  store: Store;
  modes: Record<Role, BatchMode>;
  fallback: "live" | "stop";
  required: boolean;
  pollMs: number;
  prices: PriceTable;
  maxCostUsd: number | undefined;
  maxCalls: number | undefined;
  /** Dollars spent so far and paid calls started (the caps count a batch before submitting it). */
  spent: () => number;
  paidCalls: () => number;
  /** Put a batch answer into the call cache under its key (as a live answer would be). */
  cacheAnswer: (key: string, backend: string, endpoint: string, model: string, completion: RawCompletion) => void;
  onEvent?: ((e: BatchEvent) => void) | undefined;
  now?: () => number;
}

// Real time after which queued requests are submitted although some rollout of the round is not waiting on one.
const STALL_MS = 2_000;

interface Slot {
  pending: number;
}

interface Context {
  purpose: RoundPurpose;
  signal: AbortSignal | undefined;
  slot?: Slot;
}

export interface Entry {
  key: string;
  role: Role;
  stage: string;
  model: string;
  backend: ChatBackend;
  api: BatchApi;
  /** The request body of the JSONL line (as the live call would send it). */
  body: Record<string, unknown>;
  attempt: number;
  resolve: (r: RawCompletion | "live") => void;
  reject: (err: unknown) => void;
}

const contexts = new AsyncLocalStorage<Context>();

/**
 * Collects the calls of a round that go through a Batch API, submits them as one batch per
 * endpoint and model once every rollout of the round is waiting on one (or, outside rounds, once no
 * new call arrived for one turn of the event loop), commits each batch to the call cache database
 * before waiting, polls it with backoff, and hands each caller its answer. A call whose key is in a
 * pending batch of an earlier process re-attaches to that batch instead of being submitted again.
 */
export class Batcher {
  private readonly tasks = new Set<Slot>();
  private queue: Entry[] = [];
  private lastSeen = -1;
  private stall: ReturnType<typeof setTimeout> | undefined;
  private checkScheduled = false;
  private readonly watches = new Map<string, Promise<Map<string, BatchLineResult>>>();
  private readonly unsupported = new Set<string>();
  private readonly closing = new AbortController();

  constructor(private readonly o: BatcherOptions) {}

  /** Whether calls of this purpose go through a batch for some role (the evaluator then starts every rollout at once). */
  batching(purpose: RoundPurpose): boolean {
    return (["optimizer", "target"] as const).some((r) => covers(this.o.modes[r], purpose));
  }

  /** Run `fn` as one round; `task` wraps each independent unit of it (a rollout). */
  round<T>(purpose: RoundPurpose, fn: (task: RoundTask) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const tracked = this.batching(purpose);
    const task = async <R>(run: () => Promise<R>): Promise<R> => {
      if (!tracked) return run();
      const slot: Slot = { pending: 0 };
      this.tasks.add(slot);
      try {
        return await contexts.run({ purpose, signal, slot }, run);
      } finally {
        this.tasks.delete(slot);
        this.schedule();
      }
    };
    return contexts.run({ purpose, signal }, () => fn(task));
  }

  /** Whether this call goes through a batch: its role's mode covers the current round, and the backend has a Batch API. */
  wants(role: Role, backend: ChatBackend, req: ChatRequest & { model: string }): boolean {
    const mode = this.o.modes[role];
    if (mode === "off" || !backend.batch || this.unsupported.has(backend.endpoint)) return false;
    const ctx = contexts.getStore();
    if (!covers(mode, ctx?.purpose ?? "train")) return false;
    return backend.batch.accepts(req);
  }

  /** The answer of a call through a batch, or "live" when it must be asked live (fallback, or no Batch API). */
  async ask(
    role: Role,
    backend: ChatBackend,
    req: ChatRequest & { model: string },
    key: string,
  ): Promise<RawCompletion | "live"> {
    const api = backend.batch!;
    const slot = contexts.getStore()?.slot;
    if (slot) slot.pending++;
    try {
      const attached = pendingBatchOf(this.o.store, key);
      if (attached) {
        const results = await this.watch(attached.batch.id, api);
        const got = results.get(key);
        if (got && "completion" in got) return got.completion;
      }
      const base = { key, role, stage: req.stage, model: req.model, backend, api, body: api.body(req) };
      return await this.enqueue(base, failedBatchAttempts(this.o.store, key) + 1);
    } finally {
      if (slot) slot.pending--;
      this.schedule();
    }
  }

  /**
   * Count the current rollout as waiting while `p` is pending (a call that shares another caller's
   * in-flight request waits on that request's batch): otherwise the round would never be complete.
   */
  async hold<T>(p: Promise<T>): Promise<T> {
    const slot = contexts.getStore()?.slot;
    if (!slot) return p;
    slot.pending++;
    this.schedule();
    try {
      return await p;
    } finally {
      slot.pending--;
      this.schedule();
    }
  }

  /** Stop waiting on batches (they stay pending in the store; a rerun re-attaches). */
  close(): void {
    this.closing.abort(new BackendError("http", "the model client was closed while a batch was pending"));
  }

  private enqueue(
    base: Omit<Entry, "attempt" | "resolve" | "reject">,
    attempt: number,
  ): Promise<RawCompletion | "live"> {
    if (attempt > 2) return this.giveUp(base.key, base.backend, attempt - 1);
    return new Promise((resolve, reject) => {
      this.queue.push({ ...base, attempt, resolve, reject });
      this.schedule();
    });
  }

  private giveUp(key: string, backend: ChatBackend, submissions: number): Promise<RawCompletion | "live"> {
    if (this.o.fallback === "live") {
      this.emit({ type: "live", submissions });
      return Promise.resolve("live");
    }
    const what = `${submissions} batch submissions`;
    return Promise.reject(
      new NoAnswerError(
        `a request to ${backend.name} at ${backend.endpoint} got no answer from ${what} (request ${key.slice(0, 12)})`,
        {
          hint: "model.batch_fallback=stop: the run stopped; rerun with --resume (or set model.batch_fallback=live to ask such requests live)",
          data: { role: "target", stage: "batch", errored: 1, total: 1, reason: what },
        },
      ),
    );
  }

  private schedule(): void {
    if (this.checkScheduled) return;
    this.checkScheduled = true;
    setImmediate(() => {
      this.checkScheduled = false;
      this.maybeFlush();
    });
  }

  private maybeFlush(force = false): void {
    clearTimeout(this.stall);
    if (!this.queue.length) return;
    const idle = [...this.tasks].filter((t) => t.pending === 0).length;
    if (idle && !force) {
      // A rollout that waits on something else (a live call of another role, a file) holds the
      // round; should it never call, the queued requests still go out after a quiet spell.
      this.stall = setTimeout(() => {
        log
          .withTag("batch")
          .debug(
            `${idle} rollout(s) of the round made no batched call for ${STALL_MS} ms: submitting the ${this.queue.length} queued request(s)`,
          );
        this.maybeFlush(true);
      }, STALL_MS);
      this.stall.unref?.();
      return;
    }
    // Calls outside a round are flushed once a whole turn of the event loop added none.
    if (this.queue.length !== this.lastSeen && !force) {
      this.lastSeen = this.queue.length;
      this.schedule();
      return;
    }
    this.lastSeen = -1;
    const entries = this.queue;
    this.queue = [];
    const groups = new Map<string, Entry[]>();
    for (const e of entries) {
      const id = `${e.backend.endpoint}\u0000${e.backend.name}\u0000${e.model}`;
      groups.set(id, [...(groups.get(id) ?? []), e]);
    }
    for (const group of groups.values()) for (const chunk of split(group)) void this.submit(chunk);
  }

  private async submit(chunk: Chunk): Promise<void> {
    const { entries, lines, items } = chunk;
    const first = entries[0]!;
    const fail = (err: unknown) => {
      for (const e of entries) e.reject(err);
    };
    try {
      this.checkCaps(items, lines);
    } catch (err) {
      fail(err);
      return;
    }
    let submitted: { batch: BatchInfo; inputFileId: string };
    try {
      // A batch of exactly these requests created by a process that died before recording it is
      // adopted, not submitted (and paid) again.
      const fingerprint = sha256(
        items
          .map((e) => e.key)
          .sort()
          .join("\n"),
      ).slice(0, 32);
      submitted =
        (await first.api.find(fingerprint, this.closing.signal)) ??
        (await first.api.submit(`${lines.join("\n")}\n`, fingerprint, this.closing.signal));
    } catch (err) {
      if (err instanceof BackendError && err.kind === "not_found") {
        this.unsupported.add(first.backend.endpoint);
        const what = `${first.backend.name} at ${first.backend.endpoint} has no Batch API (HTTP 404 on its files or batches route)`;
        if (this.o.required) {
          fail(
            new ConfigError(`model.batch_required: ${what}`, {
              key: "model.batch_required",
              hint: "use an endpoint with a Batch API (OpenAI, Azure OpenAI with a GlobalBatch deployment), or set model.batch_required=false to call it live",
            }),
          );
          return;
        }
        // One warning: the CLI's batch line when it listens, else the log.
        if (this.o.onEvent)
          this.emit({
            type: "unsupported",
            backend: first.backend.name,
            endpoint: first.backend.endpoint,
            requests: entries.length,
          });
        else log.withTag("model").warn(`${what}: calling it live instead (set model.batch_required=true to refuse)`);
        for (const e of entries) e.resolve("live");
        return;
      }
      fail(err);
      return;
    }
    const now = (this.o.now ?? Date.now)();
    const b = submitted.batch;
    insertBatch(
      this.o.store,
      {
        id: b.id,
        backend: first.backend.name,
        endpoint: first.backend.endpoint,
        model: first.model,
        input_file_id: submitted.inputFileId,
        status: b.status,
        state: "pending",
        total: items.length,
        completed: 0,
        failed: 0,
        worst_cost_usd: worstCaseUsd(
          items.map((e) => e.model),
          lines,
          this.o.prices,
        ),
        created_at: now,
        updated_at: now,
      },
      items.map((e) => ({ key: e.key, role: e.role, stage: e.stage, attempt: e.attempt })),
    );
    this.emit({ type: "submitted", id: b.id, status: b.status, total: items.length, model: first.model });
    let results: Map<string, BatchLineResult>;
    try {
      results = await this.watch(b.id, first.api);
    } catch (err) {
      fail(err);
      return;
    }
    for (const e of entries) {
      const got = results.get(e.key);
      if (got && "completion" in got) e.resolve(got.completion);
      else {
        const reason = got && "error" in got ? got.error : "no answer";
        const again = e.attempt < 2;
        this.emit({ type: again ? "resubmit" : "fallback", id: b.id, key: e.key, reason });
        this.enqueue(e, e.attempt + 1).then(e.resolve, e.reject);
      }
    }
  }

  /** Refuse a batch whose worst case would pass a cap, before it is submitted. */
  private checkCaps(entries: Entry[], lines: string[]): void {
    const { maxCalls, maxCostUsd } = this.o;
    if (maxCalls !== undefined && this.o.paidCalls() > maxCalls) {
      throw new BudgetError(
        {
          limit: "calls",
          spent: this.o.paidCalls(),
          cap: maxCalls,
          at: { kind: "batch", requests: entries.length, worst_usd: null },
        },
        { hint: "nothing was submitted; raise model.max_calls, or lower the evaluation's size" },
      );
    }
    if (maxCostUsd === undefined) return;
    const worst = worstCaseUsd(
      entries.map((e) => e.model),
      lines,
      this.o.prices,
    );
    if (worst === null) return;
    const spent = this.o.spent();
    if (spent + worst > maxCostUsd) {
      throw new BudgetError(
        { limit: "cost", spent, cap: maxCostUsd, at: { kind: "batch", requests: entries.length, worst_usd: worst } },
        { hint: "nothing was submitted; raise --max-cost / model.max_cost_usd, or lower the evaluation's size" },
      );
    }
  }

  /** Poll a batch until it ends (once per batch, shared by every caller), settle it, and return its answers by key. */
  private watch(id: string, api: BatchApi): Promise<Map<string, BatchLineResult>> {
    let w = this.watches.get(id);
    if (!w) {
      w = this.poll(id, api);
      this.watches.set(id, w);
      w.catch(() => this.watches.delete(id));
    }
    return w;
  }

  private poll(id: string, api: BatchApi): Promise<Map<string, BatchLineResult>> {
    const signal = AbortSignal.any([
      this.closing.signal,
      ...(contexts.getStore()?.signal ? [contexts.getStore()!.signal!] : []),
    ]);
    return pollBatch(id, api, signal, {
      store: this.o.store,
      pollMs: this.o.pollMs,
      cacheAnswer: this.o.cacheAnswer,
      emit: (e) => this.emit(e),
    });
  }

  private emit(e: BatchEvent): void {
    notify(this.o.onEvent, e, "batch");
  }
}

function covers(mode: BatchMode, purpose: RoundPurpose): boolean {
  return mode === "all" || (mode === "eval" && purpose === "eval");
}
