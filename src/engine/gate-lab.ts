/**
 * The gate laboratory: (current, candidate) skill pairs on a stochastic target whose true
 * accuracy difference is planted exactly, selection items and answer samples drawn with their own
 * seeds, and any gate rule run on them. Every gate claim in docs/gate.md is measured here
 * (bench/gate.ts prints the figures; test/engine/gate-lab.test.ts checks the properties).
 *
 * A skill is its per-item success probability over a population of items (what the stochastic
 * simulator states exactly for a skill text, src/backends/sim/stochastic.ts); an answer to
 * (skill, item, sample) passes when its draw falls below that probability.
 */
import { mulberry32 } from "../lib/index.ts";
import {
  type GateDecision,
  normalCdf,
  normalQuantile,
  PairedSequentialTest,
  type SequentialSettings,
} from "./sequential.ts";

/** A draw in [0,1) for a tuple of integers (the answer to (seed, skill, item, sample)). */
function drawOf(...xs: number[]): number {
  let h = 0x811c9dc5;
  for (const x of xs) {
    h = Math.imul(h ^ (x >>> 0), 0x01000193);
    h ^= h >>> 13;
    h = Math.imul(h, 0x5bd1e995);
    h ^= h >>> 15;
  }
  return mulberry32(h)();
}

interface LabPair {
  /** Success probability of each population item under the current skill. */
  current: Float64Array;
  candidate: Float64Array;
  /** Exact population accuracy difference candidate − current. */
  trueDelta: number;
}

export interface LabNoise {
  /** Items in the population a pair is defined on. */
  population: number;
  /** Share of items whose outcome is uncertain (probability between 0.15 and 0.85). */
  borderline: number;
  /** Share of items an edit breaks while it helps others (before the planted net effect). */
  churn: number;
}

export const DEFAULT_NOISE: LabNoise = { population: 4000, borderline: 0.2, churn: 0.03 };

/** Mean of an array. */
function mean(xs: Float64Array): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/**
 * A (current, candidate) pair whose population accuracies differ by exactly `delta`. The current
 * skill passes about 60 % of items reliably, fails 20 % reliably and is uncertain on the rest.
 * The candidate breaks a `churn` share of passing items and fixes failing ones so that the net
 * difference is `delta`; with delta = 0 it still changes items (a neutral edit is not a no-op).
 */
export function plantPair(seed: number, delta: number, noise: LabNoise = DEFAULT_NOISE): LabPair {
  const r = mulberry32(seed);
  const N = noise.population;
  const cur = new Float64Array(N);
  for (let i = 0; i < N; i++) {
    const u = r();
    if (u < noise.borderline) cur[i] = 0.15 + 0.7 * r();
    else if (u < noise.borderline + 0.6) cur[i] = 0.97 + 0.03 * r();
    else cur[i] = 0.03 * r();
  }
  const cand = Float64Array.from(cur);
  const order = Array.from({ length: N }, (_, i) => i);
  for (let i = N - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  // Mass (in items) to move down and up so that up − down = delta·N exactly.
  const target = delta * N;
  let down = Math.max(noise.churn * N * 0.8, -target + noise.churn * N * 0.4);
  let up = target + down;
  for (const i of order) {
    if (down > 1e-12 && cur[i]! > 0.5) {
      const take = Math.min(down, cur[i]! * 0.85);
      cand[i] = cur[i]! - take;
      down -= take;
    } else if (up > 1e-12 && cur[i]! < 0.5) {
      const give = Math.min(up, 0.97 - cur[i]!);
      cand[i] = cur[i]! + give;
      up -= give;
    }
    if (down <= 1e-12 && up <= 1e-12) break;
  }
  if (down > 1e-9 || up > 1e-9) throw new Error(`cannot plant Δ=${delta} in a population of ${N}`);
  return { current: cur, candidate: cand, trueDelta: mean(cand) - mean(cur) };
}

/** Flip rate of a skill: the chance that two samples of one item disagree, averaged over items. */
function flipRate(p: Float64Array): number {
  let s = 0;
  for (const x of p) s += 2 * x * (1 - x);
  return s / p.length;
}

/**
 * Variance of one item's paired difference d = candidate − current for a pair (an item drawn from
 * the population, one answer sample of each skill): E[d²] − Δ², with P(d = ±1) per item from the
 * two success probabilities.
 */
function diffVariance(pair: LabPair): number {
  let e2 = 0;
  for (let i = 0; i < pair.current.length; i++) {
    const p = pair.current[i]!;
    const q = pair.candidate[i]!;
    e2 += q * (1 - p) + p * (1 - q);
  }
  return e2 / pair.current.length - pair.trueDelta ** 2;
}

/**
 * The statistical ceiling: power of a fixed-n one-sided paired z-test at level α that knows the
 * per-item difference variance (the best a level-α test of "no gain" can do on n such items,
 * up to the normal approximation), and the n at which that test reaches 80 %.
 */
function fixedNCeiling(delta: number, variance: number, n: number, alpha: number): { power: number; n80: number } {
  const z = normalQuantile(1 - alpha);
  const power = 1 - normalCdf(z - (delta * Math.sqrt(n)) / Math.sqrt(variance));
  const n80 =
    delta > 0 ? Math.ceil(((z + normalQuantile(0.8)) ** 2 * variance) / delta ** 2) : Number.POSITIVE_INFINITY;
  return { power, n80 };
}

interface LabTrial {
  pair: LabPair;
  /** Population indices of the selection split, in evaluation order. */
  items: number[];
  /** Per selection item: current's and candidate's answer (1 pass, 0 fail). */
  cur: Uint8Array;
  cand: Uint8Array;
}

/** Draw a selection split of n items and one answer sample per (skill, item). */
export function drawTrial(pair: LabPair, n: number, itemSeed: number, sampleSeed: number): LabTrial {
  const r = mulberry32(itemSeed);
  const N = pair.current.length;
  const picked = new Set<number>();
  while (picked.size < Math.min(n, N)) picked.add(Math.floor(r() * N));
  const items = [...picked];
  const cur = new Uint8Array(items.length);
  const cand = new Uint8Array(items.length);
  items.forEach((it, k) => {
    cur[k] = drawOf(sampleSeed, 0, it) < pair.current[it]! ? 1 : 0;
    cand[k] = drawOf(sampleSeed, 1, it) < pair.candidate[it]! ? 1 : 0;
  });
  return { pair, items, cur, cand };
}

interface RuleOutcome {
  verdict: "accept" | "reject" | "undecided";
  /** Candidate rollouts the rule used (the current's per-item results are cached). */
  rollouts: number;
  decision?: GateDecision;
}

/** The reference rule: candidate mean strictly above current mean, with today's early rejection. */
export function strictRule(t: LabTrial, earlyReject = true): RuleOutcome {
  const n = t.cur.length;
  let curSum = 0;
  for (const x of t.cur) curSum += x;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += t.cand[i]!;
    if (earlyReject && sum + (n - i - 1) <= curSum) return { verdict: "reject", rollouts: i + 1 };
  }
  return { verdict: sum > curSum ? "accept" : "reject", rollouts: n };
}

