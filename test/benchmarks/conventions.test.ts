import { describe, expect, test } from "bun:test";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { FORMATS, TYPICAL } from "../../src/benchmarks/conventions/formats.ts";
import { drawHouseRules, generateSplits } from "../../src/benchmarks/conventions/generator.ts";

describe("the conventions benchmark", () => {
  test("has at least 24 conventions in at least 6 families, several per family", () => {
    const families = Object.keys(FORMATS);
    expect(families.length).toBeGreaterThanOrEqual(6);
    expect(
      families.reduce((n, f) => n + Object.keys(FORMATS[f as keyof typeof FORMATS]).length, 0),
    ).toBeGreaterThanOrEqual(24);
    for (const f of families) expect(Object.keys(FORMATS[f as keyof typeof FORMATS]).length).toBeGreaterThanOrEqual(3);
  });

  test("splits are deterministic for a seed, differ across seeds, and never repeat a task", () => {
    const sizes = { train: 32, val: 24, test: 48 };
    const a = generateSplits(7, sizes, drawHouseRules(7));
    expect(generateSplits(7, sizes, drawHouseRules(7))).toEqual(a);
    expect(generateSplits(8, sizes, drawHouseRules(8))).not.toEqual(a);
    const all = [...a.train, ...a.val, ...a.test];
    expect(new Set(all.map((t) => JSON.stringify([t.question, t.value]))).size).toBe(all.length);
    expect(new Set(all.map((t) => t.id)).size).toBe(all.length);
  });

  test("one or two house rules match what an untrained agent writes, the rest do not", () => {
    for (const seed of [1, 2, 3, 42, 99]) {
      const rules = drawHouseRules(seed);
      const typical = Object.entries(rules).filter(([f, c]) => TYPICAL[f as keyof typeof TYPICAL] === c).length;
      expect(typical).toBeGreaterThanOrEqual(1);
      expect(typical).toBeLessThanOrEqual(2);
    }
  });

  test("the benchmark loads its splits from env sizes and exposes an embedded SKILL.md", async () => {
    const bench = (await getBenchmark("conventions"))!;
    expect(bench.initialSkill.startsWith("---\nname: house-style\n")).toBe(true);
    expect(await getBenchmark("nope")).toBeUndefined();
  });
});
