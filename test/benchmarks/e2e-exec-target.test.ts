import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { FIXTURES } from "./support.ts";

const FAKE_CLAUDE = join(import.meta.dir, "..", "support", "fake-bins", "claude");

describe("e2e: SearchQA on an exec target (fake Claude Code CLI)", () => {
  test("the skill is installed for the agent, task.md holds the question, and the final answer is scored", async () => {
    using home = tempDir("home-");
    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ reply: "{skill}|<answer>Jupiter</answer>" }));
    const skill = join(home.path, "s.md");
    writeFileSync(skill, "# SearchQA Skill\n- answer briefly\n");
    const r = await runCli(
      [
        "eval", "--config", "searchqa", "--skill", skill, "--split", "test", "--json",
        "--set", `env.split_dir=${join(FIXTURES, "searchqa")}`,
        "--set", "model.target_backend=claude_code_exec",
        "--set", `model.claude_code_exec_path=${FAKE_CLAUDE}`,
        "--out", join(home.path, "eval"),
      ],
      { env: { HOME: home.path } },
    );
    expect(r.stderr).not.toContain("rror");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_items: 2, hard: 0.5 });
    const calls = readFileSync(join(home.path, "fake-bin-calls.jsonl"), "utf8").trim().split("\n");
    expect(calls).toHaveLength(2);
    const rows = readFileSync(join(home.path, "eval", "results.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(rows.map((r) => r.response)).toEqual(["skill-found|<answer>Jupiter</answer>", "skill-found|<answer>Jupiter</answer>"]);
    expect(rows[0].trajectory[0].content).toContain("## Question\nLargest planet of the Solar System");
  });
});
