import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import alfworld from "../../src/benchmarks/alfworld/index.ts";
import officeqa from "../../src/benchmarks/officeqa/index.ts";
import { scoreOfficeQa } from "../../src/benchmarks/officeqa/score.ts";
import spreadsheet from "../../src/benchmarks/spreadsheetbench/index.ts";
import { UnsupportedError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { missing } from "../support/prereqs.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { benchContext, FIXTURES } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

describe("OfficeQA tool loop", () => {
  test("the model greps and reads the local bulletin through tool calls, then answers; scored with normalisation", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      {
        toolCalls: [
          { id: "c1", name: "glob", arguments: '{"pattern":"*1944*"}' },
          { id: "c2", name: "grep", arguments: '{"pattern":"public debt","path":"treasury_bulletin_1944_01.txt"}' },
        ],
      },
      {
        toolCalls: [
          { id: "c3", name: "read", arguments: '{"path":"treasury_bulletin_1944_01.txt","start":9,"limit":2}' },
        ],
      },
      "The gross debt was <answer>$170,659 million</answer>",
    );
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "officeqa"), data_dirs: [join(FIXTURES, "officeqa", "docs")], max_tool_turns: 5 },
      dir.path,
    );
    const splits = await officeqa.loadSplits(ctx);
    const row = await officeqa.rollout(splits.train[1]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 1, soft: 1, agent_ok: true, n_turns: 3, predicted_answer: "$170,659 million" });
    const tools = row.trajectory.filter((e) => "type" in e) as Array<{ cmd: string; obs: string }>;
    expect(tools[0]!.obs).toBe("treasury_bulletin_1944_01.txt");
    expect(tools[1]!.obs).toContain("10: Gross public debt outstanding");
    expect(tools[2]!.obs).toContain("9: Public Debt");
    const second = server.requests[1]!.body as {
      messages: Array<{ role: string; tool_call_id?: string }>;
      tools: unknown[];
    };
    expect(second.tools).toHaveLength(3);
    expect(second.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id)).toEqual(["c1", "c2"]);
    // the other bulletin is not a candidate file for this question
    expect(server.requests[0]!.lastUserText).not.toContain("1950_02");
  });

  test("oracle parsed pages are rendered into the prompt (tables as Markdown); the tool budget is enforced", async () => {
    await using server = await startFakeOpenAI({
      reply: { toolCalls: [{ name: "read", arguments: '{"path":"treasury_bulletin_1944_01.txt"}' }] },
    });
    using dir = tempDir();
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "officeqa"), data_dirs: [join(FIXTURES, "officeqa", "docs")], max_tool_turns: 2 },
      dir.path,
    );
    const splits = await officeqa.loadSplits(ctx);
    const row = await officeqa.rollout(splits.train[0]!, "", ctx, 0);
    // The model answered every turn (with tool calls): running out of turns is a wrong answer, a score — not "no answer".
    expect(row).toMatchObject({
      hard: 0,
      agent_ok: true,
      fail_reason: "Exceeded tool-turn budget (2)",
      oracle_parsed_pages_included: true,
    });
    const user = server.requests[0]!.lastUserText;
    expect(user).toContain("| Total receipts | 3,412 |");
    expect(user).toContain("Summary of Federal Fiscal Operations & Receipts");
    expect(user).not.toContain("Another page");
  });

  test("scoring: unit words, commas and numeric tolerance", () => {
    expect(scoreOfficeQa("170,659 million dollars", "170659", 0).em).toBe(1);
    expect(scoreOfficeQa("4609.0", "4,609", 0).em).toBe(1);
    expect(scoreOfficeQa("4650", "4,609", 0).em).toBe(0);
    expect(scoreOfficeQa("4650", "4,609", 0.01).em).toBe(1);
    expect(scoreOfficeQa("5.2%", "5.2", 0).em).toBe(0);
  });
});

function fakeAlfworldPython(dir: string, missing = false): string {
  const p = join(dir, missing ? "fake-python-missing" : "fake-python");
  const env = missing ? "FAKE_ALFWORLD_MISSING=1 " : "";
  writeFileSync(p, `#!/bin/sh\n${env}exec "${process.execPath}" "${join(FIXTURES, "alfworld", "fake_env.ts")}"\n`);
  chmodSync(p, 0o755);
  return p;
}

