import { describe, expect, test } from "bun:test";
import { drawTrial, pairedRule, plantPair, strictRule } from "../../src/engine/gate-lab.ts";
import { detectableGain, FUTILITY_MIN_ITEMS, minimumWins, PairedSequentialTest } from "../../src/engine/sequential.ts";

const S = { alpha: 0.05, minEffect: 0.02, maxRegressions: null };
const mean = (p: Float64Array) => p.reduce((s, x) => s + x, 0) / p.length;

describe("gate laboratory", () => {
  test("planted pairs differ by exactly the planted effect", () => {
    for (const effect of [-5, 0, 2, 5, 10]) {
      const pair = plantPair(11 + effect, effect / 100);
      expect(pair.trueDelta).toBeCloseTo(effect / 100, 9);
      expect(mean(pair.candidate) - mean(pair.current)).toBeCloseTo(effect / 100, 9);
      // A neutral edit is not a no-op: it changes items both ways.
      if (effect === 0) expect(pair.candidate.some((x, i) => x !== pair.current[i])).toBe(true);
    }
  });

  test("a neutral planted edit: paired rejects or leaves undecided across seeds where strict accepts some", () => {
    let strictAccepts = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const trial = drawTrial(plantPair(seed * 101, 0), 200, seed * 7, seed * 13);
      if (strictRule(trial).verdict === "accept") strictAccepts += 1;
      expect(["reject", "undecided"]).toContain(pairedRule(trial, S).verdict);
    }
    expect(strictAccepts).toBeGreaterThan(5);
  });

  test("the futility bound stops hopeless decisions early and never turns a neutral edit into an accept", () => {
    let rollouts = 0;
    let futile = 0;
    let rolloutsOff = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const trial = drawTrial(plantPair(seed * 101, 0), 200, seed * 7, seed * 13);
      const on = pairedRule(trial, S);
      const off = pairedRule(trial, { ...S, futility: 0 });
      expect(on.verdict).not.toBe("accept");
      // The bound only adds a way to stop: it never reads more items than the test without it.
      expect(on.rollouts).toBeLessThanOrEqual(off.rollouts);
      rollouts += on.rollouts;
      rolloutsOff += off.rollouts;
      if (on.decision!.reason === "futile") {
        futile += 1;
        expect(on.rollouts).toBeGreaterThanOrEqual(FUTILITY_MIN_ITEMS);
      }
    }
    expect(futile).toBeGreaterThan(20);
    expect(rollouts / 40).toBeLessThan(0.6 * 200);
    expect(rolloutsOff / 40).toBeGreaterThan(0.8 * 200);
  });

  test("a large planted gain: paired accepts using fewer than the full split's rollouts", () => {
    let accepted = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const trial = drawTrial(plantPair(seed * 103, 0.2), 200, seed * 7, seed * 13);
      const out = pairedRule(trial, S);
      if (out.verdict === "accept") {
        accepted += 1;
        expect(out.rollouts).toBeLessThan(200);
        expect(out.decision!.ci[0]).toBeGreaterThan(0);
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(18);
  });
});

describe("paired sequential test", () => {
  test("its bounds contain the estimate and accept exactly when the lower bound passes 0", () => {
    const t = new PairedSequentialTest(100, S);
    for (let i = 0; i < 100 && !t.verdict; i++) t.push(i % 3 === 0 ? 1 : 0);
    const r = t.result();
    expect(r.verdict).toBe("accept");
    expect(r.reason).toBe("better");
    expect(r.ci[0]).toBeGreaterThan(0);
    expect(r.ci[0]).toBeLessThanOrEqual(r.delta);
    expect(r.ci[1]).toBeGreaterThanOrEqual(r.delta);
    expect(r.n_used).toBeLessThan(100);
    expect(r.flips).toEqual({ gained: Math.ceil(r.n_used / 3), lost: 0 });
  });

  test("today's early rejection is the 'cannot reach' case; the veto rejects on regressions", () => {
    const t = new PairedSequentialTest(10, S, () => 0); // the current passes every remaining item
    t.push(0);
    expect(t.result()).toMatchObject({ verdict: "reject", reason: "cannot_reach", n_used: 1 });
    const v = new PairedSequentialTest(50, { ...S, maxRegressions: 1 });
    v.push(1);
    v.push(-1, true);
    expect(v.verdict).toBeUndefined();
    v.push(-1, true);
    expect(v.result()).toMatchObject({ verdict: "reject", reason: "regressions" });
  });

  test("a split too short to decide ends undecided", () => {
    const t = new PairedSequentialTest(6, S);
    for (const d of [1, 0, 1, -1, 1, 0]) t.push(d);
    expect(t.result()).toMatchObject({ verdict: "undecided", reason: "end_of_split", n_used: 6 });
  });

  test("smallest detectable gain: the noise term, never below the wins the test needs", () => {
    // 2000 items, 12 % flips, 95 %: (1.645 + 0.842) · sqrt(0.12 / 2000) ≈ 0.0193
    expect(detectableGain(2000, 0.12, 0.95)).toBeCloseTo(0.01926, 4);
    // A noise-free target still needs minimumWins gained items before the test can accept; the
    // bet is tuned to the split's length, so the count depends on it.
    for (const n of [6, 24, 200]) {
      const k = minimumWins(0.95, n);
      const t = new PairedSequentialTest(n, S);
      const verdicts = Array.from({ length: Math.min(k, n) }, () => t.push(1));
      if (k <= n) {
        expect(verdicts.at(-1)).toBe("accept");
        expect(verdicts.slice(0, -1).every((v) => v === undefined)).toBe(true);
      } else expect(verdicts).not.toContain("accept");
    }
    const k = minimumWins(0.95, 24);
    expect(detectableGain(24, 0, 0.95)).toBeCloseTo(k / 24, 12);
  });
});
