import { describe, expect, test } from "bun:test";
import { createModelClient } from "../../src/backends/index.ts";
import { conventionsProducing, family, type TaskValue } from "../../src/backends/sim/conventions.ts";
import { simOptions } from "../../src/backends/sim/index.ts";
import {
  CROWD_FREE,
  CROWD_LAPSE,
  crowdLapse,
  instructionCount,
  successProbability,
} from "../../src/backends/sim/stochastic.ts";
import { taskPrompt } from "../../src/benchmarks/conventions/generator.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { simContext } from "../engine/support.ts";

// The crowded shape: the simulated target lapses more as its skill holds more instructions (docs/search.md).
const DATE: TaskValue = { kind: "date", year: 2024, month: 3, day: 7 };
const ISO = "- **Dates:** Write dates as YYYY-MM-DD (ISO 8601).";
const VAGUE = [
  "- **Numbers:** Round numbers sensibly.",
  "- **Lists:** Think about the order of list items.",
  "- **Money:** Be precise with currency.",
  "- **Counts:** Present counts clearly.",
  "- **Identifiers:** Name identifiers consistently.",
  "- **Distances:** Mind the units when reporting lengths.",
  "- **Yes/no answers:** Be consistent with yes/no replies.",
];
/** A skill with `n` instructions: the date rule, vague lines, and restatements of the date rule. */
const skillOf = (n: number, date = ISO) => {
  const lines = [date, ...VAGUE, ...Array.from({ length: Math.max(0, n - 8) }, () => `* ${date.slice(2)}`)].slice(0, n);
  return `# House style\n\nAnswer with the value only.\n\n## Conventions\n\n${lines.join("\n\n")}\n`;
};

const config = (shape: string, temperature: number) =>
  loadConfig({
    config: "conventions",
    set: [
      "model.backend=sim",
      `env.conventions_shape=${shape}`,
      `env.sim_temperature=${temperature}`,
      "env.split_seed=3",
      "env.val_items=16",
      "env.test_items=16",
      "train.seed=3",
    ],
  }).config;

type Bench = NonNullable<Awaited<ReturnType<typeof getBenchmark>>>;

/** 400 rollouts of the item through the benchmark and the sim backend pass at the exact rate p (within 5 σ). */
async function expectPassRate(
  bench: Bench,
  item: Parameters<Bench["rollout"]>[0],
  skill: string,
  ctx: Parameters<Bench["rollout"]>[2],
  p: number,
): Promise<void> {
  const SAMPLES = 400;
  let pass = 0;
  for (let k = 0; k < SAMPLES; k++) pass += (await bench.rollout(item, skill, ctx, k)).hard;
  expect(Math.abs(pass / SAMPLES - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / SAMPLES));
}

