/**
 * The paired sequential test behind the `paired` gate rule (docs/gate.md).
 *
 * Candidate and current are scored on the same items; each item gives a difference
 * d = candidate − current in [−1, 1]. The test keeps two betting wealth processes over the items
 * in a fixed order (Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
 * betting", 2023):
 *
 *   lower(m) = Π (1 + λ_i (d_i − m))      upper(m) = Π (1 − λ_i (d_i − m))
 *
 * with a predictable bet λ_i (it depends only on items before i) in [0, 0.45], so every factor
 * stays positive for m in [−1, 1]. Under "the mean difference is at most m" lower(m) is a
 * non-negative supermartingale, so by Ville's inequality it ever reaches 1/α with probability at
 * most α: { m : lower(m) < 1/α } is a lower confidence bound valid at every item count at once,
 * and the same for upper(m). Because the bets do not depend on m, both wealths are monotone in m
 * and the bounds are found by bisection.
 *
 *  - accept: the lower bound is above 0 (the candidate is better, at confidence 1 − α);
 *  - reject: the upper bound is below the minimum effect (whatever the gain, it is smaller than
 *    the gain worth accepting); or the split's mean difference cannot reach the minimum effect
 *    even if every remaining item favoured the candidate as much as it can (today's early
 *    rejection is this case with a minimum effect of 0); or the candidate broke more
 *    previously-passing items than the no-regression veto allows;
 *  - undecided: the items ran out first.
 *
 * Stopping as soon as a bound crosses is safe because the bounds hold at every item count
 * simultaneously; a fixed-n t-test checked after every item would not be.
 */

import type { InferOutput } from "valibot";
import type { GateDecisionSchema } from "./records.ts";

export type Verdict = "accept" | "reject" | "undecided";
export type VerdictReason = "better" | "not_better" | "below_min_effect" | "cannot_reach" | "regressions" | "end_of_split";

export interface SequentialSettings {
  /** One-sided error of each bound (1 − gate_confidence). */
  alpha: number;
  /** The smallest mean gain worth accepting (in score units, e.g. 0.02 = 2 points). */
  minEffect: number;
  /** Reject when the candidate fails more than this many items the current passed (null = off). */
  maxRegressions: number | null;
}

/** What one decision records (step records, summary, report, dashboard). */
export type GateDecision = InferOutput<typeof GateDecisionSchema>;

/** Cap on a bet, as a share of the largest bet that keeps the wealth positive. */
const CAP = 0.8;
/** Pseudo-items of prior evidence (mean 0, variance PRIOR_VAR) in the bet's plug-in estimates. */
const PRIOR_N = 1;
const PRIOR_VAR = 0.25;

/**
 * One betting wealth process: against "the mean difference ≤ m" (side +1) or "≥ m" (side −1).
 * Its bet is the growth-rate-optimal (Kelly) fraction for the plug-in mean and variance of the
 * items so far, (μ − m) / (σ² + (μ − m)²) (aGRAPA, WSR 2023 §B.3), capped so every factor stays
 * positive: predictable, so the wealth is a test supermartingale under its null.
 */
class Wealth {
  log = 0;
  private sum = 0;
  private sumSq = 0;
  private k = 0;

  constructor(
    readonly m: number,
    readonly side: 1 | -1,
  ) {}

  push(d: number): void {
    const n = this.k + PRIOR_N;
    const mean = this.sum / n;
    // E[(d − m)²] over the items so far plus the prior pseudo-items.
    const second = (PRIOR_N * (PRIOR_VAR + this.m * this.m) + this.sumSq - 2 * this.m * this.sum + this.k * this.m * this.m) / n;
    const gap = this.side * (mean - this.m);
    // Largest positive bet: the factor 1 + side·λ·(d − m) must stay > 0 for every d in [−1, 1].
    const room = 1 / (this.side === 1 ? 1 + this.m : 1 - this.m);
    const lam = gap > 0 ? Math.min(CAP * room, gap / Math.max(second, 1e-6)) : 0;
    this.log += Math.log1p(this.side * lam * (d - this.m));
    this.sum += d;
    this.sumSq += d * d;
    this.k += 1;
  }
}

/** The log-wealth of one process over a whole sequence (for bounds at arbitrary m). */
function logWealth(ds: readonly number[], m: number, side: 1 | -1): number {
  const w = new Wealth(m, side);
  for (const d of ds) w.push(d);
  return w.log;
}

/** A paired sequential test over items pushed in order. */
export class PairedSequentialTest {
  private readonly d: number[] = [];
  private sum = 0;
  private gained = 0;
  private lost = 0;
  private regressions = 0;
  private decided: { verdict: Verdict; reason: VerdictReason } | undefined;
  private readonly threshold: number;
  /** Against "no gain" (the accept side) and against "a gain of at least the minimum effect". */
  private readonly accept: Wealth;
  private readonly short: Wealth;

  /**
   * @param n items in the split (the test answers undecided after n items)
   * @param maxGain the largest difference item i can still give (1 − current's score on it when
   *   known, else 1); used for the "cannot reach" rejection
   */
  constructor(
    readonly n: number,
    readonly s: SequentialSettings,
    private readonly maxGain: (i: number) => number = () => 1,
  ) {
    if (!(s.alpha > 0 && s.alpha < 1)) throw new Error(`alpha must be in (0,1) (got ${s.alpha})`);
    this.threshold = Math.log(1 / s.alpha);
    this.accept = new Wealth(0, 1);
    this.short = new Wealth(Math.min(0.99, Math.max(-0.99, s.minEffect)), -1);
  }

