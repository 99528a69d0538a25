import type { Role, Usage } from "../engine/index.ts";
import { randomName } from "../lib/index.ts";
import {
  dropRows,
  insertDropRow,
  insertLedgerRow,
  type LedgerRow,
  ledgerName,
  ledgerRows,
  paidCallKeys,
  type Store,
} from "../store/index.ts";
import type { PaidMark } from "./call-cache.ts";

interface StageTotals {
  calls: number;
  cached: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  /** Known cost; see cost_known. */
  cost_usd: number;
  /** False when any paid call of this stage had an unknown price (cost_usd is then a lower bound). */
  cost_known: boolean;
  errors: number;
  dropped: number;
}

interface LedgerSummary {
  calls: number;
  cached: number;
  /** Paid calls: calls − cached. */
  paid: number;
  attempts: number;
  tokens: { prompt: number; completion: number; cached: number; reasoning: number; total: number };
  cost_usd: number;
  cost_known: boolean;
  by_stage: Record<string, StageTotals>;
  by_role: Record<Role, { calls: number; cached: number; cost_usd: number }>;
  /** Structured calls given up on, by reason (truncated, invalid_json, …). */
  dropped: Record<string, number>;
}

export interface CallRecord {
  role: Role;
  stage: string;
  backend: string;
  endpoint: string;
  model: string;
  key: string | null;
  cached: boolean;
  attempts: number;
  status: LedgerRow["status"];
  usage: Usage;
  costUsd: number | null;
  latencyMs: number;
  error?: string;
}

const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 };

function emptyStage(): StageTotals {
  return {
    calls: 0,
    cached: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    reasoning_tokens: 0,
    cost_usd: 0,
    cost_known: true,
    errors: 0,
    dropped: 0,
  };
}

/** Accounting of every logical call: totals by stage and role, persisted when given a store. */
export class CallLedger {
  private readonly stages = new Map<string, StageTotals>();
  private readonly roles: LedgerSummary["by_role"] = {
    optimizer: { calls: 0, cached: 0, cost_usd: 0 },
    target: { calls: 0, cached: 0, cost_usd: 0 },
  };
  private readonly drops = new Map<string, number>();
  private attemptsTotal = 0;
  private paidCalls = 0;
  private costTotal = 0;
  private costKnown = true;
  /** This ledger's name in its store (ledgerName), and a random name of this process's session of it. */
  private readonly name: string | undefined;
  private readonly session = randomName(6);
  /** Keys of the run's paid calls, read from the store the first time an earlier session's answer is met. */
  private paidKeys: Set<string> | undefined;

  constructor(
    private readonly store: Store | undefined,
    readonly runId: string,
    private readonly now: () => number = Date.now,
  ) {
    if (!store) return;
    this.name = ledgerName(store, runId);
    for (const row of ledgerRows(store, runId)) this.add(fromRow(row));
    for (const d of dropRows(store, runId)) this.countDrop(d.stage, d.reason);
  }

  /** Paid calls so far (including those of earlier sessions of this run). */
  get paid(): number {
    return this.paidCalls;
  }

  /** Known spend so far in dollars. */
  get spentUsd(): number {
    return this.costTotal;
  }

  /**
   * What a cache answer of a call this ledger pays for carries (StoredResponse.paid): undefined
   * when the ledger is not persisted (no later process of the run can miss its row).
   */
  paidMark(rec: Pick<CallRecord, "attempts" | "latencyMs" | "usage" | "costUsd">): PaidMark | undefined {
    if (this.name === undefined) return undefined;
    const u = rec.usage;
    const usage = [u.promptTokens, u.completionTokens, u.cachedTokens, u.reasoningTokens] as const;
    return [this.name, this.session, this.now(), rec.attempts, Math.round(rec.latencyMs), ...usage, rec.costUsd];
  }

  /**
   * Whether a cache answer marked `mark` was paid for by an earlier process of this run whose
   * ledger row never reached the disk (killed between the answer's write and the row's): then it
   * is recorded as paid now, once. A row this process wrote is always there (it follows the answer
   * in the same synchronous step), so only another session's mark reads the run's paid keys.
   */
  unrecorded(key: string, mark: PaidMark | undefined): boolean {
    if (!mark || !this.store || mark[0] !== this.name || mark[1] === this.session) return false;
    this.paidKeys ??= paidCallKeys(this.store, this.runId);
    return !this.paidKeys.has(key);
  }

