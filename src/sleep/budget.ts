import { SkilloptError } from "../lib/index.ts";
import type { LedgerEntry } from "./store-port.ts";

/** Ceilings of one night (null = none). */
interface NightLimits {
  tokens: number | null;
  calls: number | null;
  seconds: number | null;
  costUsd: number | null;
}

/** A ceiling was reached: the night stops cleanly with what the gate had verified so far. */
export class BudgetExhaustedError extends SkilloptError<{ limit: keyof NightLimits }> {
  constructor(limit: keyof NightLimits, message: string) {
    // Its own code: a night's ceiling ends the night cleanly (exit 0), unlike a run's cap (`budget`, exit 1).
    super("night_budget", message, 0, { data: { limit } });
  }
  get limit(): keyof NightLimits {
    return this.data.limit;
  }
}

/** Per-night accounting of model calls, checked before every call (spec §9.4, §12.2 budgets). */
export class NightLedger {
  readonly limits: NightLimits;
  readonly startedMs: number;
  private readonly now: () => number;
  private readonly stages = new Map<string, LedgerEntry>();
  calls = 0;
  /** Calls admitted by check() whose result is not recorded yet (so concurrent calls cannot overshoot). */
  private pending = 0;
  tokens = 0;
  costUsd = 0;

  constructor(limits: Partial<NightLimits> = {}, now: () => number = Date.now) {
    this.limits = {
      tokens: limits.tokens ?? null,
      calls: limits.calls ?? null,
      seconds: limits.seconds ?? null,
      costUsd: limits.costUsd ?? null,
    };
    this.now = now;
    this.startedMs = now();
  }

  /** Admit one more call, or throw BudgetExhaustedError if it would break a ceiling. Pair with record() or release(). */
  check(): void {
    const { tokens, calls, seconds, costUsd } = this.limits;
    if (calls !== null && this.calls + this.pending >= calls)
      throw new BudgetExhaustedError("calls", `call budget of ${calls} per night reached`);
    if (tokens !== null && this.tokens >= tokens)
      throw new BudgetExhaustedError("tokens", `token budget of ${tokens} per night reached (${this.tokens} used)`);
    if (costUsd !== null && this.costUsd >= costUsd)
      throw new BudgetExhaustedError(
        "costUsd",
        `money budget of $${costUsd} per night reached ($${this.costUsd.toFixed(4)} spent)`,
      );
    if (seconds !== null && this.elapsedSeconds() >= seconds)
      throw new BudgetExhaustedError("seconds", `time budget of ${seconds}s per night reached`);
    this.pending += 1;
  }

  /** Throw when the wall-clock ceiling is reached (no call admitted). */
  checkTime(): void {
    const { seconds } = this.limits;
    if (seconds !== null && this.elapsedSeconds() >= seconds)
      throw new BudgetExhaustedError("seconds", `time budget of ${seconds}s per night reached`);
  }

  /** Give back an admitted call that did not happen (or failed without usage). */
  release(): void {
    if (this.pending > 0) this.pending -= 1;
  }

  /** Account one call (cached calls cost nothing but are counted as cached). */
  record(stage: string, tokens: number, costUsd: number | null, cached: boolean): void {
    this.release();
    const row = this.stages.get(stage) ?? { stage, calls: 0, tokens: 0, cost_usd: 0, cached: 0 };
    if (cached) row.cached += 1;
    else {
      row.calls += 1;
      row.tokens += tokens;
      row.cost_usd += costUsd ?? 0;
      this.calls += 1;
      this.tokens += tokens;
      this.costUsd += costUsd ?? 0;
    }
    this.stages.set(stage, row);
  }

  elapsedSeconds(): number {
    return (this.now() - this.startedMs) / 1000;
  }

  entries(): LedgerEntry[] {
    return [...this.stages.values()];
  }
}
