import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TASKS_INITIAL_SKILL } from "../../src/benchmarks/tasks/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { FIXTURES } from "./support/context.ts";

const SOURCES = {
  "skill-creator": join(FIXTURES, "tasks", "skill-creator", "house-style", "evals", "evals.json"),
  promptfoo: join(FIXTURES, "tasks", "promptfoo", "promptfooconfig.yaml"),
};
// The simulator on both roles; its judge grades by the texts a rubric quotes. A handful of
// selection items cannot convince the paired gate, so the learning path runs under strict.
const SIM = ["--config", "tasks", "--set", "model.backend=sim", "--set", "evaluation.gate_rule=strict"];

describe("e2e: evaluation files from other tools, imported unchanged, on the simulator", () => {
  for (const [name, path] of Object.entries(SOURCES)) {
    test(`${name}: trains a skill that learns the conventions its checks ask for, then scores it with eval and eval --baseline`, async () => {
      using dir = tempDir();
      const out = join(dir.path, "run");
      const env = { SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
      const train = await runCli(
        ["train", ...SIM, "--set", `env.data_path=${path}`, "--set", "train.num_epochs=2", "--out", out, "--json"],
        { env },
      );
      expect({ code: train.code, stderr: train.code ? train.stderr : "" }).toEqual({ code: 0, stderr: "" });
      const s = JSON.parse(train.stdout) as {
        status: string;
        accepted: number;
        baseline: { selection: number; test: number };
        best: { selection: number; test: number };
      };
      expect(s.status).toBe("finished");
      expect(s.accepted).toBeGreaterThanOrEqual(1);
      expect(s.best.test).toBeGreaterThan(s.baseline.test);
      expect(readFileSync(join(out, "best_skill.md"), "utf8")).toMatch(/YYYY-MM-DD|1234\.50 USD|kebab-case/);

      const ev = await runCli(
        [
          "eval",
          ...SIM,
          "--set",
          `env.data_path=${path}`,
          "--skill",
          join(out, "best_skill.md"),
          "--out",
          join(dir.path, "ev"),
          "--json",
        ],
        { env },
      );
      expect(ev.code).toBe(0);
      const e = JSON.parse(ev.stdout) as { hard: number; n_items: number; errored: number };
      expect(e.errored).toBe(0);
      expect(e.hard).toBeGreaterThan(0.5);

      const initial = join(dir.path, "initial.md");
      writeFileSync(initial, TASKS_INITIAL_SKILL);
      const check = await runCli(
        [
          "eval",
          ...SIM,
          "--set",
          `env.data_path=${path}`,
          "--skill",
          join(out, "best_skill.md"),
          "--baseline",
          initial,
          "--out",
          join(dir.path, "check"),
          "--json",
        ],
        { env },
      );
      expect(check.code).toBe(0);
      const c = JSON.parse(check.stdout) as {
        verdict: string;
        n_items: number;
        flips: { improved: unknown[]; regressed: unknown[] };
      };
      expect(c.n_items).toBe(e.n_items);
      expect(c.flips.improved.length).toBeGreaterThan(c.flips.regressed.length);
      expect(c.verdict).toBe("improved");
    });
  }

  test("a file with an entry that cannot be mapped stops before any call: one line naming the file and the entry, exit 2", async () => {
    using dir = tempDir();
    const file = join(dir.path, "promptfooconfig.yaml");
    writeFileSync(
      file,
      `prompts:\n  - "Q: {{q}}"\ntests:\n  - vars: { q: one }\n    assert:\n      - type: contains\n        value: one\n  - vars: { q: two }\n    assert:\n      - type: javascript\n        value: output.length < 3\n`,
    );
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, TASKS_INITIAL_SKILL);
    for (const cmd of [
      ["train", ...SIM, "--out", join(dir.path, "t")],
      ["eval", ...SIM, "--skill", skill, "--out", join(dir.path, "e")],
    ]) {
      const r = await runCli([...cmd, "--set", `env.data_path=${file}`]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${file}: tests[1].assert[0]: assert type "javascript" cannot be mapped`);
      expect(r.stderr).not.toContain("    at ");
    }
  });

  test("env.data_format names the format when the extension does not", async () => {
    using dir = tempDir();
    const file = join(dir.path, "house-evals.txt");
    const doc = JSON.parse(readFileSync(SOURCES["skill-creator"], "utf8")) as { evals: Array<{ files: string[] }> };
    for (const e of doc.evals) e.files = [];
    writeFileSync(file, JSON.stringify(doc));
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, TASKS_INITIAL_SKILL);
    const r = await runCli([
      "eval",
      ...SIM,
      "--set",
      `env.data_path=${file}`,
      "--set",
      "env.data_format=skill_creator",
      "--skill",
      skill,
      "--out",
      join(dir.path, "e"),
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_items: 15, hard: 0, errored: 0 });
  });
});
