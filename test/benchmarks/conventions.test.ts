import { describe, expect, test } from "bun:test";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { FORMATS, isUnambiguous, TYPICAL } from "../../src/benchmarks/conventions/formats.ts";
import { drawConflict, drawHouseRules, generateSplits } from "../../src/benchmarks/conventions/generator.ts";
import { sha256 } from "../../src/lib/index.ts";

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

  test("large splits are the tasks drawn before families that ran out stopped building retry keys", () => {
    // sha256 of the JSON of generateSplits's output as the generator made it before (the tree of
    // ca210db, which checked every one of the 1 000 retries of a task whose family had run out):
    // the same tasks, in the same order, from the same random stream.
    const digest = (seed: number, train: number, conflict: boolean) => {
      const rules = drawHouseRules(seed);
      const sizes = { train, val: 24, test: 48 };
      return sha256(
        JSON.stringify(generateSplits(seed, sizes, rules, conflict ? drawConflict(seed, rules) : undefined)),
      );
    };
    expect(digest(42, 32, false)).toBe("47ef4a1de65c741184955dc5686dab6c3f8e85473a40c9a05adfa5931f26ec0a");
    expect(digest(42, 512, false)).toBe("f760551cb30359065cfd7c1ba6871f1b5bd626b976a1260303fd1edacd67dc92");
    expect(digest(42, 512, true)).toBe("72b6c94ffc1a63abac7f8b73fac7456f4fdf3f2fc0d0bcef6752627c3f84b59b");
    expect(digest(7, 2048, false)).toBe("e46e5b2a2bb136eecc17a1d3986f04ce109070402822eec7edc5e2c4fa73db5c");
  });

  test("the yes/no and count families run out at 32 and 996 tasks, and each of their values is unambiguous", () => {
    expect([true, false].every((b) => isUnambiguous({ kind: "boolean", b }))).toBe(true);
    for (let n = 2; n <= 250; n++) expect(isUnambiguous({ kind: "framing", n })).toBe(true);
    const s = generateSplits(3, { train: 9000, val: 24, test: 48 }, drawHouseRules(3));
    const all = [...s.train, ...s.val, ...s.test];
    const distinct = (family: string) =>
      new Set(all.filter((t) => t.family === family).map((t) => JSON.stringify([t.question, t.value]))).size;
    expect(all.filter((t) => t.family === "boolean").length).toBeGreaterThan(1000);
    expect(distinct("boolean")).toBe(32);
    expect(all.filter((t) => t.family === "framing").length).toBeGreaterThan(1100);
    expect(distinct("framing")).toBe(996);
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
