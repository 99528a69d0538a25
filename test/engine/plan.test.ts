import { describe, expect, test } from "bun:test";
import { deriveSizes, mergeCallsFor, planEpoch } from "../../src/engine/index.ts";
import { quickConfig } from "./support.ts";

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i}` }));

describe("epoch planning (spec §2.2)", () => {
  test("one epoch is one pass over train in chunks of batch_size, reshuffled per epoch", () => {
    const cfg = quickConfig(["train.batch_size=4"]);
    const train = items(10);
    const sizes = deriveSizes(cfg, train.length);
    expect(sizes).toEqual({ trainSize: 10, stepsPerEpoch: 3, batchesPerEpoch: 3, totalSteps: 9 });
    const e1 = planEpoch(train, cfg, 1, sizes);
    expect(e1.map((b) => b.items.length)).toEqual([4, 4, 2]);
    expect(new Set(e1.flatMap((b) => b.items.map((i) => i.id))).size).toBe(10);
    expect(e1.map((b) => b.seed)).toEqual([42 + 1000 + 1, 42 + 1000 + 2, 42 + 1000 + 3]);
    expect(planEpoch(train, cfg, 1, sizes)).toEqual(e1);
    expect(planEpoch(train, cfg, 2, sizes).map((b) => b.items)).not.toEqual(e1.map((b) => b.items));
  });

  test("an empty chunk (tiny data with accumulation) is refilled from a reshuffle", () => {
    const cfg = quickConfig(["train.batch_size=4", "train.accumulation=2"]);
    const train = items(5);
    const sizes = deriveSizes(cfg, train.length);
    const batches = planEpoch(train, cfg, 1, sizes);
    expect(batches.map((b) => b.items.length)).toEqual([4, 1]);
    const tiny = planEpoch(items(3), quickConfig(["train.batch_size=2", "train.accumulation=3"]), 1, {
      trainSize: 3,
      stepsPerEpoch: 1,
      batchesPerEpoch: 3,
      totalSteps: 1,
    });
    expect(tiny.map((b) => b.items.length)).toEqual([2, 1, 2]);
  });

  test("train_size must match the split when set", () => {
    expect(() => deriveSizes(quickConfig(["train.train_size=5"]), 32)).toThrow(
      "train.train_size=5 but the train split has 32 items",
    );
  });

  test("merge calls of the hierarchical merge", () => {
    expect([0, 1, 2, 5, 8, 9, 17].map((p) => mergeCallsFor(p, 8))).toEqual([0, 0, 1, 1, 1, 2, 3]);
    expect(mergeCallsFor(5, 1)).toBe(mergeCallsFor(5, 2));
  });
});
