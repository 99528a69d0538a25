import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import tasks from "../../src/benchmarks/tasks/index.ts";
import { scoreRegex } from "../../src/benchmarks/tasks/evaluators.ts";
import { ConfigError, DataError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES } from "./support/context.ts";

const TASKS = join(FIXTURES, "tasks", "my_tasks.jsonl");

describe("command evaluator environment (issue 12)", () => {
  test("a planted provider key does not reach the scorer; the base allowlist and evaluator_pass_env do", async () => {
    await using server = await startFakeOpenAI({ reply: "<answer>144</answer>" });
    using dir = tempDir();
    const dump = join(dir.path, "env.txt");
    const script = join(dir.path, "score.sh");
    writeFileSync(script, `#!/bin/sh\nenv > '${dump}'\necho 1\n`);
    chmodSync(script, 0o755);
    const environ = {
      PATH: "/usr/bin:/bin",
      HOME: dir.path,
      LANG: "C.UTF-8",
      OPENAI_COMPATIBLE_API_KEY: "sk-planted-0123456789abcdef",
      AZURE_OPENAI_API_KEY: "azure-planted-0123456789",
      GITHUB_TOKEN: "ghp_planted0123456789abcdefghij",
      SCORER_MODE: "strict",
    };
    for (const [pass, expectMode] of [
      [[], false],
      [["SCORER_MODE"], true],
    ] as const) {
      await using ctx = await benchContext(
        server.url,
        {
          split_mode: "ratio",
          data_path: TASKS,
          evaluator: "command",
          evaluator_command: script,
          evaluator_pass_env: pass,
        },
        dir.path,
      );
      ctx.environ = environ;
      const splits = await tasks.loadSplits(ctx);
      const t1 = [...splits.train, ...splits.val, ...splits.test].find((t) => t.id === "t1")!;
      expect((await tasks.rollout(t1, "", ctx, 0)).hard).toBe(1);
      const seen = readFileSync(dump, "utf8");
      expect(seen).toContain("PATH=/usr/bin:/bin");
      expect(seen).toContain(`HOME=${dir.path}`);
      expect(seen).toContain("LANG=C.UTF-8");
      expect(seen).not.toContain("planted");
      expect(seen).not.toContain("OPENAI_COMPATIBLE_API_KEY");
      expect(seen.includes("SCORER_MODE=strict")).toBe(expectMode);
    }
  });
});

describe("regex evaluator time bound (issue 12)", () => {
  test("a backtracking reference is an evaluation error naming the task and pattern, not a 0; the next answer is scored", async () => {
    const answer = `${"a".repeat(40)}b`;
    const at = { line: 3, item: "t3" };
    const err = await scoreRegex(answer, ["^(a+)+$"], "tasks file line 3 (id t3)", 300, at).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataError);
    expect((err as DataError).data).toEqual({ line: 3, item: "t3", field: "reference", problem: "regex_timeout" });
    expect((err as DataError).message).toBe(
      'tasks file line 3 (id t3): regex reference "^(a+)+$" did not finish within 0.3 s on a 41-character answer (catastrophic backtracking); the run stops rather than score it',
    );
    // The stuck worker was replaced: later evaluations work, including the same pattern on a benign answer.
    expect((await scoreRegex("aaaa", ["^(a+)+$"], "x", 300)).hard).toBe(1);
    expect((await scoreRegex("order #123", ["/#\\d{3}/g"], "x")).hard).toBe(1);
    expect((await scoreRegex("order #123", ["/#\\d{3}/g"], "x")).hard).toBe(1);
  });

  test("an invalid pattern is still a config error", async () => {
    await expect(scoreRegex("x", ["(unclosed"], "tasks file line 1 (id a)")).rejects.toThrow(
      "tasks file line 1 (id a): invalid regular expression",
    );
    const err = await scoreRegex("x", ["(unclosed"], "tasks file line 1 (id a)", undefined, {
      line: 1,
      item: "a",
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).data).toEqual({ item: "a", line: 1, key: "reference", issues: [] });
  });
});