/** The paired sequential rule on a trial. */
export function pairedRule(t: LabTrial, s: SequentialSettings): RuleOutcome {
  const n = t.cur.length;
  const test = new PairedSequentialTest(n, s, (i) => 1 - t.cur[i]!);
  for (let i = 0; i < n; i++) {
    if (test.push(t.cand[i]! - t.cur[i]!, t.cur[i] === 1 && t.cand[i] === 0)) break;
  }
  const decision = test.result();
  return { verdict: decision.verdict, rollouts: decision.n_used, decision };
}

export interface LabRow {
  effect: number;
  rule: "strict" | "paired" | "fixed-t";
  trials: number;
  accept: number;
  reject: number;
  undecided: number;
  meanRollouts: number;
}

/**
 * A fixed-n one-sided paired t-test on the whole split (not sequential, not always-valid, and only
 * approximately level α on such skewed differences): what the statistical ceiling looks like when
 * measured on the same draws.
 */
function fixedTRule(t: LabTrial, alpha: number): RuleOutcome {
  const n = t.cur.length;
  let sum = 0;
  let sq = 0;
  for (let i = 0; i < n; i++) {
    const d = t.cand[i]! - t.cur[i]!;
    sum += d;
    sq += d * d;
  }
  const mean = sum / n;
  const sd = Math.sqrt(Math.max(0, (sq - n * mean * mean) / (n - 1)));
  const stat = sd > 0 ? mean / (sd / Math.sqrt(n)) : mean > 0 ? Number.POSITIVE_INFINITY : 0;
  return { verdict: stat > normalQuantile(1 - alpha) ? "accept" : "reject", rollouts: n };
}

/** The statistical ceiling of one planted effect, averaged over its trials' pairs. */
export interface LabCeiling {
  effect: number;
  /** Mean per-item difference variance. */
  variance: number;
  /** Mean power of the fixed-n one-sided z-test at that variance (the best any level-α test can do). */
  power: number;
  /** Items the fixed-n test needs for 80 % power (Infinity at Δ ≤ 0). */
  n80: number;
}

const RULES = ["strict", "paired", "fixed-t"] as const;

/** Run `trials` trials per planted effect (percentage points) for every rule on the same trials. */
export function runLab(o: {
  effects: number[];
  trials: number;
  n: number;
  settings: SequentialSettings;
  seed?: number;
  noise?: LabNoise;
}): {
  rows: LabRow[];
  flipRate: number;
  ceilings: LabCeiling[];
} {
  const rows: LabRow[] = [];
  const ceilings: LabCeiling[] = [];
  const flips: number[] = [];
  for (const effect of o.effects) {
    const acc = Object.fromEntries(RULES.map((r) => [r, { accept: 0, reject: 0, undecided: 0, roll: 0 }]));
    let variance = 0;
    let power = 0;
    for (let k = 0; k < o.trials; k++) {
      const base = (o.seed ?? 1) * 1_000_003 + k * 7919;
      const pair = plantPair(base + 1, effect / 100, o.noise);
      if (k === 0) flips.push(flipRate(pair.current));
      const v = diffVariance(pair);
      variance += v;
      power += fixedNCeiling(pair.trueDelta, v, o.n, o.settings.alpha).power;
      const trial = drawTrial(pair, o.n, base + 2, base + 3);
      const outs = {
        strict: strictRule(trial),
        paired: pairedRule(trial, o.settings),
        "fixed-t": fixedTRule(trial, o.settings.alpha),
      };
      for (const rule of RULES) {
        const out = outs[rule];
        acc[rule]![out.verdict] += 1;
        acc[rule]!.roll += out.rollouts;
      }
    }
    variance /= o.trials;
    ceilings.push({
      effect,
      variance,
      power: power / o.trials,
      n80: fixedNCeiling(effect / 100, variance, o.n, o.settings.alpha).n80,
    });
    for (const rule of RULES) {
      const a = acc[rule]!;
      rows.push({
        effect,
        rule,
        trials: o.trials,
        accept: a.accept,
        reject: a.reject,
        undecided: a.undecided,
        meanRollouts: a.roll / o.trials,
      });
    }
  }
  return { rows, flipRate: flips.reduce((s, x) => s + x, 0) / Math.max(1, flips.length), ceilings };
}
