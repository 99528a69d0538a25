/**
 * The `posterior` gate rule (docs/gate.md): accept a candidate when the posterior probability
 * that it is better than the current skill clears a threshold, and the items themselves favour it.
 *
 * The per-item differences d = candidate − current have a mean d̄ over the k items read; the true
 * gain Δ gets a normal prior N(μ₀, τ²) and d̄ a normal likelihood N(Δ, s²/k), s² the variance of
 * the differences so far pooled with PRIOR_ITEMS pseudo-items at the noise floor's variance (a
 * neutral edit's differences vary about as often as the current skill flips between two samples).
 * The posterior is normal:
 *
 *   precision = 1/τ² + k/s²,   mean = (μ₀/τ² + k·d̄/s²) / precision,   P(Δ > 0) = Φ(mean·√precision)
 *
 * μ₀ is learned from the run's own history: the mean observed gain of the candidates decided so
 * far, shrunk towards 0 by HISTORY_PSEUDO pseudo-candidates (a run whose proposals mostly help
 * starts each decision a little optimistic; one whose proposals mostly hurt, a little sceptical).
 *
 *  - accept: every item is read, P(Δ > 0) ≥ threshold, and the candidate won more items than it
 *    lost (the prior alone never accepts anything); or, on a split of at most DOMINANCE_MAX_ITEMS
 *    items, clear dominance: at least one item won and none lost (reason `dominates`);
 *  - reject: the mean cannot become positive even if every remaining item favoured the candidate
 *    (cannot_reach); or, once EARLY_ITEMS are in, P(Δ > 0) < EARLY_REJECT (futile); or the
 *    no-regression veto; or, at the end, P(Δ > 0) < ½ (not_better);
 *  - undecided: at the end, ½ ≤ P(Δ > 0) < threshold.
 *
 * This is a decision rule, not a test: it does not bound false accepts at a level. What it aims
 * at is the expected held-out gain per call on small splits, where the paired test cannot accept
 * anything (docs/gate.md: the end-to-end table). An accept the paired test would not have made on
 * the same items is marked `low_evidence`.
 */

import {
  type GateDecision,
  type ItemTest,
  normalCdf,
  PairedSequentialTest,
  type SequentialSettings,
} from "./sequential.ts";

/** The prior on a candidate's gain and the noise it is measured in. */
interface PosteriorPrior {
  /** Prior mean gain μ₀ (score units). */
  mean: number;
  /** Prior standard deviation τ of a candidate's gain. */
  sd: number;
  /** Per-item variance of a neutral edit's differences (the noise floor's flip rate). */
  noiseVar: number;
}

/** Settings of the posterior rule. */
interface PosteriorSettings {
  /** Accept at this posterior probability of a gain (or above). */
  threshold: number;
}

const POSTERIOR_DEFAULTS: PosteriorSettings = { threshold: 0.7 };
/** Prior standard deviation of a candidate's gain: most edits move a skill by a few to ~20 points. */
const PRIOR_SD = 0.15;
/** Pseudo-items of prior variance pooled into the per-item variance. */
const PRIOR_ITEMS = 4;
/** Floor of the prior per-item variance (a flip rate of 0 measured on a handful of items proves little). */
const MIN_NOISE_VAR = 0.05;
/** Pseudo-candidates of zero gain the learned prior mean is shrunk with. */
const HISTORY_PSEUDO = 4;
/** Items before the futility stop may end a decision. */
const EARLY_ITEMS = 20;
/** Futility: stop to reject when the chance of a gain falls below this. */
const EARLY_REJECT = 0.02;
/** Splits this small accept on clear dominance: at least one item won and none lost (marked low evidence). */
const DOMINANCE_MAX_ITEMS = 10;

/**
 * The prior of the next decision from the run's history of observed gains (candidates decided so
 * far, each the mean difference over the items it was decided on) and the noise floor.
 */
export function posteriorPrior(history: readonly number[], flipRate: number | undefined): PosteriorPrior {
  const sum = history.reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0);
  const mean = sum / (history.length + HISTORY_PSEUDO);
  return {
    mean: Math.max(-PRIOR_SD, Math.min(PRIOR_SD, mean)),
    sd: PRIOR_SD,
    noiseVar: Math.max(MIN_NOISE_VAR, flipRate ?? 0),
  };
}

