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

export type Verdict = "accept" | "reject" | "undecided";
export type VerdictReason = "better" | "below_min_effect" | "cannot_reach" | "regressions" | "end_of_split";

export interface SequentialSettings {
  /** One-sided error of each bound (1 − gate_confidence). */
  alpha: number;
  /** The smallest mean gain worth accepting (in score units, e.g. 0.02 = 2 points). */
  minEffect: number;
  /** Reject when the candidate fails more than this many items the current passed (null = off). */
  maxRegressions: number | null;
}

/** What one decision records (step records, summary, report, dashboard). */
export interface GateDecision {
  rule: "strict" | "paired";
  verdict: Verdict;
  reason: VerdictReason;
  /** Mean difference candidate − current over the items used. */
  delta: number;
  /** Always-valid confidence bounds for the mean difference (each one-sided at `confidence`). */
  ci: [number, number];
  confidence: number;
  min_effect: number;
  n_used: number;
  n_total: number;
  /** Items the candidate scores higher than the current (gained) and lower (lost). */
  flips: { gained: number; lost: number };
}

const CAP = 0.45;

/** log(½eˣ + ½eʸ) without overflow. */
function logHalfSum(x: number, y: number): number {
  const m = Math.max(x, y);
  return m + Math.log((Math.exp(x - m) + Math.exp(y - m)) / 2);
}

/** A paired sequential test over items pushed in order. */
export class PairedSequentialTest {
  private readonly d: number[] = [];
  /** Bets: `up` targets a gain (the accept side), `down` a shortfall from the minimum effect, `wide` is the shape-free plug-in. */
  private readonly up: number[] = [];
  private readonly down: number[] = [];
  private readonly wide: number[] = [];
  private sum = 0;
  private sumSq = 0;
  private gained = 0;
  private lost = 0;
  private regressions = 0;
  private decided: { verdict: Verdict; reason: VerdictReason } | undefined;
  private readonly threshold: number;

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
  }

  get used(): number {
    return this.d.length;
  }

  get verdict(): Verdict | undefined {
    return this.decided?.verdict;
  }

  /**
   * The bets for the next item, from the items so far only (predictable). Mean and variance are
   * regularised by one pseudo-item (mean 0, variance 1) so the first bets are cautious.
   */
  private nextBets(): { up: number; down: number; wide: number } {
    const t = this.d.length;
    const mean = this.sum / (t + 1);
    const variance = Math.max((1 + this.sumSq - (t + 1) * mean * mean) / (t + 1), 1e-4);
    const clip = (x: number) => Math.max(0, Math.min(CAP, x));
    // Growth-rate-optimal (Kelly) bet against "mean ≤ m": (μ − m) / (σ² + (μ − m)²) (aGRAPA).
    const kelly = (gap: number) => clip(gap / (variance + gap * gap));
    const k = t + 1;
    return {
      up: kelly(mean),
      down: kelly(this.s.minEffect - mean),
      wide: clip(Math.sqrt((2 * this.threshold) / (variance * k * Math.log(1 + k)))),
    };
  }

  /**
   * Add the next item's difference; `regression` marks an item the current passed and the
   * candidate failed (the no-regression veto counts them). Returns the verdict once decided.
   */
  push(diff: number, regression = false): Verdict | undefined {
    if (this.decided) return this.decided.verdict;
    if (!(diff >= -1 - 1e-12 && diff <= 1 + 1e-12)) throw new Error(`a paired difference must be in [-1, 1] (got ${diff})`);
    const b = this.nextBets();
    this.up.push(b.up);
    this.down.push(b.down);
    this.wide.push(b.wide);
    this.d.push(diff);
    this.sum += diff;
    this.sumSq += diff * diff;
    if (diff > 1e-12) this.gained += 1;
    else if (diff < -1e-12) this.lost += 1;
    if (regression) this.regressions += 1;
    this.decided = this.check();
    return this.decided?.verdict;
  }

  private check(): { verdict: Verdict; reason: VerdictReason } | undefined {
    const s = this.s;
    if (s.maxRegressions !== null && this.regressions > s.maxRegressions) return { verdict: "reject", reason: "regressions" };
    if (this.logLower(0) >= this.threshold) return { verdict: "accept", reason: "better" };
    if (this.logUpper(s.minEffect) >= this.threshold) return { verdict: "reject", reason: "below_min_effect" };
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

  /** log of the wealth against "mean difference ≤ m" (half on each bettor). */
  private logLower(m: number): number {
    let a = 0;
    let w = 0;
    for (let i = 0; i < this.d.length; i++) {
      a += Math.log1p(this.up[i]! * (this.d[i]! - m));
      w += Math.log1p(this.wide[i]! * (this.d[i]! - m));
    }
    return logHalfSum(a, w);
  }

  /** log of the wealth against "mean difference ≥ m". */
  private logUpper(m: number): number {
    let a = 0;
    let w = 0;
    for (let i = 0; i < this.d.length; i++) {
      a += Math.log1p(-this.down[i]! * (this.d[i]! - m));
      w += Math.log1p(-this.wide[i]! * (this.d[i]! - m));
    }
    return logHalfSum(a, w);
  }

  /** The always-valid bounds [lower, upper] for the mean difference from the items so far. */
  bounds(): [number, number] {
    if (!this.d.length) return [-1, 1];
    // lower(m) decreases in m: the bound is where it crosses 1/α (or −1 when it never does).
    let lo = -1;
    let hi = 1;
    if (this.logLower(-1) < this.threshold) lo = -1;
    else {
      let a = -1;
      let b = 1;
      for (let k = 0; k < 50; k++) {
        const mid = (a + b) / 2;
        if (this.logLower(mid) >= this.threshold) a = mid;
        else b = mid;
      }
      lo = a;
    }
    if (this.logUpper(1) < this.threshold) hi = 1;
    else {
      let a = -1;
      let b = 1;
      for (let k = 0; k < 50; k++) {
        const mid = (a + b) / 2;
        if (this.logUpper(mid) >= this.threshold) b = mid;
        else a = mid;
      }
      hi = b;
    }
    return [lo, hi];
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
 * edit's differences then have variance ≈ flipRate). A fixed-n normal approximation: the
 * sequential test needs somewhat more (docs/gate.md measures how much).
 */
export function detectableGain(n: number, flipRate: number, confidence: number): number {
  if (n <= 0) return 1;
  const z = normalQuantile(confidence) + normalQuantile(0.8);
  return Math.min(1, z * Math.sqrt(Math.max(flipRate, 0) / n));
}
