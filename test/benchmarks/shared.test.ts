import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { projectAction, taskTypeOf } from "../../src/benchmarks/alfworld/index.ts";
import { extractChoice } from "../../src/benchmarks/livemathematicianbench/loader.ts";
import { truncateContext } from "../../src/benchmarks/searchqa/loader.ts";
import searchqa from "../../src/benchmarks/searchqa/index.ts";
import { parseAnswerList, parseCsvRows } from "../../src/benchmarks/shared/formats.ts";
import { PyRandom } from "../../src/benchmarks/shared/pyrandom.ts";
import { apportion, ratioSplit } from "../../src/benchmarks/shared/splits.ts";
import {
  anls,
  extractAnswer,
  lastOpenToLastClose,
  normalizeOfficeQa,
  normalizeSquad,
  squadScores,
  tokenF1,
} from "../../src/benchmarks/shared/text.ts";
import type { BenchmarkContext } from "../../src/engine/ports.ts";
import { tempDir } from "../support/tmp.ts";

describe("CPython-compatible random", () => {
  // reference values printed by CPython 3.11: random.Random(42).shuffle(list(range(20))) etc.
  test("shuffle and random() match CPython for int and 64-bit seeds", () => {
    expect(new PyRandom(42).shuffleInPlace([...Array(20).keys()])).toEqual([
      19, 5, 14, 4, 9, 13, 15, 18, 6, 12, 17, 10, 1, 11, 2, 16, 7, 8, 0, 3,
    ]);
    const r = new PyRandom(0xabcdef0123456789n);
    expect(r.shuffleInPlace([...Array(10).keys()])).toEqual([5, 4, 3, 9, 0, 8, 6, 7, 2, 1]);
    expect(r.random()).toBe(0.9273068882571676);
    const r2 = new PyRandom(1000);
    expect(r2.random()).toBe(0.7773566427005639);
    expect(r2.uint32()).toBe(2876878853);
  });
});

describe("ratio splits", () => {
  test("largest-remainder counts, ties to the larger weight", () => {
    expect(apportion(177, [2, 1, 7])).toEqual([35, 18, 124]);
    expect(apportion(10, [2, 1, 7])).toEqual([2, 1, 7]);
    expect(apportion(4, [1, 1, 2])).toEqual([1, 1, 2]);
    expect(apportion(5, [1, 1, 1])).toEqual([2, 2, 1]);
  });

  test("the split is a deterministic CPython shuffle, sliced train/val/test", () => {
    const items = [...Array(10).keys()].map((i) => ({ id: `i${i}` }));
    const s = ratioSplit(items, "2:1:7", 42);
    const order = new PyRandom(42).shuffleInPlace([...Array(10).keys()]).map((i) => `i${i}`);
    expect([...s.train, ...s.val, ...s.test].map((x) => x.id)).toEqual(order);
    expect([s.train.length, s.val.length, s.test.length]).toEqual([2, 1, 7]);
  });

  test("split_dir errors name the missing directory and how to make it; a split dir as data_path is refused", async () => {
    using dir = tempDir();
    const ctx = {
      env: { split_mode: "split_dir", split_dir: join(dir.path, "none") },
      configDir: dir.path,
      workDir: dir.path,
    } as unknown as BenchmarkContext;
    await expect(searchqa.loadSplits(ctx)).rejects.toThrow(`env.split_dir ${join(dir.path, "none")} does not exist`);
    mkdirSync(join(dir.path, "s", "train"), { recursive: true });
    mkdirSync(join(dir.path, "s", "val"));
    mkdirSync(join(dir.path, "s", "test"));
    const ctx2 = { ...ctx, env: { split_mode: "split_dir", split_dir: join(dir.path, "s") } } as BenchmarkContext;
    await expect(searchqa.loadSplits(ctx2)).rejects.toThrow("no *.json file");
    const ctx3 = { ...ctx, env: { split_mode: "ratio", data_path: join(dir.path, "s") } } as BenchmarkContext;
    await expect(searchqa.loadSplits(ctx3)).rejects.toThrow("is a split directory");
  });

  test("ratio mode writes the generated splits and their manifest; duplicate ids are refused", async () => {
    using dir = tempDir();
    const data = join(dir.path, "raw.jsonl");
    writeFileSync(
      data,
      [...Array(10).keys()]
        .map((i) => JSON.stringify({ key: `k${i}`, question: `q${i}`, context: "", answers: [`a${i}`] }))
        .join("\n"),
    );
    const ctx = {
      env: { split_mode: "ratio", data_path: data, split_ratio: "2:1:7", split_seed: 42 },
      configDir: dir.path,
      workDir: dir.path,
    } as unknown as BenchmarkContext;
    const s = await searchqa.loadSplits(ctx);
    expect(s.train).toHaveLength(2);
    const manifest = await Bun.file(
      join(dir.path, "_generated_splits", "searchqa_2-1-7_seed42", "split_manifest.json"),
    ).json();
    expect(manifest).toMatchObject({
      split_mode: "ratio",
      split_ratio: "2:1:7",
      split_seed: 42,
      counts: { train: 2, val: 1, test: 7 },
    });
    writeFileSync(
      data,
      `${JSON.stringify({ id: "x", question: "q", answers: ["a"] })}\n${JSON.stringify({ id: "x", question: "q2", answers: ["b"] })}\n`,
    );
    await expect(searchqa.loadSplits(ctx)).rejects.toThrow('duplicate item id "x"');
  });
});

