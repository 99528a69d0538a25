import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
// As processes (runCliProcess): a run on the real model can take minutes, and at its timeout the
// process is killed; a run inside the test process could not be stopped.
import { runCliProcess as runCli } from "../support/cli.ts";
import { realLlmMissing, startRealLlm, TINY_QUICKSTART } from "../support/real-llm.ts";
import { tempDir } from "../support/tmp.ts";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";
import { writeClaudeSession } from "../sleep/support/fake-home.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/*
 * The product against a real (small, bad) model: how a run ends whatever the model says, never
 * what it says. The server answers one request at a time, about 0.1-3 s each on 2 cores, so each
 * run is kept to a handful of items; the timeouts below are for that slowness on a busy machine,
 * not for anything the tests wait on by the clock.
 */
const missing = realLlmMissing();
if (missing) console.warn(`real-model tests skipped: ${missing}`);

// Two steps of two items and two selection items: ~15 calls against a one-at-a-time server.
const RUN_TIMEOUT_MS = 240_000;

const MODEL = "tiny-local-gpt";
const env = (url: string) => ({ OPENAI_COMPATIBLE_BASE_URL: url, OPENAI_COMPATIBLE_MODEL: MODEL });

function runMeta(out: string, key: string): string | undefined {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    return (db.query("SELECT value FROM run_meta WHERE key = ?").get(key) as { value: string } | null)?.value;
  } finally {
    db.close();
  }
}

/** A run that ended: failed with one line naming the role and model, or finished with real scores. */
function expectEndedAsAUserShouldSee(r: { code: number; stdout: string; stderr: string }, out: string) {
  const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
  if (r.code === 0) {
    expect(errors).toEqual([]);
    expect(r.stdout).toContain("Training finished");
    expect(runMeta(out, "status")).toBe("finished");
    // Real scores: numbers measured on the selection split, every step of the plan done.
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    expect(summary.status).toBe("finished");
    expect(summary.steps).toBe(summary.total_steps);
    expect(typeof summary.baseline.selection).toBe("number");
    expect(typeof summary.best.selection).toBe("number");
    return "finished";
  }
  expect(r.code, r.stderr).toBe(1);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(
    new RegExp(`^error: (optimizer|target) \\(openai_compatible, model ${MODEL}, endpoint 127\\.0\\.0\\.1:\\d+\\) `),
  );
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).not.toContain("Training finished");
  expect(runMeta(out, "status")).toBe("failed");
  expect(runMeta(out, "reason")).toBe(errors[0]!.slice("error: ".length));
  return "failed";
}

