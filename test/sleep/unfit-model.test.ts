import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
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
