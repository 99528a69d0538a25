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
 * with a predictable bet λ_i ≥ 0 (it depends only on items before i), capped so every factor
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
 *  - reject for futility: enough items are in (FUTILITY_MIN_ITEMS) and even an optimistic gain
 *    (the mean so far plus FUTILITY_Z standard errors) would leave less than `futility` chance to
 *    reach the accept bound by the end of the split. Stopping to reject never adds a false accept;
 *    it only saves the rollouts of a decision that was going to end undecided or rejected;
 *  - undecided: the items ran out first.
 *
 * Stopping as soon as a bound crosses is safe because the bounds hold at every item count
 * simultaneously; a fixed-n t-test checked after every item would not be.
 */

import type { InferOutput } from "valibot";
import type { GateDecisionSchema } from "./records.ts";

type Verdict = "accept" | "reject" | "undecided";
type VerdictReason = GateDecision["reason"];

export interface SequentialSettings {
  /** One-sided error of each bound (1 − gate_confidence). */
  alpha: number;
  /** The smallest mean gain worth accepting (in score units, e.g. 0.02 = 2 points). */
  minEffect: number;
  /** Reject when the candidate fails more than this many items the current passed (null = off). */
  maxRegressions: number | null;
  /**
   * Futility bound: reject once the chance of reaching the accept bound by the end of the split,
   * under an optimistic gain, falls below this (default FUTILITY; 0 = never stop for futility).
   */
  futility?: number;
}

/** Default futility bound (conditional chance of a later accept). */
const FUTILITY = 0.2;
/** Items before the futility bound may stop a decision. */
export const FUTILITY_MIN_ITEMS = 40;
/** The optimistic gain of the futility bound: the mean so far plus this many standard errors. */
const FUTILITY_Z = 1.5;

/** What one decision records (step records, summary, report, dashboard). */
export type GateDecision = InferOutput<typeof GateDecisionSchema>;

/** Cap on a bet, as a share of the largest bet that keeps the wealth positive. */
const CAP = 0.8;
/** Pseudo-items of prior evidence (mean 0, variance PRIOR_VAR) in the bet's plug-in variance. */
const PRIOR_N = 1;
const PRIOR_VAR = 0.25;
/** Floor of the plug-in variance (a run of identical differences must not bet everything). */
const MIN_VAR = 1e-3;

/**
 * One betting wealth process: against "the mean difference ≤ m" (side +1) or "≥ m" (side −1).
 * Its bet is the predictable plug-in of WSR 2023 §3 tuned to the split: with the split's length n
 * known in advance, λ = √(2 log(1/α) / (n σ̂²)), σ̂² the variance of the differences so far
 * (around their own mean, with a prior pseudo-item). That is the constant bet that reaches 1/α at
 * the end of the split for the smallest mean it can detect there, which makes the test nearly as
 * powerful at the split's end as an oracle bet, instead of betting nothing while the running mean
 * happens to be negative (aGRAPA's Kelly fraction, which this replaced, lost about half the power
 * at +5 points in the laboratory). The bet never uses the item it multiplies and never depends on
 * m's side of the data, so the wealth is a test supermartingale under its null; capped so every
 * factor stays positive.
 */
class Wealth {
  log = 0;
  private sum = 0;
  private sumSq = 0;
  private k = 0;
  private readonly scale: number;

  constructor(
    readonly m: number,
    readonly side: 1 | -1,
    horizon: number,
    alpha: number,
  ) {
    this.scale = Math.sqrt((2 * Math.log(1 / alpha)) / Math.max(1, horizon));
  }

  push(d: number): void {
    const n = this.k + PRIOR_N;
    const mean = this.sum / n;
    const variance = Math.max(MIN_VAR, (PRIOR_N * PRIOR_VAR + this.sumSq) / n - mean * mean);
    // Largest positive bet: the factor 1 + side·λ·(d − m) must stay > 0 for every d in [−1, 1].
    const room = 1 / (this.side === 1 ? 1 + this.m : 1 - this.m);
    const lam = Math.min(CAP * room, this.scale / Math.sqrt(variance));
    this.log += Math.log1p(this.side * lam * (d - this.m));
    this.sum += d;
    this.sumSq += d * d;
    this.k += 1;
  }
}