  /** Count a call and write its row (`at`: when it was made, now unless it is an earlier process's call). */
  record(rec: CallRecord, at = this.now()): void {
    this.add(rec);
    if (!rec.cached && rec.key !== null) this.paidKeys?.add(rec.key);
    if (!this.store) return;
    insertLedgerRow(this.store, {
      run_id: this.runId,
      at,
      role: rec.role,
      stage: rec.stage,
      backend: rec.backend,
      endpoint: rec.endpoint,
      model: rec.model,
      cache_key: rec.key,
      cached: rec.cached,
      attempts: rec.attempts,
      status: rec.status,
      prompt_tokens: rec.usage.promptTokens,
      completion_tokens: rec.usage.completionTokens,
      cached_tokens: rec.usage.cachedTokens,
      reasoning_tokens: rec.usage.reasoningTokens,
      cost_usd: rec.costUsd,
      latency_ms: Math.round(rec.latencyMs),
      error: rec.error ?? null,
    });
  }

  /** Count a structured call that was given up on (the calls themselves are already recorded). */
  drop(stage: string, reason: string): void {
    this.countDrop(stage, reason);
    if (this.store) insertDropRow(this.store, { run_id: this.runId, at: this.now(), stage, reason });
  }

  private countDrop(stage: string, reason: string): void {
    this.drops.set(reason, (this.drops.get(reason) ?? 0) + 1);
    this.stage(stage).dropped++;
  }

  summary(): LedgerSummary {
    const by_stage: Record<string, StageTotals> = {};
    const tokens = { prompt: 0, completion: 0, cached: 0, reasoning: 0, total: 0 };
    let calls = 0;
    let cached = 0;
    for (const [name, s] of [...this.stages.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      by_stage[name] = { ...s };
      calls += s.calls;
      cached += s.cached;
      tokens.prompt += s.prompt_tokens;
      tokens.completion += s.completion_tokens;
      tokens.cached += s.cached_tokens;
      tokens.reasoning += s.reasoning_tokens;
    }
    tokens.total = tokens.prompt + tokens.completion;
    return {
      calls,
      cached,
      paid: calls - cached,
      attempts: this.attemptsTotal,
      tokens,
      cost_usd: this.costTotal,
      cost_known: this.costKnown,
      by_stage,
      by_role: { optimizer: { ...this.roles.optimizer }, target: { ...this.roles.target } },
      dropped: Object.fromEntries(this.drops),
    };
  }

  private stage(name: string): StageTotals {
    let s = this.stages.get(name);
    if (!s) {
      s = emptyStage();
      this.stages.set(name, s);
    }
    return s;
  }

  private add(rec: CallRecord): void {
    const s = this.stage(rec.stage);
    const r = this.roles[rec.role];
    s.calls++;
    r.calls++;
    this.attemptsTotal += rec.attempts;
    if (rec.status === "error") s.errors++;
    if (rec.cached) {
      s.cached++;
      r.cached++;
      return;
    }
    this.paidCalls++;
    const u = rec.usage ?? ZERO_USAGE;
    s.prompt_tokens += u.promptTokens;
    s.completion_tokens += u.completionTokens;
    s.cached_tokens += u.cachedTokens;
    s.reasoning_tokens += u.reasoningTokens;
    if (rec.costUsd === null) {
      // A failed call that reached no provider costs nothing; one with tokens and no price is unknown.
      if (rec.status !== "error" || u.promptTokens + u.completionTokens > 0) {
        s.cost_known = false;
        this.costKnown = false;
      }
      return;
    }
    s.cost_usd += rec.costUsd;
    r.cost_usd += rec.costUsd;
    this.costTotal += rec.costUsd;
  }
}

function fromRow(row: LedgerRow): CallRecord {
  return {
    role: row.role === "optimizer" ? "optimizer" : "target",
    stage: row.stage,
    backend: row.backend,
    endpoint: row.endpoint,
    model: row.model,
    key: row.cache_key,
    cached: row.cached,
    attempts: row.attempts,
    status: row.status,
    usage: {
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      cachedTokens: row.cached_tokens,
      reasoningTokens: row.reasoning_tokens,
    },
    costUsd: row.cost_usd,
    latencyMs: row.latency_ms,
    ...(row.error ? { error: row.error } : {}),
  };
}
