import { sha256 } from "../lib/index.ts";
import type { EngineEvents } from "./events.ts";
import { type GateSettings, itemScore } from "./gate.ts";
import type { Benchmark, BenchmarkContext, RolloutResult, TaskItem } from "./ports.ts";

/** First 16 hex chars of the sha256 of the skill text (spec §2.1 step 14). */
export function skillHash(skill: string): string {
  return sha256(skill).slice(0, 16);
}

/** Mean hard and soft over results, in order (spec §1.3 compute_score). */
export function meanScores(results: readonly RolloutResult[]): { hard: number; soft: number } {
  if (!results.length) return { hard: 0, soft: 0 };
  let h = 0;
  let s = 0;
  for (const r of results) {
    h += Number(r.hard) || 0;
    s += Number(r.soft) || 0;
  }
  return { hard: h / results.length, soft: s / results.length };
}

export function isFailure(r: RolloutResult): boolean {
  return !r.hard || Number(r.hard) < 1e-9;
}

/**
 * Why every result of a batch failed before the agent produced a response (all carry
 * `agent_ok === false`: endpoint down, every call refused), with the most common reason; undefined
 * when any item got an answer or a benchmark does not report `agent_ok` (spec §6.1 fail-fast).
 */
export function systemicFailure(results: readonly RolloutResult[]): string | undefined {
  if (!results.length || !results.every((r) => r.agent_ok === false)) return undefined;
  const counts = new Map<string, number>();
  for (const r of results) {
    const reason = String(r.fail_reason ?? "no reason given");
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  const [reason, n] = [...counts].sort((a, b) => b[1] - a[1])[0]!;
  const clipped = reason.length > 300 ? `${reason.slice(0, 300)}…` : reason;
  return `rollout failed for all ${results.length} items before an agent response (most common reason, ${n} of ${results.length}: ${clipped})`;
}

export interface EarlyStop {
  gate: GateSettings;
  /** The candidate must score strictly above this (the current gate score). */
  mustBeat: number;
  /** The skill's semantic-density bonus, constant for the candidate. */
  bonus: number;
}

export interface SetOutcome {
  results: RolloutResult[];
  /** All items were rolled out (false when stopped early). */
  complete: boolean;
  /** Items whose result the outcome counts (when stopped early: the decisive prefix). */
  evaluated: number;
  total: number;
  /** Rollouts started (≥ evaluated when stopped early: some were already in flight). */
  launched: number;
}

/**
 * Rolls skills out on tasks with bounded concurrency, caching every result by (skill hash, task
 * id, sample index) so no rollout is paid twice in a run (spec §10.4), and optionally stopping a
 * candidate's selection rollouts once even perfect scores on the rest could not beat the current
 * score (the decision is then the same as a full evaluation's).
 */
export class Evaluator {
  /** In-flight and finished rollouts, so two concurrent evaluations of one skill share calls. */
  private cache = new Map<string, Promise<RolloutResult>>();
  rolloutsRun = 0;
  /** Rollouts served from this run's (skill, task) cache instead of a new call. */
  rolloutsReused = 0;
  /** The context of every evaluation rollout (selection, test, slow update, eval-only). */
  private readonly evalCtx: BenchmarkContext;

  constructor(
    private readonly bench: Benchmark,
    ctx: BenchmarkContext,
    private readonly workers: number,
    private readonly events: EngineEvents,
  ) {
    this.evalCtx = { ...ctx, phase: "eval" };
    delete this.evalCtx.batchSeed;
  }

  /**
   * Roll `skill` out on `items`. With `batch` the rollouts are a training batch's: the benchmark
   * sees phase "train" and that batch's seed; otherwise phase "eval" and no batch seed. The two
   * (and batches of different seeds) never share cached results, as a benchmark may answer them
   * differently (LiveMath choice order, SpreadsheetBench gold feedback).
   */
  async run(skill: string, items: readonly TaskItem[], label: string, early?: EarlyStop, batch?: { seed: number }): Promise<SetOutcome> {
    const hash = skillHash(skill);
    const ctx: BenchmarkContext = batch ? { ...this.evalCtx, phase: "train", batchSeed: batch.seed } : this.evalCtx;
    const scope = batch ? `train:${batch.seed}` : "eval";
    const n = items.length;
    const results: (RolloutResult | undefined)[] = new Array(n);
    let next = 0;
    let done = 0;
    // Early rejection decides on the longest run of finished items in item order (the prefix), so
    // where it stops — and so every record of the step — does not depend on which answers arrive
    // first. Rollouts already in flight when it stops still finish (and stay cached) but are not
    // counted.
    let prefix = 0;
    let sumPrefix = 0;
    let integral = true;
    let stoppedAt: number | undefined;
    const bound = () => {
      if (!early) return false;
      const upper = (sumPrefix + (n - prefix)) / n + early.bonus;
      const margin = integral && early.bonus === 0 ? 0 : 1e-9;
      return upper <= early.mustBeat - margin;
    };
    const advance = () => {
      if (!early || stoppedAt !== undefined) return;
      if (bound()) {
        stoppedAt = prefix;
        return;
      }
      while (prefix < n && results[prefix] !== undefined) {
        const r = results[prefix]!;
        const s = itemScore(early.gate, Number(r.hard) || 0, Number(r.soft) || 0);
        sumPrefix += s;
        if (!Number.isInteger(s)) integral = false;
        prefix += 1;
        if (bound()) {
          stoppedAt = prefix;
          return;
        }
      }
    };
    advance();
    const worker = async () => {
      while (stoppedAt === undefined) {
        const i = next++;
        if (i >= n) return;
        const item = items[i]!;
        const key = `${hash}|${scope}|${item.id}|0`;
        let pending = this.cache.get(key);
        if (pending) this.rolloutsReused += 1;
        else {
          pending = this.bench.rollout(item, skill, ctx, 0);
          this.rolloutsRun += 1;
          this.cache.set(key, pending);
          // A failed rollout (a systemic error) must not poison later attempts.
          pending.catch(() => this.cache.delete(key));
        }
        const r = await pending;
        results[i] = r;
        done += 1;
        this.events.emit({ type: "progress", label, done, total: n });
        advance();
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.workers, n)) }, worker));
    if (stoppedAt !== undefined) {
      const got = results.slice(0, stoppedAt) as RolloutResult[];
      return { results: got, complete: false, evaluated: stoppedAt, total: n, launched: Math.min(next, n) };
    }
    const got = results.filter((r): r is RolloutResult => r !== undefined);
    return { results: got, complete: got.length === n, evaluated: got.length, total: n, launched: Math.min(next, n) };
  }
}
