import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, evalJson, KEY_ENV, scriptedServer, trainJson } from "./support/e2e.ts";
import { missing } from "../support/prereqs.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { FIXTURES, UPSTREAM_CONFIGS } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const CODE: Record<string, string> = {
  "sum of columns A and B":
    "ws.cell(row=r, column=3).value = ws.cell(row=r, column=1).value + ws.cell(row=r, column=2).value",
  "upper case": "ws.cell(row=r, column=2).value = ws.cell(row=r, column=1).value.upper()",
  "twice the value": "ws.cell(row=r, column=2).value = ws.cell(row=r, column=1).value * 3",
};

function sheetCode(instruction: string): string {
  if (instruction.includes("Summary")) {
    return "```python\nimport openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nn = wb['Sheet1'].max_row - 1\ns = wb.create_sheet('Summary')\ns['A1'] = 'count'\ns['B1'] = n\nwb.save(OUTPUT_PATH)\n```";
  }
  const body = Object.entries(CODE).find(([k]) => instruction.includes(k))?.[1] ?? "pass";
  return `\`\`\`python\nimport openpyxl\nwb = openpyxl.load_workbook(INPUT_PATH)\nws = wb['Sheet1']\nfor r in range(2, ws.max_row + 1):\n    ${body}\nwb.save(OUTPUT_PATH)\n\`\`\``;
}

const noPython = await missing("openpyxl", import.meta.path);

describe.skipIf(noPython)("e2e: SpreadsheetBench through openai_compatible (real Python)", () => {
  test("eval and a 1-epoch train score generated code cell by cell", async () => {
    await using server = await scriptedServer((req) => sheetCode(req.lastUserText));
    using dir = tempDir();
    await makeWorkbooks(dir.path);
    const upstream = join(UPSTREAM_CONFIGS, "spreadsheetbench", "default.yaml");
    const flags = [
      "--config",
      existsSync(upstream) ? upstream : "spreadsheetbench",
      "--set",
      `env.split_dir=${join(FIXTURES, "spreadsheetbench", "split")}`,
      "--set",
      `env.data_root=${dir.path}`,
      "--set",
      "train.train_size=0",
      ...compatFlags(server.url),
    ];
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const ev = await evalJson([...flags, "--skill", skill, "--split", "val", "--out", join(dir.path, "eval")]);
    expect(ev).toMatchObject({ n_items: 1, hard: 1, soft: 1 });
    const tr = await trainJson([...flags, "--out", join(dir.path, "run")]);
    expect(tr).toMatchObject({ status: "finished", steps: 1 });
    expect(tr.baseline).toMatchObject({ selection: 1, test: 0 });
  }, 60_000);
});

describe("e2e: ALFWorld through the bridge (fake environment process)", () => {
  test("eval and a 1-epoch train play the episodes and score the wins", async () => {
    await using server = await scriptedServer((req) => {
      const t = req.lastUserText;
      const obs = t.slice(t.lastIndexOf("observation:"));
      const action = obs.includes("you see a mug 1")
        ? "take mug 1 from desk 1"
        : obs.includes("You pick up the mug 1")
          ? "put mug 1 in/on shelf 1"
          : "go to desk 1";
      return `<think>next</think><action>${action}</action>`;
    });
    using dir = tempDir();
    const py = join(dir.path, "fake-python");
    writeFileSync(py, `#!/bin/sh\nexec "${process.execPath}" "${join(FIXTURES, "alfworld", "fake_env.ts")}"\n`);
    chmodSync(py, 0o755);
    const flags = [
      "--config",
      "alfworld",
      "--set",
      `env.split_dir=${join(FIXTURES, "alfworld")}`,
      "--set",
      `env.alfworld_python=${py}`,
      "--set",
      "env.max_steps=6",
      ...compatFlags(server.url),
    ];
    const env = { ALFWORLD_DATA: join(dir.path, "alfworld-data") };
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const ev = await evalJson([...flags, "--skill", skill, "--split", "all", "--out", join(dir.path, "eval")], env);
    expect(ev).toMatchObject({ n_items: 4, hard: 1 });
    const tr = await trainJson([...flags, "--out", join(dir.path, "run")], env);
    expect(tr).toMatchObject({ status: "finished", steps: 1 });
    expect(tr.baseline).toMatchObject({ selection: 1, test: 1 });
  }, 60_000);

  test("without ALFWorld the run stops with one line saying what to install", async () => {
    await using server = await scriptedServer(() => "<think>x</think><action>look</action>");
    using dir = tempDir();
    const py = join(dir.path, "fake-python");
    writeFileSync(
      py,
      `#!/bin/sh\nFAKE_ALFWORLD_MISSING=1 exec "${process.execPath}" "${join(FIXTURES, "alfworld", "fake_env.ts")}"\n`,
    );
    chmodSync(py, 0o755);
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const r = await runCli(
      [
        "eval",
        "--config",
        "alfworld",
        "--set",
        `env.split_dir=${join(FIXTURES, "alfworld")}`,
        "--set",
        `env.alfworld_python=${py}`,
        "--skill",
        skill,
        "--split",
        "val",
        "--out",
        join(dir.path, "e"),
        ...compatFlags(server.url),
      ],
      { env: { ...KEY_ENV, ALFWORLD_DATA: dir.path } },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("ALFWorld is not installed: run `pip install alfworld && alfworld-download`");
  });
});
