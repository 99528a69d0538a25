import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, KEY_ENV, RULE, scriptedServer, trainJson } from "./support/e2e.ts";
import { FIXTURES, UPSTREAM_CONFIGS } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const TASKS = join(FIXTURES, "tasks", "my_tasks.jsonl");
const ANSWERS: Record<string, string> = {
  "12 * 12": "144",
  backwards: "tac",
  rainbow: "yellow",
  France: "Paris",
  water: "H2O",
  "leap year": "366",
  JSON: '{"ok": true}',
  "7 + 8": "15",
  sky: "blue",
  "square root": "9",
};

/** Right on every task once the skill holds RULE; before that, right only on the arithmetic. */
function target(req: { systemText: string; lastUserText: string }): string {
  const key = Object.keys(ANSWERS).find((k) => req.lastUserText.includes(k));
  if (!key) return "<answer>?</answer>";
  const knows = req.systemText.includes(RULE) || /\d/.test(key);
  return `<answer>${knows ? ANSWERS[key] : "not sure"}</answer>`;
}

describe("e2e: a user's own tasks file, no code", () => {
  test("trains a skill from the JSONL file with each evaluator", async () => {
    await using server = await scriptedServer(target);
    using dir = tempDir();
    const scorer = join(dir.path, "score.sh");
    writeFileSync(
      scorer,
      `#!/bin/sh\nread line\ncase "$line" in *'"answer":"not sure"'*) echo 0 ;; *) echo 1 ;; esac\n`,
    );
    chmodSync(scorer, 0o755);
    const refs = join(dir.path, "refs.jsonl");
    // regex and json_match tasks: references are patterns / JSON values
    writeFileSync(
      refs,
      [
        { id: "r1", input: "What is 12 * 12?", reference: "/^1\\d\\d$/" },
        { id: "r2", input: "What is the capital of France?", reference: "^Paris$" },
        { id: "r3", input: "How many days are in a leap year?", reference: "36[56]" },
        { id: "r4", input: "Return a JSON object with key ok set to true.", reference: { ok: true } },
        { id: "r5", input: "What colour is the sky on a clear day?", reference: "blue" },
      ]
        .map((t) => JSON.stringify(t))
        .join("\n"),
    );
    const cases: Array<[string, string[]]> = [
      ["exact", []],
      ["contains", []],
      ["f1", []],
      ["regex", ["--set", `env.data_path=${refs}`, "--set", "env.split_ratio=2:1:2"]],
      ["json_match", ["--set", `env.data_path=${refs}`, "--set", "env.split_ratio=2:1:2"]],
      ["command", ["--set", `env.evaluator_command=${scorer}`]],
      ["judge", ["--set", "env.judge_rubric=The answer must be correct and short."]],
    ];
    const results = await Promise.all(
      cases.map(([evaluator, extra]) =>
        // a handful of items cannot convince the paired gate; the learning path is what is checked here
        trainJson([
          "--config",
          "tasks",
          "--set",
          `env.data_path=${TASKS}`,
          "--set",
          `env.evaluator=${evaluator}`,
          "--set",
          "evaluation.gate_rule=strict",
          ...extra,
          ...compatFlags(server.url),
          "--out",
          join(dir.path, evaluator),
        ]),
      ),
    );
    for (const [i, r] of results.entries()) {
      expect({ evaluator: cases[i]![0], status: r.status }).toEqual({ evaluator: cases[i]![0], status: "finished" });
    }
    const judge = results[6]!;
    expect(judge.best.selection).toBeGreaterThan(judge.baseline.selection);
    const exact = results[0]!;
    expect(exact.accepted).toBeGreaterThanOrEqual(1);
    expect(exact.best.selection).toBeGreaterThan(exact.baseline.selection);
    expect(await Bun.file(join(dir.path, "exact", "best_skill.md")).text()).toContain(RULE);
  }, 60_000);

  test("a scorer that crashes is no verdict: the run stops at the baseline naming the evaluator command, not a zero", async () => {
    await using server = await scriptedServer(target);
    using dir = tempDir();
    const scorer = join(dir.path, "crash.sh");
    writeFileSync(scorer, "#!/bin/sh\necho 'Traceback: KeyError reference' >&2\nexit 3\n");
    chmodSync(scorer, 0o755);
    const out = join(dir.path, "o");
    const r = await runCli(
      [
        "train",
        "--config",
        "tasks",
        "--set",
        `env.data_path=${TASKS}`,
        "--set",
        "env.evaluator=command",
        "--set",
        `env.evaluator_command=${scorer}`,
        ...compatFlags(server.url),
        "--out",
        out,
      ],
      { env: KEY_ENV },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("the evaluator command (env.evaluator_command) gave no verdict for");
    expect(r.stderr).toContain("exited 3: Traceback: KeyError reference");
    expect(r.stderr).not.toContain("    at ");
    // The baseline is the canary: no optimizer call was paid for a run whose scores would all be zeros.
    expect(server.requests.filter((q) => q.model === "opt-model")).toHaveLength(0);
    const runs = await runCli(["runs", dir.path, "--json"]);
    expect(JSON.parse(runs.stdout)[0]).toMatchObject({ status: "failed" });
  });

  test("a bad line stops the run before any call, naming the file and the line", async () => {
    await using server = await scriptedServer(target);
    using dir = tempDir();
    const bad = join(dir.path, "bad.jsonl");
    writeFileSync(bad, `{"id":"a","input":"x","reference":"1"}\n{"id":"b","reference":"2"}\n`);
    const r = await runCli(
      [
        "train",
        "--config",
        "tasks",
        "--set",
        `env.data_path=${bad}`,
        ...compatFlags(server.url),
        "--out",
        join(dir.path, "o"),
      ],
      { env: KEY_ENV },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:2: missing "input"`);
    expect(server.requests).toHaveLength(0);
    expect(existsSync(join(dir.path, "o", "best_skill.md"))).toBe(false);
  });
});

const UPSTREAM = ["searchqa", "docvqa", "livemathematicianbench", "officeqa", "spreadsheetbench", "alfworld"];
const SPLIT_DIR: Record<string, string> = {
  searchqa: "searchqa",
  docvqa: "docvqa",
  livemathematicianbench: "livemathematicianbench",
  officeqa: "officeqa",
  spreadsheetbench: "spreadsheetbench/split",
  alfworld: "alfworld",
};

describe("`config` and `train --dry-run` for every upstream and bundled benchmark config", () => {
  test("resolves, loads the fixture split, plans the calls and calls no model", async () => {
    await using server = await scriptedServer(() => "never called");
    const configs = [
      ...(existsSync(UPSTREAM_CONFIGS)
        ? UPSTREAM.map((b) => [b, join(UPSTREAM_CONFIGS, b, "default.yaml")] as const)
        : []),
      ...UPSTREAM.map((b) => [b, b] as const),
    ];
    if (!existsSync(UPSTREAM_CONFIGS)) console.warn(`skipping upstream configs: ${UPSTREAM_CONFIGS} is absent`);
    // upstream files keep their own model settings (Azure OpenAI, gpt-5.5): only the endpoint comes from the environment
    const azure = {
      AZURE_OPENAI_ENDPOINT: server.url.replace(/\/v1$/, ""),
      AZURE_OPENAI_API_KEY: "fake-azure-key-0000",
      AZURE_OPENAI_AUTH_MODE: "api_key",
    };
    const runs = await Promise.all(
      configs.map(async ([bench, config]) => {
        const upstream = config.endsWith(".yaml");
        const r = await runCli(
          [
            "train",
            "--config",
            config,
            "--dry-run",
            "--json",
            "--set",
            `env.split_dir=${join(FIXTURES, SPLIT_DIR[bench]!)}`,
            "--set",
            "train.train_size=0",
            "--set",
            `env.data_dirs=${join(FIXTURES, "officeqa", "docs")}`,
            ...(upstream ? [] : compatFlags(server.url)),
          ],
          { env: upstream ? azure : KEY_ENV },
        );
        const shown = await runCli(["config", "--config", config, "--json"], { env: KEY_ENV });
        expect({ config, code: shown.code }).toEqual({ config, code: 0 });
        expect(JSON.parse(shown.stdout).config.env.name).toBe(bench);
        return { bench, config, code: r.code, stderr: r.stderr, plan: r.code === 0 ? JSON.parse(r.stdout) : undefined };
      }),
    );
    for (const r of runs) {
      expect({ config: r.config, code: r.code, stderr: r.code ? r.stderr : "" }).toEqual({
        config: r.config,
        code: 0,
        stderr: "",
      });
      expect(r.plan).toMatchObject({ dry_run: true, benchmark: r.bench });
      expect(r.plan.predicted_calls.target.total).toBeGreaterThan(0);
      expect(r.plan.predicted_calls.optimizer.total).toBeGreaterThan(0);
      expect(r.plan).toHaveProperty("estimated_cost_usd");
    }
    expect(server.requests).toHaveLength(0);
  }, 60_000);
});
