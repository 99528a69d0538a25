import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { writeClaudeSession } from "./support/fake-home.ts";
import { ruleTasksFile } from "./support/rule-tasks.ts";

const isReflect = (req: FakeRequest) => req.lastUserText.includes("Propose at most");

async function night(root: string, optimizer: (req: FakeRequest) => string | FakeReply) {
  const server = await startFakeOpenAI({
    reply: (req) => (isReflect(req) ? optimizer(req) : "I ran npm test: green."),
  });
  const home = join(root, "home");
  const project = join(root, "proj");
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(home, ".skillopt-sleep", "config.json"),
    JSON.stringify({ azure_endpoint: server.url, model: "small-model" }),
  );
  const r = await runCli(
    ["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", ruleTasksFile(project, true)],
    {
      env: {
        HOME: home,
        SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
        SKILLOPT_CACHE_DIR: join(root, "cache"),
      },
    },
  );
  return { r, server, project };
}

describe("a Sleep night whose model cannot do the job stops and says so (fake OpenAI-compatible server)", () => {
  test("prose for both reflections (the ask and its firmer re-ask): exit 1, one line with role, model, endpoint and a sample; nothing staged", async () => {
    using tmp = tempDir();
    const { r, server, project } = await night(tmp.path, () => "You could maybe try running the tests more often.");
    await using _server = server;
    expect(r.code, r.stderr).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toEqual([
      `error: optimizer (openai_compatible, model small-model, endpoint ${new URL(server.url).host}) gave no usable sleep_reflect answer in 2 consecutive calls (no JSON array of edits in the reply); it answered: "You could maybe try running the tests more often."`,
    ]);
    expect(server.requests.filter(isReflect)).toHaveLength(2);
    const staging = join(project, ".skillopt-sleep", "staging");
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([]);
  });

  test("a reflection refused as longer than the context: exit 1 at once, with the sizes", async () => {
    using tmp = tempDir();
    const { r, server } = await night(tmp.path, () => ({
      fault: "status",
      status: 400,
      message: "This model's maximum context length is 2048 tokens. However, your messages resulted in 2300 tokens.",
      fields: { code: "context_length_exceeded" },
    }));
    await using _server = server;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("cannot hold the sleep_reflect prompt (2300 tokens against a context of 2048)");
    expect(server.requests.filter(isReflect)).toHaveLength(1);
  });

  test("an empty list of edits is an answer, not a failure: the night ends with its verdict", async () => {
    using tmp = tempDir();
    const { r, server } = await night(tmp.path, () => "[]");
    await using _server = server;
    expect(r.code, r.stderr).toBe(0);
  });
});

describe("the lessons' model reading (sessions harvested from a Claude Code home, fake OpenAI-compatible server)", () => {
  async function reviewHome(root: string, reply: (req: FakeRequest) => string) {
    const server = await startFakeOpenAI({ reply });
    const home = join(root, "home");
    const project = join(root, "work", "app");
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "CLAUDE.md"), "# App\n");
    writeFileSync(
      join(home, ".skillopt-sleep", "config.json"),
      JSON.stringify({ azure_endpoint: server.url, model: "small-model" }),
    );
    const said = [
      ["Add a retry to the uploader", "we use pnpm here, not npm. redo the install"],
      ["Make the export streaming", "pnpm please, the lockfile is pnpm-lock.yaml"],
    ];
    said.forEach((turns, i) => {
      writeClaudeSession(
        home,
        project,
        { id: `8e551000-bbbb-4ccc-8ddd-00000000000${i}`, turns: turns.map((user) => ({ user, assistant: "Done." })) },
        Date.parse(`2026-11-0${i + 1}T09:00:00Z`),
      );
    });
    const r = await runCli(
      ["sleep", "review", "--backend", "openai", "--source", "claude", "--lookback-hours", "0", "--project", project],
      {
        env: {
          HOME: home,
          SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
          SKILLOPT_CACHE_DIR: join(root, "cache"),
        },
        cwd: project,
      },
    );
    return { r, server, project };
  }
  const isRules = (req: FakeRequest) => req.lastUserText.includes("STANDING RULES");

  test("prose where a session's rules were asked: exit 1 after two such answers, naming the stage and a sample; nothing staged", async () => {
    using tmp = tempDir();
    const { r, server, project } = await reviewHome(tmp.path, () => "Sure! The user seems to like pnpm a lot.");
    await using _server = server;
    expect(r.code, r.stderr).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(
      "gave no usable sleep_rules answer in 2 consecutive calls (no JSON array of rules in the reply)",
    );
    expect(errors[0]).toContain('it answered: "Sure! The user seems to like pnpm a lot."');
    expect(server.requests.filter(isRules)).toHaveLength(2);
    const staging = join(project, ".skillopt-sleep", "staging");
    expect(existsSync(staging) ? readdirSync(staging) : []).toEqual([]);
  });

  test('"[]" (no standing rule in the session) is an answer: the night goes on past the reading', async () => {
    using tmp = tempDir();
    const { r, server } = await reviewHome(tmp.path, () => "[]");
    await using _server = server;
    expect(r.stderr).not.toContain("sleep_rules");
    expect(server.requests.filter(isRules)).toHaveLength(2);
    expect(server.requests.some((req) => !isRules(req))).toBe(true);
  });
});
