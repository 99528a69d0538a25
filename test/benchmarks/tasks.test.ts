import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tasks from "../../src/benchmarks/tasks/index.ts";
import {
  parseCommandOutput,
  scoreContains,
  scoreExact,
  scoreJsonMatch,
  scoreRegex,
  splitCommand,
} from "../../src/benchmarks/tasks/evaluators.ts";
import { parseTasksFile } from "../../src/benchmarks/tasks/loader.ts";
import { DataError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES } from "./support/context.ts";

const TASKS = join(FIXTURES, "tasks", "my_tasks.jsonl");

describe("tasks file", () => {
  test("bad JSON and a missing input are reported with their line numbers", () => {
    using dir = tempDir();
    const p = join(dir.path, "t.jsonl");
    writeFileSync(p, `{"id":"a","input":"x","reference":"1"}\n\n{"id":"b","input":"y"\n{"id":"c","reference":"2"}\n`);
    const err = (() => {
      try {
        parseTasksFile(p);
      } catch (e) {
        return e as DataError;
      }
    })();
    expect(err).toBeInstanceOf(DataError);
    expect(err!.message).toStartWith(`${p}:3: invalid JSON`);
    expect(err!.data.problems).toEqual([
      expect.stringMatching(/^line 3: invalid JSON/),
      'line 4: missing "input" (a non-empty string)',
    ]);
  });

  test("duplicate ids name both lines; ids default to the line", () => {
    using dir = tempDir();
    const p = join(dir.path, "t.jsonl");
    writeFileSync(p, `{"input":"x"}\n{"id":"k","input":"y"}\n{"id":"k","input":"z"}\n`);
    expect(() => parseTasksFile(p)).toThrow(`${p}:3: duplicate id "k" (first on line 2)`);
    writeFileSync(p, `{"input":"x"}\n{"id":7,"input":"y"}\n`);
    expect(parseTasksFile(p).map((t) => t.id)).toEqual(["line-1", "7"]);
  });

  test("ratio split is deterministic and an evaluator that needs references reports the line that lacks one", async () => {
    await using server = await startFakeOpenAI();
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_mode: "ratio", data_path: TASKS, split_ratio: "2:1:2", evaluator: "exact" },
      dir.path,
    );
    const a = await tasks.loadSplits(ctx);
    const b = await tasks.loadSplits(ctx);
    expect(a.train.map((t) => t.id)).toEqual(b.train.map((t) => t.id));
    expect([a.train.length, a.val.length, a.test.length]).toEqual([4, 2, 4]);
    const p = join(dir.path, "noref.jsonl");
    writeFileSync(p, `{"id":"a","input":"x","reference":"1"}\n{"id":"b","input":"y"}\n`);
    const noRef = { ...ctx, env: { ...ctx.env, data_path: p } };
    await expect(tasks.loadSplits(noRef)).rejects.toThrow('tasks file line 2: missing "reference"');
  });
});

describe("evaluators", () => {
  test("exact, contains, regex, json_match", async () => {
    expect(scoreExact("  Paris ", ["paris"]).hard).toBe(1);
    expect(scoreContains("red and blue", ["red", "green"])).toMatchObject({ hard: 0, soft: 0.5 });
    expect((await scoreRegex("order #123", ["/#\\d{3}/"], "x")).hard).toBe(1);
    expect((await scoreRegex("order", ["^\\d+$"], "x")).hard).toBe(0);
    expect(scoreJsonMatch('Here:\n```json\n{"ok": true}\n```', { ok: true }).hard).toBe(1);
    expect(scoreJsonMatch('{"a":1,"b":3}', '{"a":1,"b":2}')).toMatchObject({ hard: 0, soft: 0.5 });
    expect(scoreJsonMatch("no json", { a: 1 }).hard).toBe(0);
  });

  test("command output parsing and argv splitting", () => {
    expect(parseCommandOutput("log line\n0.75\n")).toEqual({ hard: 0, soft: 0.75, reason: undefined });
    expect(parseCommandOutput('{"score": 1, "reason": "ok"}')).toEqual({ hard: 1, soft: 1, reason: "ok" });
    expect(parseCommandOutput("1.5")).toBe("score 1.5 is outside [0,1]");
    expect(splitCommand(`python3 "my scorer.py" --x 'a b'`)).toEqual(["python3", "my scorer.py", "--x", "a b"]);
  });
});

describe("tasks rollouts through the fake server", () => {
  test("exact and f1 evaluators score the known answers", async () => {
    await using server = await startFakeOpenAI({
      reply: (r) => (r.lastUserText.includes("12 * 12") ? "<answer>144</answer>" : "<answer>no idea</answer>"),
    });
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_mode: "ratio", data_path: TASKS, evaluator: "exact" },
      dir.path,
    );
    const splits = await tasks.loadSplits(ctx);
    const all = [...splits.train, ...splits.val, ...splits.test];
    const t1 = all.find((t) => t.id === "t1")!;
    const t2 = all.find((t) => t.id === "t2")!;
    expect((await tasks.rollout(t1, "", ctx, 0)).hard).toBe(1);
    const wrong = await tasks.rollout(t2, "", ctx, 0);
    expect(wrong).toMatchObject({ hard: 0, fail_reason: 'expected ["tac"]' });
  });

  test("command evaluator: the user's script gets the item and answer as JSON on stdin", async () => {
    await using server = await startFakeOpenAI({ reply: "<answer>144</answer>" });
    using dir = tempDir();
    const script = join(dir.path, "score.sh");
    writeFileSync(
      script,
      `#!/bin/sh\nread line\ncase "$line" in *'"answer":"144"'*'"reference":"144"'*|*'"reference":"144"'*'"answer":"144"'*) echo 1 ;; *) echo 0.25 ;; esac\n`,
    );
    chmodSync(script, 0o755);
    await using ctx = await benchContext(
      server.url,
      { split_mode: "ratio", data_path: TASKS, evaluator: "command", evaluator_command: script },
      dir.path,
    );
    const splits = await tasks.loadSplits(ctx);
    const all = [...splits.train, ...splits.val, ...splits.test];
    expect((await tasks.rollout(all.find((t) => t.id === "t1")!, "", ctx, 0)).hard).toBe(1);
    expect((await tasks.rollout(all.find((t) => t.id === "t2")!, "", ctx, 0)).soft).toBe(0.25);
  });

  test("judge evaluator: the optimizer role grades with the rubric (stage judge); repeated grading is cached", async () => {
    await using server = await startFakeOpenAI();
    server.match((r) => r.systemText.includes("grade one answer"), '{"pass": true, "score": 0.9, "reason": "matches"}');
    server.match(() => true, "<answer>Paris</answer>");
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_mode: "ratio", data_path: TASKS, evaluator: "judge", judge_rubric: "Correct capital city." },
      dir.path,
    );
    const splits = await tasks.loadSplits(ctx);
    const t4 = [...splits.train, ...splits.val, ...splits.test].find((t) => t.id === "t4")!;
    const r1 = await tasks.rollout(t4, "", ctx, 0);
    const r2 = await tasks.rollout(t4, "", ctx, 0);
    expect([r1.hard, r1.soft, r2.soft]).toEqual([1, 0.9, 0.9]);
    const judged = server.requests.filter((r) => r.systemText.includes("grade one answer"));
    expect(judged).toHaveLength(1);
    expect(judged[0]!.lastUserText).toContain("## Rubric\nCorrect capital city.");
  });
});