/** The posterior probability of a gain after these differences. */
export function probabilityOfGain(diffs: readonly number[], prior: PosteriorPrior): { p: number; mean: number } {
  const k = diffs.length;
  if (!k) return { p: normalCdf(prior.mean / prior.sd), mean: prior.mean };
  const mean = diffs.reduce((a, b) => a + b, 0) / k;
  const ss = diffs.reduce((a, d) => a + (d - mean) ** 2, 0);
  const s2 = (PRIOR_ITEMS * prior.noiseVar + ss) / (PRIOR_ITEMS + k - 1);
  const precision = 1 / prior.sd ** 2 + k / s2;
  const post = (prior.mean / prior.sd ** 2 + (k * mean) / s2) / precision;
  return { p: normalCdf(post * Math.sqrt(precision)), mean: post };
}

type Verdict = GateDecision["verdict"];

/** The posterior rule over items pushed in order (the same protocol as PairedSequentialTest). */
export class PosteriorTest implements ItemTest {
  private readonly d: number[] = [];
  private regressions = 0;
  private decided: { verdict: Verdict; reason: GateDecision["reason"] } | undefined;
  /** The paired test on the same items: its bounds go in the record; an accept it would not make is low evidence. */
  private readonly paired: PairedSequentialTest;

  constructor(
    readonly n: number,
    readonly s: SequentialSettings,
    readonly prior: PosteriorPrior,
    readonly ps: PosteriorSettings = POSTERIOR_DEFAULTS,
    private readonly maxGain: (i: number) => number = () => 1,
  ) {
    this.paired = new PairedSequentialTest(n, s);
  }

  get used(): number {
    return this.d.length;
  }

  get verdict(): Verdict | undefined {
    return this.decided?.verdict;
  }

  observe(diff: number): void {
    this.d.push(diff);
    this.paired.observe(diff);
  }

  push(diff: number, regression = false): Verdict | undefined {
    if (this.decided) return this.decided.verdict;
    if (!(diff >= -1 - 1e-12 && diff <= 1 + 1e-12))
      throw new Error(`a paired difference must be in [-1, 1] (got ${diff})`);
    this.observe(diff);
    if (regression) this.regressions += 1;
    this.decided = this.check();
    return this.decided?.verdict;
  }

  private check(): { verdict: Verdict; reason: GateDecision["reason"] } | undefined {
    const k = this.d.length;
    if (this.s.maxRegressions !== null && this.regressions > this.s.maxRegressions)
      return { verdict: "reject", reason: "regressions" };
    let best = this.d.reduce((a, b) => a + b, 0);
    for (let i = k; i < this.n; i++) best += Math.max(-1, Math.min(1, this.maxGain(i)));
    if (best <= 1e-12) return { verdict: "reject", reason: "cannot_reach" };
    const { p } = probabilityOfGain(this.d, this.prior);
    if (k >= this.n) {
      if (p >= this.ps.threshold && this.won() > this.lost()) return { verdict: "accept", reason: "better" };
      if (this.n <= DOMINANCE_MAX_ITEMS && this.won() > 0 && this.lost() === 0)
        return { verdict: "accept", reason: "dominates" };
      return p < 0.5 || this.won() <= this.lost()
        ? { verdict: "reject", reason: "not_better" }
        : { verdict: "undecided", reason: "end_of_split" };
    }
    if (k >= EARLY_ITEMS && p < EARLY_REJECT) return { verdict: "reject", reason: "futile" };
    return undefined;
  }

  private won(): number {
    return this.d.filter((x) => x > 1e-12).length;
  }

  private lost(): number {
    return this.d.filter((x) => x < -1e-12).length;
  }

  result(): GateDecision {
    const r = this.paired.result();
    const d = this.decided ?? { verdict: "undecided" as const, reason: "end_of_split" as const };
    const { p } = probabilityOfGain(this.d, this.prior);
    const accept = d.verdict === "accept";
    return {
      ...r,
      rule: "posterior",
      verdict: d.verdict,
      reason: d.reason,
      prob_gain: Math.round(p * 1e4) / 1e4,
      prior_mean: Math.round(this.prior.mean * 1e4) / 1e4,
      ...(accept ? { low_evidence: !(r.ci[0] > 0) } : {}),
    };
  }
}
