import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sleepConfigLayer } from "../../src/cli/sleep/config-layer.ts";
import { loadSleepConfig, resolveStateDir } from "../../src/sleep/config.ts";
import { checkPasses, scoreExact, scoreRuleJudge } from "../../src/sleep/judges.ts";
import { applyEdits, getRules, LEARNED_END, LEARNED_START, setLearned } from "../../src/sleep/learned-block.ts";
import { sanitizeLine } from "../../src/sleep/report.ts";
import { tempDir } from "../support/tmp.ts";

const edit = (op: "add" | "delete" | "replace", content: string, anchor = "") => ({
  target: "skill" as const,
  op,
  content,
  anchor,
  rationale: "",
});

describe("learned block", () => {
  test("edits touch only the block; hand-written text around it is kept byte for byte", () => {
    const doc = `# Title\n\nIntro.\n\n${LEARNED_START}\n- old rule\n${LEARNED_END}\n\n## After\n\nKept.\n`;
    const r = applyEdits(doc, [
      edit("add", "--flag rules keep their dashes"),
      edit("replace", "new rule", "old rule"),
      edit("delete", "missing"),
    ]);
    expect(getRules(r.doc)).toEqual(["new rule", "--flag rules keep their dashes"]);
    expect(r.doc.startsWith("# Title\n\nIntro.\n\n")).toBe(true);
    expect(r.doc.endsWith("## After\n\nKept.\n")).toBe(true);
    expect(r.unmatched.map((e) => e.op)).toEqual(["delete"]);
  });
  test("a duplicate add is unmatched and an empty rule list removes the block", () => {
    const doc = setLearned("# T\n", ["a"]);
    expect(applyEdits(doc, [edit("add", "A ")]).unmatched).toHaveLength(1);
    expect(setLearned(doc, [])).toBe("# T\n");
  });
});

describe("judges", () => {
  test("rule checks score hard and soft", () => {
    const judge = {
      kind: "rule",
      checks: [
        { op: "contains", arg: "bun" },
        { op: "max_chars", arg: 5 },
        { op: "section_present", arg: "Summary" },
      ],
    };
    expect(scoreRuleJudge(judge, "## Summary\nbun")).toEqual({
      hard: 0,
      soft: 2 / 3,
      rationale: "failed: max_chars=5",
    });
    expect(checkPasses({ op: "no_refusal", arg: null }, "I can't do that", []).pass).toBe(false);
    expect(checkPasses({ op: "tool_called", arg: "search" }, "TOOL_CALL: search", []).pass).toBe(true);
  });
  test("exact references are normalised substrings with keyword partial credit", () => {
    expect(scoreExact("arXiv:1706.03762", "The answer is <answer>arXiv:1706.03762</answer>").hard).toBe(1);
    expect(scoreExact("arXiv:1706.03762", "approximately arXiv:1706.037").soft).toBeCloseTo(2 / 3);
  });
});

describe("config", () => {
  test("a typo in the config file is an error naming the key", () => {
    using tmp = tempDir();
    mkdirSync(join(tmp.path, ".skillopt-sleep"));
    writeFileSync(join(tmp.path, ".skillopt-sleep", "config.json"), JSON.stringify({ edit_budgett: 3 }));
    expect(() => loadSleepConfig(sleepConfigLayer, {}, { home: tmp.path })).toThrow(/edit_budgett/);
  });
  test("an unknown backend is an error instead of a silent mock (§12.1 #23); aliases normalise", () => {
    expect(() => loadSleepConfig(sleepConfigLayer, { backend: "claud" }, { file: "" })).toThrow(/backend/);
    expect(loadSleepConfig(sleepConfigLayer, { backend: "claude_code" }, { file: "" }).config.backend).toBe("claude");
    expect(loadSleepConfig(sleepConfigLayer, { edit_budget: 0 }, { file: "" }).config.edit_budget).toBe(0);
  });
  test("the state dir follows a non-default claude_home", () => {
    const cfg = loadSleepConfig(sleepConfigLayer, { claude_home: "/tmp/h/.claude" }, { file: "" }).config;
    expect(resolveStateDir(cfg, {}, "/home/u")).toBe("/tmp/h/.skillopt-sleep");
    expect(resolveStateDir(loadSleepConfig(sleepConfigLayer, {}, { file: "" }).config, {}, "/home/u")).toBe(
      "/home/u/.skillopt-sleep",
    );
  });
});

describe("terminal sanitising", () => {
  test("ANSI, control characters and secrets never reach a terminal line", () => {
    expect(sanitizeLine("a\u001b[31mred\u001b[0m\tb\u0007 c")).toBe("ared b c");
  });
});
