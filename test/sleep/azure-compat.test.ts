// Issue 11 §6: Sleep's azure_openai backend in OpenAI-compatible mode sends the reference's request
// shape: max_tokens 8192 (SKILLOPT_SLEEP_COMPAT_MAX_TOKENS), plus SKILLOPT_SLEEP_CHAT_EXTRA_BODY merged
// into the body. Real CLI process, real HTTP against the fake OpenAI server.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

const RULE = "Use `bun test` instead of `npm test`.";

function tasksFile(dir: string): string {
  const intents = [
    "Add a unit test for slugify",
    "Find the login regression",
    "Refactor the config loader",
    "Write retry policy tests",
  ];
  const tasks = intents.map((intent, i) => ({
    id: `task_fix${i}`,
    project: dir,
    intent,
    reference_kind: "rule",
    judge: { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] },
    tags: ["correction"],
    outcome: "fail",
    split: i % 2 ? "val" : "train",
  }));
  const path = join(dir, "tasks.json");
  writeFileSync(path, JSON.stringify({ format: TASKS_FORMAT, project: dir, reviewed: true, tasks }, null, 2));
  return path;
}

async function night(extraEnv: Record<string, string>) {
  const server = await startFakeOpenAI({
    reply: (req) =>
      req.lastUserText.includes("Propose at most")
        ? JSON.stringify([{ op: "add", content: RULE, rationale: "corrected" }])
        : "I ran bun test: green.",
  });
  const dir = tempDir();
  const home = join(dir.path, "home");
  const project = join(dir.path, "proj");
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(home, ".skillopt-sleep", "config.json"),
    JSON.stringify({ azure_endpoint: server.url, model: "deepseek-v4-pro" }),
  );
  const env = {
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
    SKILLOPT_CACHE_DIR: join(dir.path, "cache"),
    AZURE_OPENAI_AUTH_MODE: "openai_compatible",
    AZURE_OPENAI_API_KEY: "sk-compat-test-key-000111",
    ...extraEnv,
  };
  const r = await runCli(
    [
      "sleep",
      "review",
      "--backend",
      "azure_openai",
      "--project",
      project,
      "--tasks-file",
      tasksFile(project),
      "--json",
    ],
    { env },
  );
  return {
    r,
    server,
    [Symbol.asyncDispose]: async () => {
      await server.close();
      dir[Symbol.dispose]();
    },
  };
}

describe("sleep azure_openai in OpenAI-compatible mode", () => {
  test("every request asks for max_tokens 8192 (never max_completion_tokens) and no extra fields by default", async () => {
    await using n = await night({});
    expect(n.r.code).toBe(0);
    expect(n.server.requests.length).toBeGreaterThan(0);
    for (const q of n.server.requests) {
      expect(q.body.max_tokens).toBe(8192);
      expect(q.body.max_completion_tokens).toBeUndefined();
      expect(q.body.thinking).toBeUndefined();
      expect(q.headers.authorization).toBe("Bearer sk-compat-test-key-000111");
      expect(q.model).toBe("deepseek-v4-pro");
    }
  }, 60_000);

  test("SKILLOPT_SLEEP_COMPAT_MAX_TOKENS and SKILLOPT_SLEEP_CHAT_EXTRA_BODY shape every request", async () => {
    await using n = await night({
      SKILLOPT_SLEEP_COMPAT_MAX_TOKENS: "4096",
      SKILLOPT_SLEEP_CHAT_EXTRA_BODY: JSON.stringify({ thinking: { type: "enabled" } }),
    });
    expect(n.r.code).toBe(0);
    expect(n.server.requests.length).toBeGreaterThan(0);
    for (const q of n.server.requests) {
      expect(q.body.max_tokens).toBe(4096);
      expect(q.body.thinking).toEqual({ type: "enabled" });
    }
  }, 60_000);

  test("an invalid extra body or token budget is a config error naming the variable; nothing is sent", async () => {
    for (const [env, want] of [
      [{ SKILLOPT_SLEEP_CHAT_EXTRA_BODY: "{not json" }, "SKILLOPT_SLEEP_CHAT_EXTRA_BODY: not valid JSON"],
      [{ SKILLOPT_SLEEP_CHAT_EXTRA_BODY: "[1, 2]" }, "SKILLOPT_SLEEP_CHAT_EXTRA_BODY: expected a JSON object"],
      [
        { SKILLOPT_SLEEP_COMPAT_MAX_TOKENS: "lots" },
        "SKILLOPT_SLEEP_COMPAT_MAX_TOKENS: expected a positive whole number",
      ],
    ] as const) {
      await using n = await night(env);
      expect(n.r.code).toBe(2);
      expect(n.r.stderr).toContain(want);
      expect(n.server.requests.length).toBe(0);
    }
  }, 60_000);
});
