import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import livemath from "../../src/benchmarks/livemathematicianbench/index.ts";
import { type Choice, shuffleChoices } from "../../src/benchmarks/livemathematicianbench/loader.ts";
import spreadsheet from "../../src/benchmarks/spreadsheetbench/index.ts";
import { type Benchmark, type BenchmarkContext, Evaluator, NO_EVENTS, train } from "../../src/engine/index.ts";
import { PROMPTS } from "../../src/prompts/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, evalJson } from "../benchmarks/support/e2e.ts";
import { makeWorkbooks } from "../benchmarks/support/spreadsheet.ts";
import { missing } from "../support/prereqs.ts";
import { benchContext, FIXTURES } from "../benchmarks/support/context.ts";
import { MemoryRecorder, quickConfig } from "./support.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

interface Seen {
  id: string;
  phase: BenchmarkContext["phase"];
  batchSeed: number | undefined;
}

describe("the engine tells the benchmark which phase a rollout serves", () => {
  test("training-batch rollouts get phase train and their batch seed; selection, slow update and test get phase eval and no seed", async () => {
    const config = quickConfig(["train.num_epochs=2"]);
    const inner = (await getBenchmark("conventions"))!;
    const seen: Seen[] = [];
    const bench: Benchmark = {
      ...inner,
      rollout: (item, skill, ctx, k) => {
        seen.push({ id: item.id, phase: ctx.phase, batchSeed: ctx.batchSeed });
        return inner.rollout(item, skill, ctx, k);
      },
    };
    const client = await createModelClient(config, { noCache: true });
    // A caller's batchSeed never leaks into evaluations.
    const ctx: BenchmarkContext = {
      model: client,
      env: config.env as Record<string, unknown>,
      configDir: process.cwd(),
      workDir: "/nonexistent",
      target: { model: "sim", maxTokens: 256 },
      seed: config.train.seed,
      batchSeed: 999,
    };
    const splits = await bench.loadSplits(ctx);
    const recorder = new MemoryRecorder();
    try {
      await train({
        cfg: config,
        bench,
        ctx,
        splits,
        initialSkill: bench.initialSkill,
        prompts: PROMPTS,
        recorder,
        accounting: client,
        events: NO_EVENTS,
        clock: { now: () => 0 },
      });
    } finally {
      await client.close();
    }
    const split = new Map<string, string>();
    for (const name of ["train", "val", "test"] as const) for (const it of splits[name]) split.set(it.id, name);
    const batchSeeds = new Set(
      recorder.records().flatMap((r) => (r.accumulation_batches as { batch_seed: number }[]).map((b) => b.batch_seed)),
    );
    expect(batchSeeds.size).toBeGreaterThan(1);

    const trainPhase = seen.filter((s) => s.phase === "train");
    const evalPhase = seen.filter((s) => s.phase === "eval");
    expect(trainPhase.length + evalPhase.length).toBe(seen.length);
    expect(
      trainPhase.every((s) => split.get(s.id) === "train" && s.batchSeed !== undefined && batchSeeds.has(s.batchSeed)),
    ).toBe(true);
    expect(new Set(trainPhase.map((s) => s.batchSeed))).toEqual(batchSeeds);
    expect(evalPhase.every((s) => s.batchSeed === undefined)).toBe(true);
    expect(new Set(evalPhase.map((s) => split.get(s.id)))).toEqual(new Set(["train", "val", "test"])); // train items: the slow-update comparison
  });
});

const noPython = await missing("openpyxl", import.meta.path);

describe("consequences in the benchmarks", () => {
  test("LiveMath: each training batch shuffles the choices with its own seed, evaluations with the run seed", async () => {
    await using server = await startFakeOpenAI({ reply: "<answer>A</answer>" });
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "livemathematicianbench") }, dir.path);
    const splits = await livemath.loadSplits(ctx);
    const items = splits.train;
    const ev = new Evaluator(livemath, ctx, 2, NO_EVENTS);
    const expected = (seed: number) =>
      items.map((it) =>
        shuffleChoices(it.choices as Choice[], it.correct_choice as Choice, seed, it.id)
          .choices.map((c) => `${c.label}. ${c.text}`)
          .join("\n"),
      );
    const orders: Record<string, string[]> = {};
    for (const seed of [7, 8, undefined]) {
      // A different skill per run, so no request is served from the call cache.
      const skill = `# Skill for run ${seed}`;
      await ev.run(skill, items, "t", undefined, seed === undefined ? undefined : { seed });
      orders[String(seed)] = items.map((it) => {
        const req = server.requests.find(
          (r) => r.systemText.includes(skill) && r.lastUserText.includes(String(it.question)),
        )!;
        return req.lastUserText.split("## Choices\n")[1]!.split("\n\n")[0]!;
      });
    }
    expect(orders["7"]).toEqual(expected(7));
    expect(orders["8"]).toEqual(expected(8));
    expect(orders.undefined).toEqual(expected(ctx.seed));
    expect(orders["7"]).not.toEqual(orders["8"]);
  });

  const BAD_SUM =
    "```python\nimport openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Sheet1']\nfor r in range(2, ws.max_row + 1):\n    ws.cell(row=r, column=3).value = ws.cell(row=r, column=1).value * ws.cell(row=r, column=2).value\nwb.save(OUTPUT_PATH)\n```";
  const GOLD_FEEDBACK = /checked cells are right/;

  test.skipIf(noPython)(
    "SpreadsheetBench: gold-verified feedback in a training rollout, none in `skillopt eval --split train`",
    async () => {
      using dir = tempDir();
      await makeWorkbooks(dir.path);
      const env = {
        split_dir: join(FIXTURES, "spreadsheetbench", "split"),
        data_root: dir.path,
        mode: "multi",
        max_turns: 3,
        exec_timeout: 120,
      };
      // Training: the engine's batch rollout of the same train item gets the wrong cells fed back.
      {
        await using server = await startFakeOpenAI({ reply: BAD_SUM });
        await using ctx = await benchContext(server.url, env, dir.path);
        const splits = await spreadsheet.loadSplits(ctx);
        const item = splits.train.find((i) => i.id === "sum-columns")!;
        const out = await new Evaluator(spreadsheet, ctx, 1, NO_EVENTS).run("", [item], "train", undefined, {
          seed: 1,
        });
        expect(out.results[0]!.hard).toBe(0);
        expect(server.requests.some((r) => GOLD_FEEDBACK.test(r.lastUserText))).toBe(true);
      }
      // Eval on the train split: the first successful execution is final, no gold is consulted.
      await using server = await startFakeOpenAI({ reply: (req) => (req.model === "target-model" ? BAD_SUM : "{}") });
      const skill = join(dir.path, "s.md");
      writeFileSync(skill, "# Skill\n");
      const flags = [
        "--config",
        "spreadsheetbench",
        ...Object.entries(env).flatMap(([k, v]) => ["--set", `env.${k}=${v}`]),
        ...compatFlags(server.url),
      ];
      const res = await evalJson([
        ...flags,
        "--skill",
        skill,
        "--split",
        "train",
        "--out",
        join(dir.path, "eval"),
        "--no-cache",
      ]);
      expect(res.n_items).toBe(2);
      const targetAsks = server.requests.filter((r) => r.model === "target-model");
      expect(targetAsks.length).toBeGreaterThanOrEqual(2);
      expect(targetAsks.some((r) => GOLD_FEEDBACK.test(r.lastUserText))).toBe(false);
    },
    60_000,
  );
});
