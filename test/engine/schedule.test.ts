import { describe, expect, test } from "bun:test";
import { budgetAt, LrScheduler, roundHalfEven } from "../../src/engine/index.ts";

const seq = (
  mode: "constant" | "linear" | "cosine" | "autonomous",
  max: number,
  min: number,
  total: number,
  n = total,
) => Array.from({ length: n }, (_, i) => budgetAt(mode, max, min, total, i + 1));

describe("learning-rate schedules (spec §2.14)", () => {
  test("round half to even", () => {
    expect([0.5, 1.5, 2.5, 3.5, 2.4, 2.6].map(roundHalfEven)).toEqual([0, 2, 2, 4, 2, 3]);
  });

  test("constant always returns the max", () => {
    expect(seq("constant", 4, 2, 6)).toEqual([4, 4, 4, 4, 4, 4]);
  });

  test("linear and cosine match the pinned sequences", () => {
    expect(seq("linear", 10, 2, 4)).toEqual([8, 6, 4, 2]);
    expect(seq("cosine", 10, 2, 4)).toEqual([9, 6, 3, 2]);
    expect(seq("cosine", 100, 0, 4)[0]).toBe(85);
    expect(budgetAt("cosine", 20, 2, 100, 50)).toBe(11);
    expect(budgetAt("linear", 10, 2, 10, 1)).toBe(9);
  });

  test("defaults (4→2) per step for T = 4, 8, 12 and 40", () => {
    expect(seq("cosine", 4, 2, 4)).toEqual([4, 3, 2, 2]);
    expect(seq("linear", 4, 2, 4)).toEqual([4, 3, 2, 2]);
    expect(seq("cosine", 4, 2, 8)).toEqual([4, 4, 3, 3, 3, 2, 2, 2]);
    expect(seq("linear", 4, 2, 8)).toEqual([4, 4, 3, 3, 3, 2, 2, 2]);
    expect(seq("cosine", 4, 2, 12)).toEqual([4, 4, 4, 4, 3, 3, 3, 2, 2, 2, 2, 2]);
    expect(seq("linear", 4, 2, 12)).toEqual([4, 4, 4, 3, 3, 3, 3, 3, 2, 2, 2, 2]);
    const count = (xs: number[], v: number) => xs.filter((x) => x === v).length;
    const c40 = seq("cosine", 4, 2, 40);
    const l40 = seq("linear", 4, 2, 40);
    expect([count(c40, 4), count(c40, 3), count(c40, 2)]).toEqual([13, 13, 14]);
    expect([count(l40, 4), count(l40, 3), count(l40, 2)]).toEqual([10, 19, 11]);
  });

  test("one step or fewer returns the max; past T stays at the min; autonomous is 999", () => {
    expect(budgetAt("cosine", 4, 2, 1, 1)).toBe(4);
    expect(budgetAt("linear", 4, 2, 1, 1)).toBe(4);
    expect(seq("cosine", 4, 2, 4, 6).slice(4)).toEqual([2, 2]);
    expect(seq("autonomous", 4, 2, 4)).toEqual([999, 999, 999, 999]);
  });

  test("a scheduler restored at step k continues with the (k+1)-th value", () => {
    const fresh = new LrScheduler("cosine", 10, 2, 4);
    const all = [fresh.step(), fresh.step(), fresh.step()];
    const restored = new LrScheduler("cosine", 10, 2, 4, 2);
    expect(restored.step()).toBe(all[2]!);
  });
});