  get used(): number {
    return this.d.length;
  }

  get verdict(): Verdict | undefined {
    return this.decided?.verdict;
  }

  /** Add an item's difference to the evidence without deciding (records of the strict rule). */
  observe(diff: number): void {
    this.accept.push(diff);
    this.short.push(diff);
    this.d.push(diff);
    this.sum += diff;
    if (diff > 1e-12) this.gained += 1;
    else if (diff < -1e-12) this.lost += 1;
  }

  /**
   * Add the next item's difference; `regression` marks an item the current passed and the
   * candidate failed (the no-regression veto counts them). Returns the verdict once decided.
   */
  push(diff: number, regression = false): Verdict | undefined {
    if (this.decided) return this.decided.verdict;
    if (!(diff >= -1 - 1e-12 && diff <= 1 + 1e-12)) throw new Error(`a paired difference must be in [-1, 1] (got ${diff})`);
    this.observe(diff);
    if (regression) this.regressions += 1;
    this.decided = this.check();
    return this.decided?.verdict;
  }

  private check(): { verdict: Verdict; reason: VerdictReason } | undefined {
    const s = this.s;
    if (s.maxRegressions !== null && this.regressions > s.maxRegressions) return { verdict: "reject", reason: "regressions" };
    if (this.accept.log >= this.threshold) return { verdict: "accept", reason: "better" };
    if (this.short.log >= this.threshold) return { verdict: "reject", reason: "below_min_effect" };
    const best = this.bestFinalMean();
    if (best < s.minEffect || (s.minEffect <= 0 && best <= 0)) return { verdict: "reject", reason: "cannot_reach" };
    if (this.d.length >= this.n) return { verdict: "undecided", reason: "end_of_split" };
    return undefined;
  }

  /** The full split's mean difference if every remaining item gave its largest possible difference. */
  private bestFinalMean(): number {
    let sum = this.sum;
    for (let i = this.d.length; i < this.n; i++) sum += Math.max(-1, Math.min(1, this.maxGain(i)));
    return sum / this.n;
  }

  /**
   * Always-valid bounds [lower, upper] for the mean difference: the m the data reject at the
   * test's confidence on either side (the confidence sequence of the same bets, read at the
   * items used). Found on a grid of m, refined by bisection at the crossing.
   */
  bounds(): [number, number] {
    if (!this.d.length) return [-1, 1];
    const mean = this.sum / this.d.length;
    const rejects = (m: number, side: 1 | -1) => logWealth(this.d, m, side) >= this.threshold;
    const edge = (side: 1 | -1): number => {
      // Walk from the estimate outwards (side +1: down to −1) to the first rejected m.
      const step = 0.02;
      let inside = mean;
      for (let m = mean - side * step; side === 1 ? m > -1 : m < 1; m -= side * step) {
        if (rejects(m, side)) {
          let a = inside;
          let b = m;
          for (let k = 0; k < 20; k++) {
            const mid = (a + b) / 2;
            if (rejects(mid, side)) b = mid;
            else a = mid;
          }
          return a;
        }
        inside = m;
      }
      return -side;
    };
    return [Math.max(-1, edge(1)), Math.min(1, edge(-1))];
  }

  /** The decision so far (call after the last push; undecided if the test has not stopped). */
  result(): GateDecision {
    const n = this.d.length;
    const [lo, hi] = this.bounds();
    const d = this.decided ?? { verdict: "undecided" as const, reason: "end_of_split" as const };
    return {
      rule: "paired",
      verdict: d.verdict,
      reason: d.reason,
      delta: n ? this.sum / n : 0,
      ci: [lo, hi],
      confidence: 1 - this.s.alpha,
      min_effect: this.s.minEffect,
      n_used: n,
      n_total: this.n,
      flips: { gained: this.gained, lost: this.lost },
    };
  }
}

/** Standard normal quantile (Acklam's rational approximation; |error| < 1.2e-9). */
export function normalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771082, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p <= 0 || p >= 1) throw new Error(`quantile of ${p}`);
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
}

/**
 * The smallest mean gain a paired comparison of n items can detect with 80 % power at the given
 * confidence, when items flip between two samples of the same skill at `flipRate` (a neutral
 * edit's differences then have variance ≈ flipRate): a fixed-n normal approximation, and never
 * less than the minimum number of won items the test needs (minimumWins) over n. The sequential
 * test needs somewhat more (docs/gate.md measures how much).
 */
export function detectableGain(n: number, flipRate: number, confidence: number): number {
  if (n <= 0) return 1;
  const z = normalQuantile(confidence) + normalQuantile(0.8);
  return Math.min(1, Math.max(z * Math.sqrt(Math.max(flipRate, 0) / n), minimumWins(confidence) / n));
}

/**
 * Items the candidate must win in a row, with no loss, before the test can accept: even a
 * noise-free target needs this many gained items, so no split smaller than it can accept anything.
 */
export function minimumWins(confidence: number): number {
  const t = new PairedSequentialTest(10_000, { alpha: 1 - confidence, minEffect: 0, maxRegressions: null });
  let k = 0;
  while (k < 10_000 && t.push(1) !== "accept") k += 1;
  return k + 1;
}