describe("the crowded sim target", () => {
  test("instructions are the skill's list items: rules, vague advice and restatements, not headings or prose", () => {
    expect(instructionCount(skillOf(3))).toBe(3);
    expect(instructionCount(skillOf(12))).toBe(12);
    const guided = `${skillOf(8)}<!-- SLOW_UPDATE_START -->\nGuidance (these rules take precedence):\n${ISO}\n  * ${ISO.slice(2)}\n1. ${ISO.slice(2)}\n<!-- SLOW_UPDATE_END -->\n`;
    expect(instructionCount(guided)).toBe(11);
    expect(crowdLapse(guided, true)).toBeCloseTo(3 * CROWD_LAPSE, 12);
    expect(crowdLapse(guided, false)).toBe(0);
    expect(crowdLapse(skillOf(CROWD_FREE), true)).toBe(0);
  });

  test("exact probabilities: up to CROWD_FREE instructions as before, then CROWD_LAPSE more lapse per instruction", () => {
    // Temperature 0: no lapse of its own, so the stated rule is followed unless the skill is crowded.
    for (const n of [1, 5, CROWD_FREE])
      expect(successProbability(skillOf(n), DATE, "2024-03-07", 0, 3, "", true)).toBe(1);
    for (const n of [CROWD_FREE + 1, 12, 16]) {
      const lapse = CROWD_LAPSE * (n - CROWD_FREE);
      // A lapse answers with one of the family's four conventions at random, the right one among them.
      expect(successProbability(skillOf(n), DATE, "2024-03-07", 0, 3, "", true)).toBeCloseTo(1 - lapse + lapse / 4, 12);
      // The other shapes' target reads the same skill as before.
      expect(successProbability(skillOf(n), DATE, "2024-03-07", 0, 3, "", false)).toBe(1);
    }
    // Temperature and crowding add up, capped at a lapse of 1.
    const warm = successProbability(skillOf(12), DATE, "2024-03-07", 0.6, 3, "", true);
    const cool = successProbability(skillOf(12), DATE, "2024-03-07", 0.6, 3, "", false);
    expect(warm).toBeLessThan(cool);
    expect(successProbability(skillOf(60), DATE, "2024-03-07", 0, 3, "", true)).toBeCloseTo(0.25, 12);
  });

  test("env.conventions_shape: crowded makes the sim backend crowded; the tasks are the standard shape's", async () => {
    expect(simOptions(config("crowded", 0.6)).crowded).toBe(true);
    expect(simOptions(config("standard", 0.6)).crowded).toBeUndefined();
    expect(simOptions(config("conflict", 0.6)).crowded).toBeUndefined();
    const bench = (await getBenchmark("conventions"))!;
    const splitsOf = async (shape: string) => {
      const c = config(shape, 0.6);
      const client = await createModelClient(c, { noCache: true });
      try {
        return await bench.loadSplits(simContext(c, client));
      } finally {
        await client.close();
      }
    };
    expect(JSON.stringify(await splitsOf("crowded"))).toBe(JSON.stringify(await splitsOf("standard")));
  });

  test("env.conventions_shape: conflict_crowded is the conflict shape's tasks read by the crowded target", async () => {
    expect(simOptions(config("conflict_crowded", 0.6)).crowded).toBe(true);
    const bench = (await getBenchmark("conventions"))!;
    const c = config("conflict_crowded", 0.6);
    const client = await createModelClient(c, { noCache: true });
    const cc = config("conflict", 0.6);
    const plainClient = await createModelClient(cc, { noCache: true });
    try {
      const ctx = simContext(c, client);
      const splits = await bench.loadSplits(ctx);
      expect(JSON.stringify(splits)).toBe(JSON.stringify(await bench.loadSplits(simContext(cc, plainClient))));
      // A second-office item, and a skill of 11 instructions whose scoped line serves it: the
      // target reads the scope (as on the conflict shape) and lapses for the three lines beyond eight.
      const item = [...splits.train, ...splits.val, ...splits.test].find((it) => it.office === "lisbon")!;
      const value = item.value as TaskValue;
      const want = conventionsProducing(value, String(item.expected))[0]!;
      const house = family(value.kind).conventions.find((cv) => cv.id !== want.id)!;
      const title = family(value.kind).title;
      const scoped = `- **${title}, Lisbon office only:** ${want.statements[0]}`;
      const skill = `${skillOf(10, `- **${title}:** ${house.statements[0]}`)}\n${scoped}\n`;
      expect(instructionCount(skill)).toBe(11);
      const task = taskPrompt(String(item.question), value);
      const p = successProbability(skill, value, String(item.expected), 0.6, 3, task, true);
      const plain = successProbability(skill, value, String(item.expected), 0.6, 3, task, false);
      expect(plain - p).toBeGreaterThan(0.05);
      // Without the scoped line the general rule answers the Lisbon item wrong but for lapses.
      const unscoped = successProbability(
        skillOf(10, `- **${title}:** ${house.statements[0]}`),
        value,
        String(item.expected),
        0.6,
        3,
        task,
        true,
      );
      expect(p - unscoped).toBeGreaterThan(0.3);
      await expectPassRate(bench, item, skill, ctx, p);
    } finally {
      await client.close();
      await plainClient.close();
    }
  });

  test("rollouts through the benchmark and the sim backend pass at the stated crowded rate", async () => {
    const c = config("crowded", 0.6);
    const client = await createModelClient(c, { noCache: true });
    try {
      const bench = (await getBenchmark("conventions"))!;
      const ctx = simContext(c, client);
      const splits = await bench.loadSplits(ctx);
      const item = splits.val.find((it) => it.family === "date")!;
      // The date rule that item expects, in a skill of 14 instructions.
      const house = conventionsProducing(item.value as TaskValue, String(item.expected))[0]!;
      const skill = skillOf(14, `- **Dates:** ${house.statements[0]}`);
      const p = successProbability(skill, item.value as TaskValue, String(item.expected), 0.6, 3, "", true);
      const plain = successProbability(skill, item.value as TaskValue, String(item.expected), 0.6, 3, "", false);
      expect(plain - p).toBeGreaterThan(0.1);
      await expectPassRate(bench, item, skill, ctx, p);
    } finally {
      await client.close();
    }
  });
});
