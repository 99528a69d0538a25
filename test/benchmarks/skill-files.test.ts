import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import officeqa from "../../src/benchmarks/officeqa/index.ts";
import spreadsheet from "../../src/benchmarks/spreadsheetbench/index.ts";
import { skillFileAccess } from "../../src/benchmarks/shared/skill-files.ts";
import { packPackage, targetView } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { missing } from "../support/prereqs.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES } from "./support/context.ts";
import { makeWorkbooks } from "./support/spreadsheet.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const SKILL_MD = `---
name: treasury-answers
description: How to answer questions from Treasury Bulletins.
---
# Treasury answers

Units and rounding are in references/units.md.
`;
const UNITS = "# Units\n\n- Report debt in millions of dollars, as printed.\n";
const PKG = packPackage(SKILL_MD, [
  { path: "references/units.md", text: UNITS, fixed: false },
  { path: "references/unused.md", text: "never named\n", fixed: false },
]);

describe("a skill package in a tool-using rollout (OfficeQA's local tools)", () => {
  test("the target gets SKILL.md and the file names, reads a file with read_skill_file when it asks, and a wrong path says which exist", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      {
        toolCalls: [
          { id: "c1", name: "read_skill_file", arguments: '{"path":"references/units.md"}' },
          { id: "c2", name: "read_skill_file", arguments: '{"path":"../secrets.md"}' },
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
    expect(officeqa.readsSkillFiles).toBe(true);
    const splits = await officeqa.loadSplits(ctx);
    const row = await officeqa.rollout(splits.train[1]!, PKG, ctx, 0);
    expect(row).toMatchObject({ hard: 1, agent_ok: true, n_turns: 2 });
    const first = server.requests[0]!;
    expect(first.systemText).toContain("Units and rounding are in references/units.md.");
    expect(first.systemText).toContain(
      "Files of this skill (read one with read_skill_file when the skill sends you to it): references/units.md, references/unused.md",
    );
    expect(first.systemText).not.toContain("millions of dollars");
    expect(first.systemText).not.toContain("SKILLOPT_FILE");
    const tools = (first.body as { tools: Array<{ function: { name: string } }> }).tools.map((t) => t.function.name);
    expect(tools).toEqual(["glob", "grep", "read", "read_skill_file"]);
    const obs = (row.trajectory.filter((e) => "type" in e) as Array<{ obs: string }>).map((e) => e.obs);
    expect(obs).toEqual([
      UNITS,
      'error: the skill has no file "../secrets.md" (its files: references/units.md, references/unused.md)',
    ]);
  });

  test("without tools, or for a skill without files, the rollout gets what a chat target reads", () => {
    expect(skillFileAccess(PKG, false)).toMatchObject({ skill: targetView(PKG), tools: [] });
    expect(targetView(PKG)).toContain("millions of dollars");
    expect(targetView(PKG)).not.toContain("never named");
    expect(skillFileAccess(SKILL_MD, true)).toMatchObject({ skill: SKILL_MD, tools: [] });
  });
});

const noPython = await missing("openpyxl", import.meta.path);

describe.skipIf(noPython)("a skill package in SpreadsheetBench's react loop", () => {
  test("read_skill_file sits beside write_file and bash, and returns the file the agent asks for", async () => {
    await using server = await startFakeOpenAI();
    const code =
      "import openpyxl\\nwb = openpyxl.load_workbook(INPUT_PATH)\\nws = wb['Sheet1']\\nfor r in range(2, ws.max_row + 1):\\n    ws.cell(row=r, column=2).value = ws.cell(row=r, column=1).value * 2\\nwb.save(OUTPUT_PATH)\\n";
    server.enqueue(
      { toolCalls: [{ id: "r", name: "read_skill_file", arguments: '{"path":"references/units.md"}' }] },
      { toolCalls: [{ id: "w", name: "write_file", arguments: `{"path":"solution.py","content":"${code}"}` }] },
      { toolCalls: [{ id: "b", name: "bash", arguments: '{"command":"python solution.py"}' }] },
      "DONE",
    );
    using dir = tempDir();
    await makeWorkbooks(dir.path);
    await using ctx = await benchContext(
      server.url,
      {
        split_dir: join(FIXTURES, "spreadsheetbench", "split"),
        data_root: dir.path,
        mode: "react",
        max_turns: 5,
        exec_timeout: 120,
      },
      dir.path,
    );
    expect(spreadsheet.readsSkillFiles).toBe(true);
    const splits = await spreadsheet.loadSplits(ctx);
    const row = await spreadsheet.rollout(splits.test[0]!, PKG, ctx, 0);
    expect(row).toMatchObject({ hard: 1, n_turns: 4 });
    const tools = (server.requests[0]!.body as { tools: Array<{ function: { name: string } }> }).tools.map(
      (t) => t.function.name,
    );
    expect(tools).toEqual(["write_file", "bash", "read_skill_file"]);
    const obs = (row.trajectory.filter((e) => "type" in e) as Array<{ obs: string }>).map((e) => e.obs.split("\n")[0]);
    expect(obs).toEqual(["# Units", "wrote solution.py", "exit 0; output saved."]);
  });
});
