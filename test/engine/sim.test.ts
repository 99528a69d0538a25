import { describe, expect, test } from "bun:test";
import { conventionOfLine, FAMILIES, rulesInSkill, type TaskValue } from "../../src/backends/sim/conventions.ts";
import { SIM_MODEL, simAnswer, createSimBackend } from "../../src/backends/sim/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { FORMATS, render, TYPICAL } from "../../src/benchmarks/conventions/formats.ts";
import { drawHouseRules, generateSplits, taskPrompt } from "../../src/benchmarks/conventions/generator.ts";
import { targetSystemPrompt } from "../../src/benchmarks/conventions/index.ts";
import { quickConfig } from "./support.ts";

const SAMPLES: TaskValue[] = [
  { kind: "date", year: 2024, month: 3, day: 7 },
  { kind: "rounding", x: 1234.5678 },
  { kind: "distance", meters: 12400 },
  { kind: "currency", cents: 123450 },
  { kind: "naming", words: ["order", "total", "amount"] },
  { kind: "list_order", items: ["pear", "fig", "banana"] },
  { kind: "framing", n: 12 },
  { kind: "boolean", b: true },
];
const O = { seed: 42, lapseRate: 0, noiseRate: 0.3, latencyMs: 0 };
const ask = (skill: string, v: TaskValue, o = O) => simAnswer([{ role: "system", content: targetSystemPrompt(skill) }, { role: "user", content: taskPrompt("Q?", v) }], 0, o);

describe("the conventions benchmark", () => {
  test("has at least 24 conventions in at least 6 families, several per family", () => {
    const families = Object.keys(FORMATS);
    expect(families.length).toBeGreaterThanOrEqual(6);
    expect(families.reduce((n, f) => n + Object.keys(FORMATS[f as keyof typeof FORMATS]).length, 0)).toBeGreaterThanOrEqual(24);
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

describe("the simulator", () => {
  test("knows the same formats as the benchmark, and the same defaults", () => {
    for (const f of FAMILIES) {
      expect(f.conventions.map((c) => c.id).sort()).toEqual(Object.keys(FORMATS[f.id]).sort());
      expect(f.defaultConvention).toBe(TYPICAL[f.id]);
      const v = SAMPLES.find((s) => s.kind === f.id)!;
      for (const c of f.conventions) expect(c.render(v)).toBe(render(c.id, v));
    }
  });

  test("every phrasing states exactly its own rule, and vague advice states none", () => {
    for (const f of FAMILIES) {
      for (const c of f.conventions) for (const st of c.statements) expect(conventionOfLine(st)?.id).toBe(c.id);
      for (const v of f.vague) expect(conventionOfLine(v)).toBeUndefined();
    }
  });

  test("as target it follows a rule only when a skill line states it; the last stated rule wins", () => {
    const v = SAMPLES[0]!;
    expect(ask("# Skill\n", v)).toBe("March 7, 2024");
    expect(ask("- Dates: Write dates as YYYY-MM-DD (ISO 8601).", v)).toBe("2024-03-07");
    expect(ask("- Be careful to format dates consistently.", v)).toBe("March 7, 2024");
    expect(ask("- Write dates as YYYY-MM-DD (ISO 8601).\n- Dates use the US form month/day/year, e.g. 03/07/2024.", v)).toBe("03/07/2024");
    expect(rulesInSkill("- Numbers carry exactly 1 decimal.").get("rounding")?.convention.id).toBe("round_1dp");
  });

  test("is deterministic for a seed and lapses at its configured rate", () => {
    const skill = "- Write dates as YYYY-MM-DD (ISO 8601).";
    const answers = Array.from({ length: 200 }, (_, d) => ask(skill, { kind: "date", year: 2020, month: 1 + (d % 12), day: 1 + (d % 28) }, { ...O, lapseRate: 0.2 }));
    const again = Array.from({ length: 200 }, (_, d) => ask(skill, { kind: "date", year: 2020, month: 1 + (d % 12), day: 1 + (d % 28) }, { ...O, lapseRate: 0.2 }));
    expect(again).toEqual(answers);
    const lapses = answers.filter((a) => !/^\d{4}-/.test(a)).length;
    expect(lapses).toBeGreaterThan(15);
    expect(lapses).toBeLessThan(70);
  });

  test("names itself as a simulator and answers unknown requests honestly", async () => {
    const backend = createSimBackend("target", quickConfig());
    const r = await backend.complete({ messages: [{ role: "user", content: "What is the capital of France?" }], stage: "rollout", model: "x" }, { timeoutMs: 1000 });
    expect(r.model).toBe(SIM_MODEL);
    expect(r.text).toContain("simulator");
    expect(backend.name).toBe("sim");
  });
});
