import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compatFlags, KEY_ENV, scriptedServer } from "../benchmarks/support/e2e.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const TASKS = join(FIXTURES, "tasks", "my_tasks.jsonl");
const FAKE_CLAUDE = join(import.meta.dir, "..", "support", "fake-bins", "claude");
const SEARCHQA = ["--config", "searchqa", "--set", `env.split_dir=${join(FIXTURES, "searchqa")}`, "--no-cache"];

function calls(home: string): string[] {
  const f = join(home, "fake-bin-calls.jsonl");
  return existsSync(f) ? readFileSync(f, "utf8").trim().split("\n").filter(Boolean) : [];
}

describe("what fails at step N because of something knowable at step 0 fails at step 0 (CLI spawned)", () => {
  test("eval with the judge evaluator sets up the judge's role and scores through it", async () => {
    await using server = await scriptedServer((req) =>
      req.lastUserText.includes("12 * 12") ? "<answer>144</answer>" : "<answer>not sure</answer>",
    );
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, "# Task Skill\n\nGive the exact answer.\n");
    const r = await runCli(
      [
        "eval",
        "--config",
        "tasks",
        "--set",
        `env.data_path=${TASKS}`,
        "--set",
        "env.evaluator=judge",
        "--set",
        "env.judge_rubric=The answer must be correct.",
        ...compatFlags(server.url),
        "--skill",
        skill,
        "--split",
        "all",
        "--out",
        join(dir.path, "eval"),
        "--json",
      ],
      { env: KEY_ENV },
    );
    expect(r.code, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout) as { hard: number; n_items: number; status: string; errored: number };
    expect(s).toMatchObject({ status: "finished", errored: 0 });
    const judged = server.requests.filter((q) => q.systemText.includes("grade one answer"));
    expect(judged).toHaveLength(s.n_items);
    expect(judged.every((q) => q.model === "opt-model")).toBe(true);
    expect(s.hard).toBeGreaterThan(0);
    expect(s.hard).toBeLessThan(1);
  }, 60_000);

  test("a starting skill that breaks the skill format (description over 1024 characters) exits 2 before any call or file", async () => {
    await using server = await scriptedServer(() => "<answer>x</answer>");
    using dir = tempDir();
    const skill = join(dir.path, "SKILL.md");
    writeFileSync(
      skill,
      `---\nname: searchqa-skill\ndescription: ${"Answers search questions from snippets. ".repeat(28).trim()}\n---\n\n# SearchQA Skill\n\nQuote the span.\n`,
    );
    const out = join(dir.path, "run");
    const r = await runCli(
      ["train", ...SEARCHQA, ...compatFlags(server.url), "--set", `env.skill_init=${skill}`, "--out", out],
      { env: KEY_ENV },
    );
    expect(r.code).toBe(2);
    const errors = r.stderr.split("\n").filter((l) => /^(config )?error: /.test(l));
    expect(errors).toEqual([
      expect.stringMatching(
        /^config error: starting skill .*SKILL\.md: the frontmatter description is \d{4} characters \(max 1024\)$/,
      ),
    ]);
    expect(r.stderr).toContain("would reject them all");
    expect(server.requests).toHaveLength(0);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  test("an agent CLI that is not on PATH exits 2, one whose --version fails exits 1 — both before any call", async () => {
    using home = tempDir("home-");
    const base = [
      "train",
      ...SEARCHQA,
      "--set",
      "model.backend=sim",
      "--set",
      "model.target_backend=claude_code_exec",
      "--set",
      "model.target=claude-sonnet-4-6",
    ];
    const missing = await runCli(
      [
        ...base,
        "--set",
        `model.claude_code_exec_path=${join(home.path, "no-such-claude")}`,
        "--out",
        join(home.path, "a"),
      ],
      { env: { HOME: home.path } },
    );
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr.split("\n").filter((l) => l.includes("error: "))).toEqual([
      expect.stringMatching(/error: .*no-such-claude: not found \(the target role runs claude_code_exec\)$/),
    ]);

    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ version: "fail" }));
    const broken = await runCli(
      [...base, "--set", `model.claude_code_exec_path=${FAKE_CLAUDE}`, "--out", join(home.path, "b")],
      { env: { HOME: home.path } },
    );
    expect(broken.code, broken.stderr).toBe(1);
    expect(broken.stderr).toMatch(
      /error: .*claude --version exited with code 1: .*shared libraries.*\(the target role runs claude_code_exec\)/,
    );
    expect(calls(home.path)).toHaveLength(0);
  }, 60_000);

  test("eval on an agent CLI that exits 1 on every task: exit 1 naming the CLI target, no score", async () => {
    using home = tempDir("home-");
    writeFileSync(join(home.path, "fake-bin.json"), JSON.stringify({ mode: "fail" }));
    const skill = join(home.path, "s.md");
    writeFileSync(skill, "# SearchQA Skill\n- answer briefly\n");
    const r = await runCli(
      [
        "eval",
        ...SEARCHQA,
        "--skill",
        skill,
        "--split",
        "test",
        "--set",
        "model.target_backend=claude_code_exec",
        "--set",
        `model.claude_code_exec_path=${FAKE_CLAUDE}`,
        "--out",
        join(home.path, "eval"),
      ],
      { env: { HOME: home.path } },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("error: "))).toEqual([
      expect.stringMatching(
        /^error: target \(claude_code_exec, model [^,]+, agent CLI\) gave no answer for 2 of 2 items of the evaluation of split test; last error: .*exited with code 1/,
      ),
    ]);
    expect(r.stdout).not.toContain("hard=");
    expect(calls(home.path).length).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
