import { describe, expect, test } from "bun:test";
import { simAnswer } from "../../src/backends/sim/index.ts";
import { successProbability } from "../../src/backends/sim/stochastic.ts";
import type { TaskValue } from "../../src/backends/sim/conventions.ts";
import { drawHouseRules, generateSplits, taskPrompt } from "../../src/benchmarks/conventions/generator.ts";
import { targetSystemPrompt } from "../../src/benchmarks/conventions/index.ts";

const O = { seed: 5, lapseRate: 0, noiseRate: 0.3, latencyMs: 0, temperature: 0.8 };

describe("the stochastic sim target", () => {
  const split = generateSplits(5, { train: 4, val: 60, test: 4 }, drawHouseRules(5));
  const skill =
    "# Skill\n## Conventions\n- **Dates:** Write dates as YYYY-MM-DD (ISO 8601).\n- **Numbers:** Round numbers to one decimal place.\n";
  const answer = (s: string, item: (typeof split.val)[number], sample: number) =>
    simAnswer(
      [
        { role: "system", content: targetSystemPrompt(s) },
        { role: "user", content: taskPrompt(String(item.question), item.value as TaskValue) },
      ],
      sample,
      O,
    );

  test("sampled answers pass at the rate the simulator states exactly", () => {
    const SAMPLES = 300;
    let stated = 0;
    let observed = 0;
    let uncertain = 0;
    for (const item of split.val.slice(0, 20)) {
      const p = successProbability(skill, item.value as TaskValue, String(item.expected), O.temperature, O.seed);
      if (p > 0.05 && p < 0.95) uncertain += 1;
      let pass = 0;
      for (let k = 0; k < SAMPLES; k++) if (answer(skill, item, k) === item.expected) pass += 1;
      // Each item: within 5 standard errors of its stated probability.
      expect(Math.abs(pass / SAMPLES - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / SAMPLES) + 1e-9);
      stated += p;
      observed += pass / SAMPLES;
    }
    expect(uncertain).toBeGreaterThan(3);
    expect(Math.abs(observed - stated) / 20).toBeLessThan(0.02);
  });

  test("the same (skill, item, sample) always gets the same answer; another sample may differ", () => {
    const flips = split.val.filter((it) => answer(skill, it, 0) !== answer(skill, it, 1)).length;
    for (const it of split.val.slice(0, 10)) expect(answer(skill, it, 3)).toBe(answer(skill, it, 3));
    expect(flips).toBeGreaterThan(0);
  });

  test("temperature 0 is the deterministic target: probability 0 or 1", () => {
    for (const it of split.val) {
      const p = successProbability(skill, it.value as TaskValue, String(it.expected), 0, O.seed);
      expect(p === 0 || p === 1).toBe(true);
    }
  });
});