describe("ALFWorld bridge", () => {
  test("the real bridge script drives a TextWorld-style env (stand-in packages on PYTHONPATH)", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      "<think>a</think><action>go to desk 1</action>",
      "<think>b</think><action>take mug 1 from desk 1</action>",
      "<think>c</think><action>put mug 1 in/on shelf 1</action>",
    );
    using dir = tempDir();
    const saved = process.env.PYTHONPATH;
    process.env.PYTHONPATH = join(FIXTURES, "alfworld", "fake_pkgs");
    process.env.PYTHONDONTWRITEBYTECODE = "1";
    process.env.ALFWORLD_DATA = "/data/alfworld";
    try {
      await using ctx = await benchContext(
        server.url,
        { split_dir: join(FIXTURES, "alfworld"), alfworld_python: "python3", max_steps: 10 },
        dir.path,
      );
      const splits = await alfworld.loadSplits(ctx);
      const row = await alfworld.rollout(splits.val[0]!, "", ctx, 0);
      expect(row).toMatchObject({ hard: 1, n_turns: 3, task_description: "put a mug in shelf." });
    } finally {
      if (saved === undefined) delete process.env.PYTHONPATH;
      else process.env.PYTHONPATH = saved;
    }
  });

  test("plays an episode step by step through the JSON-lines bridge and scores the win", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      "<think>go to the desk</think><action>go to desk 1</action>",
      "<think>take it</think><action>Take mug 1 from desk 1</action>",
      "no tags at all",
      "<think>put</think><action>put mug 1 in/on shelf 1</action>",
    );
    using dir = tempDir();
    process.env.ALFWORLD_DATA = "/data/alfworld";
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "alfworld"), alfworld_python: fakeAlfworldPython(dir.path), max_steps: 10 },
      dir.path,
    );
    const splits = await alfworld.loadSplits(ctx);
    const row = await alfworld.rollout(splits.train[0]!, "- grab objects at once", ctx, 0);
    expect(row).toMatchObject({
      hard: 1,
      soft: 1,
      n_turns: 4,
      task_type: "pick_and_place",
      task_description: "put a mug in shelf.",
    });
    const steps = row.trajectory.filter((e) => "step" in e) as Array<{ action: string }>;
    expect(steps.map((s) => s.action)).toEqual([
      "go to desk 1",
      "take mug 1 from desk 1",
      "look",
      "put mug 1 in/on shelf 1",
    ]);
    expect(server.requests[0]!.lastUserText).toContain("## Skill Knowledge");
    expect(server.requests[1]!.lastUserText).toContain("Your task is to: put a mug in shelf.");
  });

  test("an episode that runs out of steps fails with the reason; a missing install is one clear error", async () => {
    await using server = await startFakeOpenAI({ reply: "<think>hm</think><action>look</action>" });
    using dir = tempDir();
    process.env.ALFWORLD_DATA = "/data/alfworld";
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "alfworld"), alfworld_python: fakeAlfworldPython(dir.path), max_steps: 3 },
      dir.path,
    );
    const splits = await alfworld.loadSplits(ctx);
    const row = await alfworld.rollout(splits.train[0]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 0, n_turns: 3 });
    expect(String(row.fail_reason)).toMatch(/Episode ended without completing the task|Timeout after 3 steps/);
    const missingCtx = { ...ctx, env: { ...ctx.env, alfworld_python: fakeAlfworldPython(dir.path, true) } };
    const err = await alfworld.rollout(splits.train[0]!, "", missingCtx, 0).catch((e) => e);
    expect(err).toBeInstanceOf(UnsupportedError);
    expect(err.message).toStartWith("ALFWorld is not installed: run `pip install alfworld && alfworld-download`");
  });
});

const GOOD_SUM =
  "```python\nimport openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Sheet1']\nfor r in range(2, ws.max_row + 1):\n    ws.cell(row=r, column=3).value = ws.cell(row=r, column=1).value + ws.cell(row=r, column=2).value\nwb.save(OUTPUT_PATH)\n```";
const BAD_SUM = GOOD_SUM.replace("+ ws.cell(row=r, column=2)", "* ws.cell(row=r, column=2)");

const noPython = await missing("openpyxl", import.meta.path);

describe.skipIf(noPython)("SpreadsheetBench rollout", () => {
  test("multi mode in training: wrong cells are fed back without the expected values, then the fix passes all cases", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue("```python\nraise RuntimeError('oops')\n```", BAD_SUM, GOOD_SUM);
    using dir = tempDir();
    await makeWorkbooks(dir.path);
    await using ctx = await benchContext(
      server.url,
      {
        split_dir: join(FIXTURES, "spreadsheetbench", "split"),
        data_root: dir.path,
        mode: "multi",
        max_turns: 5,
        exec_timeout: 120,
      },
      dir.path,
    );
    const splits = await spreadsheet.loadSplits(ctx);
    const row = await spreadsheet.rollout(splits.train[0]!, "", ctx, 0);
    expect(row).toMatchObject({ hard: 1, soft: 1, n_cases: 2, n_pass: 2, n_turns: 3 });
    const errorFeedback = server.requests[1]!.lastUserText;
    expect(errorFeedback).toContain("RuntimeError: oops");
    const wrongFeedback = server.requests[2]!.lastUserText;
    expect(wrongFeedback).toContain("0 of 3 checked cells are right");
    expect(wrongFeedback).toContain('Sheet1!C2: your value "2"');
    expect(wrongFeedback).not.toMatch(/expected/i);
    const report = row.trajectory.at(-1) as { content: string };
    expect(report.content).toContain("[POST-EXECUTION VERIFICATION]");
    expect(report.content).toContain("expected=3");
  });

  test("on val there is no gold feedback: the first successful run is final and scored per case", async () => {
    await using server = await startFakeOpenAI({
      reply: "```python\nimport shutil\nshutil.copy(INPUT_PATH, OUTPUT_PATH)\n```",
    });
    using dir = tempDir();
    await makeWorkbooks(dir.path);
    await using ctx = await benchContext(
      server.url,
      { split_dir: join(FIXTURES, "spreadsheetbench", "split"), data_root: dir.path, mode: "multi" },
      dir.path,
    );
    const splits = await spreadsheet.loadSplits(ctx);
    const row = await spreadsheet.rollout(splits.val[0]!, "", ctx, 0);
    expect(server.requests.length).toBe(1);
    expect(row).toMatchObject({ hard: 0, soft: 0, n_cases: 1 });
    expect(String(row.fail_reason)).toContain("missing sheet 'Summary'");
  });
});