describe("text metrics", () => {
  test("SQuAD normalisation, EM and F1 (empty vs empty is 1)", () => {
    expect(normalizeSquad("The  Nile, River!")).toBe("nile river");
    expect(squadScores("the Nile", ["Nile"]).em).toBe(1);
    expect(squadScores("Leonardo", ["Leonardo da Vinci"]).f1).toBeCloseTo(0.5, 5);
    expect(tokenF1("", "")).toBe(1);
    expect(tokenF1("a", "")).toBe(0);
    expect(extractAnswer("x <answer>one</answer> y <ANSWER>two</answer>")).toBe("two");
    expect(extractAnswer("reasoning\n\nfinal line\n")).toBe("final line");
  });

  test("ANLS: threshold 0.5, max over golds, case and spaces normalised", () => {
    expect(anls("INV  2041", ["inv 2041"])).toBe(1);
    expect(anls("abcd", ["abcf"])).toBeCloseTo(0.75, 5);
    expect(anls("abcd", ["wxyz"])).toBe(0);
    expect(anls("ab", ["abcd"])).toBe(0);
    expect(anls("abc", ["abcd"])).toBeCloseTo(0.75, 5);
    expect(anls("", [""])).toBe(1);
    expect(anls("", ["x"])).toBe(0);
    expect(anls("x", ["zz", "x"])).toBe(1);
    expect(lastOpenToLastClose("<answer>a</answer> then <answer>b</answer>")).toBe("b");
  });

  test("OfficeQA normalisation keeps . - % and drops unit words", () => {
    expect(normalizeOfficeQa("$1,234.5 Million (nominal)")).toBe("1234.5");
    expect(normalizeOfficeQa("-3.2% billions")).toBe("-3.2%");
  });

  test("letter extraction: label, trailing punctuation, choice text, leading token", () => {
    const choices = [
      { label: "A", text: "x > 0" },
      { label: "B", text: "x = 0" },
    ];
    expect(extractChoice("b)", choices).label).toBe("B");
    expect(extractChoice("x = 0", choices).label).toBe("B");
    expect(extractChoice("A. because", choices).label).toBe("A");
    expect(extractChoice("none of them", choices).label).toBe("NONE OF THEM");
  });
});

describe("formats", () => {
  test("CSV with quotes, commas and newlines; Python-literal answer lists", () => {
    expect(parseCsvRows('a,b\n"x, y","line1\nline2"\n"q""uote",2\n')).toEqual([
      ["a", "b"],
      ["x, y", "line1\nline2"],
      ['q"uote', "2"],
    ]);
    expect(parseAnswerList("['a', \"b's\"]")).toEqual(["a", "b's"]);
    expect(parseAnswerList("plain")).toEqual(["plain"]);
  });

  test("SearchQA context keeps whole [DOC] passages within the limit", () => {
    const ctx = `[DOC] ${"a".repeat(50)} [DOC] ${"b".repeat(50)}`;
    expect(truncateContext(ctx, 70)).toBe(`[DOC] ${"a".repeat(50)}`);
    expect(truncateContext("x".repeat(100), 10)).toBe(`${"x".repeat(10)} …[context truncated]`);
  });
});

describe("ALFWorld helpers", () => {
  test("task type from the gamefile directory, action projection", () => {
    expect(taskTypeOf("json_2.1.1/train/pick_and_place_simple-Mug-None-Desk-1/trial_1/game.tw-pddl")).toBe(
      "pick_and_place",
    );
    expect(taskTypeOf("json_2.1.1/valid_seen/pick_two_obj_and_place-Pen-None-Box-2/t/game.tw-pddl")).toBe(
      "pick_two_obj_and_place",
    );
    expect(taskTypeOf("json_2.1.1/x/unknown_task-A/t/game.tw-pddl")).toBe("other");
    expect(projectAction("<think>go</think><action> Go To  Desk 1 </action>")).toEqual({
      action: "go to desk 1",
      valid: true,
      reasoning: "go",
    });
    expect(projectAction("I will look around")).toEqual({ action: "look", valid: false, reasoning: "" });
  });
});