/** The log-wealth of one process over a whole sequence (for bounds at arbitrary m). */
function logWealth(ds: readonly number[], m: number, side: 1 | -1, horizon: number, alpha: number): number {
  const w = new Wealth(m, side, horizon, alpha);
  for (const d of ds) w.push(d);
  return w.log;
}

/** Standard normal distribution function (Abramowitz–Stegun 7.1.26; |error| < 1.5e-7). */
export function normalCdf(x: number): number {
  const t = 1 / (1 + (0.3275911 * Math.abs(x)) / Math.SQRT2);
  const erf =
    1 -
    ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) *
      t *
      Math.exp((-x * x) / 2);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
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
    this.accept = new Wealth(0, 1, n, s.alpha);
    this.short = new Wealth(Math.min(0.99, Math.max(-0.99, s.minEffect)), -1, n, s.alpha);
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
    if (!(diff >= -1 - 1e-12 && diff <= 1 + 1e-12))
      throw new Error(`a paired difference must be in [-1, 1] (got ${diff})`);
    this.observe(diff);
    if (regression) this.regressions += 1;
    this.decided = this.check();
    return this.decided?.verdict;
  }

  private check(): { verdict: Verdict; reason: VerdictReason } | undefined {
    const s = this.s;
    if (s.maxRegressions !== null && this.regressions > s.maxRegressions)
      return { verdict: "reject", reason: "regressions" };
    if (this.accept.log >= this.threshold) return { verdict: "accept", reason: "better" };
    if (this.short.log >= this.threshold) return { verdict: "reject", reason: "below_min_effect" };
    const best = this.bestFinalMean();
    if (best < s.minEffect || (s.minEffect <= 0 && best <= 0)) return { verdict: "reject", reason: "cannot_reach" };
    if (this.d.length >= this.n) return { verdict: "undecided", reason: "end_of_split" };
    if (this.futile()) return { verdict: "reject", reason: "futile" };
    return undefined;
  }

  /**
   * Conditional chance of reaching the accept bound by the split's end, under the optimistic gain
   * θ = mean + FUTILITY_Z·SE, is below the futility bound. The remaining r items are taken as
   * normal with the variance so far, bet on with the constant bet that best covers the missing
   * log-wealth G: reaching it needs their sum to pass (G + λ²rσ²/2)/λ.
   */
  private futile(): boolean {
    const bound = this.s.futility ?? FUTILITY;
    const k = this.d.length;
    const r = this.n - k;
    if (bound <= 0 || k < FUTILITY_MIN_ITEMS || r <= 0) return false;
    const mean = this.sum / k;
    let ss = 0;
    for (const x of this.d) ss += (x - mean) ** 2;
    const variance = Math.max(0.02, ss / (k - 1));
    const theta = mean + FUTILITY_Z * Math.sqrt(variance / k);
    const missing = Math.max(0.1, this.threshold - this.accept.log);
    const lam = Math.min(CAP, Math.sqrt((2 * missing) / (r * variance)));
    const needed = (missing + (lam * lam * r * variance) / 2) / lam;
    return 1 - normalCdf((needed - r * theta) / Math.sqrt(r * variance)) < bound;
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
    const rejects = (m: number, side: 1 | -1) => logWealth(this.d, m, side, this.n, this.s.alpha) >= this.threshold;
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
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771082, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  if (p <= 0 || p >= 1) throw new Error(`quantile of ${p}`);
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - lo) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
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
  return Math.min(1, Math.max(z * Math.sqrt(Math.max(flipRate, 0) / n), minimumWins(confidence, n) / n));
}

/**
 * Items the candidate must win in a row, with no loss, before the test on a split of n items can
 * accept: even a noise-free target needs this many gained items, so a split with fewer cannot
 * accept anything (n + 1 when even n straight wins are not enough).
 */
export function minimumWins(confidence: number, n: number): number {
  const t = new PairedSequentialTest(n, { alpha: 1 - confidence, minEffect: 0, maxRegressions: null, futility: 0 });
  for (let k = 1; k <= n; k++) if (t.push(1) === "accept") return k;
  return n + 1;
}

/**
 * A decision read item by item (the paired and posterior rules): the evaluator pushes each item's
 * difference in the gate's order and stops rolling out once a verdict is in.
 */
export interface ItemTest {
  push(diff: number, regression?: boolean): GateDecision["verdict"] | undefined;
  observe(diff: number): void;
  result(): GateDecision;
  readonly used: number;
}
