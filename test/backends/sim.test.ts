import { describe, expect, test } from "bun:test";
import { conventionOfLine, FAMILIES, rulesInSkill, type TaskValue } from "../../src/backends/sim/conventions.ts";
import { SIM_MODEL, simAnswer, createSimBackend } from "../../src/backends/sim/index.ts";
import { FORMATS, render, TYPICAL } from "../../src/benchmarks/conventions/formats.ts";
import { taskPrompt } from "../../src/benchmarks/conventions/generator.ts";
import { targetSystemPrompt } from "../../src/benchmarks/conventions/index.ts";
import { quickConfig } from "../engine/support.ts";

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
const ask = (skill: string, v: TaskValue, o = O) =>
  simAnswer(
    [
      { role: "system", content: targetSystemPrompt(skill) },
      { role: "user", content: taskPrompt("Q?", v) },
    ],
    0,
    o,
  );

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
    expect(
      ask("- Write dates as YYYY-MM-DD (ISO 8601).\n- Dates use the US form month/day/year, e.g. 03/07/2024.", v),
    ).toBe("03/07/2024");
    expect(rulesInSkill("- Numbers carry exactly 1 decimal.").get("rounding")?.convention.id).toBe("round_1dp");
  });

  test("is deterministic for a seed and lapses at its configured rate", () => {
    const skill = "- Write dates as YYYY-MM-DD (ISO 8601).";
    const answers = Array.from({ length: 200 }, (_, d) =>
      ask(skill, { kind: "date", year: 2020, month: 1 + (d % 12), day: 1 + (d % 28) }, { ...O, lapseRate: 0.2 }),
    );
    const again = Array.from({ length: 200 }, (_, d) =>
      ask(skill, { kind: "date", year: 2020, month: 1 + (d % 12), day: 1 + (d % 28) }, { ...O, lapseRate: 0.2 }),
    );
    expect(again).toEqual(answers);
    const lapses = answers.filter((a) => !/^\d{4}-/.test(a)).length;
    expect(lapses).toBeGreaterThan(15);
    expect(lapses).toBeLessThan(70);
  });

  test("names itself as a simulator and answers unknown requests honestly", async () => {
    const backend = createSimBackend("target", quickConfig());
    const r = await backend.complete(
      { messages: [{ role: "user", content: "What is the capital of France?" }], stage: "rollout", model: "x" },
      { timeoutMs: 1000 },
    );
    expect(r.model).toBe(SIM_MODEL);
    expect(r.text).toContain("simulator");
    expect(backend.name).toBe("sim");
  });
});
