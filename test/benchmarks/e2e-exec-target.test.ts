import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { missing } from "../support/prereqs.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { FIXTURES } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const FAKE_CLAUDE = join(import.meta.dir, "..", "support", "fake-bins", "claude");

describe("e2e: SearchQA on an exec target (fake Claude Code CLI)", () => {
  test("the skill is installed for the agent, task.md holds the question, and the final answer is scored", async () => {
    using home = tempDir("home-");
    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ reply: "{skill}|<answer>Jupiter</answer>" }));
    const skill = join(home.path, "s.md");
    writeFileSync(skill, "# SearchQA Skill\n- answer briefly\n");
    const r = await runCli(
      [
        "eval",
        "--config",
        "searchqa",
        "--skill",
        skill,
        "--split",
        "test",
        "--json",
        "--set",
        `env.split_dir=${join(FIXTURES, "searchqa")}`,
        "--set",
        "model.target_backend=claude_code_exec",
        "--set",
        `model.claude_code_exec_path=${FAKE_CLAUDE}`,
        "--out",
        join(home.path, "eval"),
      ],
      { env: { HOME: home.path } },
    );
    expect(r.stderr).not.toContain("rror");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_items: 2, hard: 0.5 });
    const calls = readFileSync(join(home.path, "fake-bin-calls.jsonl"), "utf8").trim().split("\n");
    expect(calls).toHaveLength(2);
    const rows = readFileSync(join(home.path, "eval", "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows.map((r) => r.response)).toEqual([
      "skill-found|<answer>Jupiter</answer>",
      "skill-found|<answer>Jupiter</answer>",
    ]);
    expect(rows[0].trajectory[0].content).toContain("## Question\nLargest planet of the Solar System");
  });
});

const noPython = await missing("openpyxl", import.meta.path);

describe.skipIf(noPython)("e2e: SpreadsheetBench single mode on an exec target (fake Claude Code CLI)", () => {
  test("the agent's final script is executed in our isolated runner and scored; multi mode is refused", async () => {
    using home = tempDir("home-");
    await makeWorkbooks(home.path);
    const code =
      "import openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Sheet1']\nfor r in range(2, ws.max_row + 1):\n    ws.cell(row=r, column=2).value = ws.cell(row=r, column=1).value * 2\nwb.save(OUTPUT_PATH)";
    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ reply: `Done.\n\`\`\`python\n${code}\n\`\`\`` }));
    const skill = join(home.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const base = [
      "eval",
      "--config",
      "spreadsheetbench",
      "--skill",
      skill,
      "--split",
      "test",
      "--json",
      "--set",
      `env.split_dir=${join(FIXTURES, "spreadsheetbench", "split")}`,
      "--set",
      `env.data_root=${home.path}`,
      "--set",
      "model.target_backend=claude_code_exec",
      "--set",
      `model.claude_code_exec_path=${FAKE_CLAUDE}`,
    ];
    const r = await runCli([...base, "--set", "env.mode=single", "--out", join(home.path, "eval")], {
      env: { HOME: home.path },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_items: 1, hard: 1 });
    const multi = await runCli([...base, "--out", join(home.path, "eval2")], { env: { HOME: home.path } });
    expect(multi.code).toBe(1);
    expect(multi.stderr).toContain("supports env.mode single only (got multi)");
  });
});

describe("e2e: OfficeQA offline on an exec target (fake Claude Code CLI)", () => {
  test("task.md points the agent at the documents under docs/ and its tagged answer is scored", async () => {
    using home = tempDir("home-");
    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ reply: "{task} <answer>3,412</answer>" }));
    const skill = join(home.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const r = await runCli(
      [
        "eval",
        "--config",
        "officeqa",
        "--skill",
        skill,
        "--split",
        "train",
        "--json",
        "--set",
        `env.split_dir=${join(FIXTURES, "officeqa")}`,
        "--set",
        `env.data_dirs=${join(FIXTURES, "officeqa", "docs")}`,
        "--set",
        "model.target_backend=claude_code_exec",
        "--set",
        `model.claude_code_exec_path=${FAKE_CLAUDE}`,
        "--out",
        join(home.path, "eval"),
      ],
      { env: { HOME: home.path } },
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_items: 2, hard: 0.5 });
    const rows = readFileSync(join(home.path, "eval", "results.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(rows[0].target_user_prompt).toContain("- docs/treasury_bulletin_1944_01.txt");
    expect(rows[0].response).toStartWith("## Question");
  });
});