describe.skipIf(missing !== undefined)("the real model of ../shared/real-llm (spawned server, CLI spawned)", () => {
  test(
    "the quickstart for one epoch on the real model ends failed with the reason, or finished with real scores; --resume with the sim optimizer finishes",
    async () => {
      await using llm = await startRealLlm({ maxSeconds: 600 });
      using dir = tempDir();
      const out = join(dir.path, "run");
      const args = ["train", ...TINY_QUICKSTART, "--set", "model.backend=openai_compatible", "--out", out];
      const r = await runCli(args, { env: env(llm.url), timeoutMs: RUN_TIMEOUT_MS });
      const ended = expectEndedAsAUserShouldSee(r, out);
      if (ended === "failed") {
        expect(r.stderr).toContain("hint: ");
        const resumed = await runCli(["train", "--resume", out, "--set", "model.optimizer_backend=sim"], {
          env: env(llm.url),
          timeoutMs: RUN_TIMEOUT_MS,
        });
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.stdout).toContain("Training finished");
        expect(runMeta(out, "status")).toBe("finished");
        const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
        expect(summary.steps).toBe(summary.total_steps);
      }
    },
    2 * RUN_TIMEOUT_MS,
  );

  test(
    "with REAL_LLM_OVERFLOW=error (HTTP 400 context_length_exceeded), the run ends with exit 1 and names the prompt size against the context",
    async () => {
      await using llm = await startRealLlm({ maxSeconds: 600, env: { REAL_LLM_OVERFLOW: "error" } });
      using dir = tempDir();
      const out = join(dir.path, "run");
      const args = ["train", ...TINY_QUICKSTART, "--set", "model.backend=openai_compatible", "--out", out];
      const r = await runCli(args, { env: env(llm.url), timeoutMs: RUN_TIMEOUT_MS });
      expect(expectEndedAsAUserShouldSee(r, out)).toBe("failed");
      // Whichever role met the limit first, the line gives the prompt's size against the model's 256 tokens.
      expect(r.stderr).toMatch(/\(\d+ tokens against a context of 256\)|maximum context length is 256 tokens/);
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "sleep review --backend openai against the real model ends with a verdict or a one-line reason; nothing is adopted",
    async () => {
      await using llm = await startRealLlm({ maxSeconds: 600 });
      using tmp = tempDir();
      const home = join(tmp.path, "home");
      const project = join(tmp.path, "proj");
      mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
      mkdirSync(project, { recursive: true });
      writeFileSync(
        join(home, ".skillopt-sleep", "config.json"),
        JSON.stringify({ azure_endpoint: llm.url, model: MODEL }),
      );
      // Two rule-judged tasks (one train, one held out): replays without a judge call.
      const tasks = ["Add a unit test for slugify", "Port the date parser"].map((intent, i) => ({
        id: `task_real${i}`,
        project,
        intent,
        reference_kind: "rule",
        judge: { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] },
        outcome: "fail",
        split: i ? "val" : "train",
      }));
      const file = join(project, "tasks.json");
      writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, project, reviewed: true, tasks }));
      const r = await runCli(["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", file], {
        env: {
          HOME: home,
          SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
          SKILLOPT_CACHE_DIR: join(tmp.path, "cache"),
        },
        timeoutMs: RUN_TIMEOUT_MS,
      });
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
      if (r.code === 0) {
        expect(errors).toEqual([]);
        expect(r.stdout).toMatch(/held-out \d\.\d{3} -> \d\.\d{3} => (accept|reject)/);
      } else {
        expect(r.code, r.stderr).toBe(1);
        expect(errors).toHaveLength(1);
        expect(errors[0]).toMatch(
          new RegExp(
            `^error: (optimizer|target) \\(openai_compatible, model ${MODEL}, endpoint 127\\.0\\.0\\.1:\\d+\\) `,
          ),
        );
      }
      // A review stages at most; the project's own files are never changed.
      expect(existsSync(join(project, "AGENTS.md"))).toBe(false);
      expect(existsSync(join(project, "CLAUDE.md"))).toBe(false);
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "sleep review over harvested Claude Code sessions (the lessons' model reading) ends with a verdict or a one-line reason; CLAUDE.md is untouched",
    async () => {
      await using llm = await startRealLlm({ maxSeconds: 600 });
      using tmp = tempDir();
      const home = join(tmp.path, "home");
      const project = join(tmp.path, "work", "app");
      mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
      mkdirSync(project, { recursive: true });
      writeFileSync(join(project, "CLAUDE.md"), "# App\n");
      writeFileSync(
        join(home, ".skillopt-sleep", "config.json"),
        JSON.stringify({ azure_endpoint: llm.url, model: MODEL }),
      );
      const said = [
        ["Add a retry to the uploader", "we use pnpm here, not npm. redo the install"],
        ["Make the export streaming", "pnpm please, the lockfile is pnpm-lock.yaml"],
      ];
      said.forEach((turns, i) => {
        writeClaudeSession(
          home,
          project,
          { id: `8e551000-cccc-4ddd-8eee-00000000000${i}`, turns: turns.map((user) => ({ user, assistant: "Done." })) },
          Date.parse(`2026-11-0${i + 1}T09:00:00Z`),
        );
      });
      const r = await runCli(
        ["sleep", "review", "--backend", "openai", "--source", "claude", "--lookback-hours", "0", "--project", project],
        {
          env: {
            HOME: home,
            SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
            SKILLOPT_CACHE_DIR: join(tmp.path, "cache"),
          },
          cwd: project,
          timeoutMs: RUN_TIMEOUT_MS,
        },
      );
      const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
      if (r.code === 0) expect(errors).toEqual([]);
      else {
        expect(r.code, r.stderr).toBe(1);
        expect(errors).toHaveLength(1);
        // Whatever stage met the model's answers first, the line names the role, the model and the endpoint.
        expect(errors[0]).toMatch(
          new RegExp(
            `^error: (optimizer|target) \\(openai_compatible, model ${MODEL}, endpoint 127\\.0\\.0\\.1:\\d+\\) `,
          ),
        );
      }
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(readFileSync(join(project, "CLAUDE.md"), "utf8")).toBe("# App\n");
    },
    RUN_TIMEOUT_MS,
  );
});
