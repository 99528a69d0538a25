import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { RULE, ruleTasksFile } from "./support/rule-tasks.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/**
 * Rule 4 for Sleep: a replay that got no answer (a 5xx after the model layer's retries, a
 * connection hung up, a judge verdict that never parses) is an error with its reason, never a
 * score. The phase it belongs to decides nothing, the night ends failed (exit 1, one line) and
 * stages nothing; `sleep status` counts the failed night. All through the CLI, over real HTTP.
 */

const isJudge = (req: FakeRequest) => req.lastUserText.includes("Grade a response against a rubric");
const isReflect = (req: FakeRequest) => req.lastUserText.includes("Propose at most");

async function setup(root: string, special: (req: FakeRequest) => string | FakeReply | undefined) {
  const server = await startFakeOpenAI({
    reply: (req) => {
      const s = special(req);
      if (s !== undefined) return s;
      if (isReflect(req)) return JSON.stringify([{ op: "add", content: RULE, rationale: "corrected" }]);
      if (isJudge(req)) return JSON.stringify({ score: 0.9, reason: "meets the rubric" });
      return req.lastUserText.includes(RULE) ? "I ran bun test: green." : "I ran npm test: green.";
    },
  });
  const home = join(root, "home");
  const project = join(root, "proj");
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(home, ".skillopt-sleep", "config.json"),
    JSON.stringify({ azure_endpoint: server.url, model: "fake-model", workers: 1 }),
  );
  const env = {
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
    SKILLOPT_CACHE_DIR: join(root, "cache"),
  };
  const review = (tasks: string, extra: string[] = []) =>
    runCli(["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", tasks, ...extra], { env });
  const status = (json: boolean) =>
    runCli(["sleep", "status", "--project", project, ...(json ? ["--json"] : [])], { env });
  const staged = () => {
    const dir = join(project, ".skillopt-sleep", "staging");
    return existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith(".")) : [];
  };
  return { server, project, review, status, staged };
}

/** A role as the night's errors name it: its backend, model and endpoint. */
const role = (r: string, url: string) => `${r} (openai_compatible, model fake-model, endpoint ${new URL(url).host})`;

/** One error line, no stack. */
function errorLines(stderr: string): string[] {
  expect(stderr).not.toMatch(/^\s+at /m);
  return stderr.split("\n").filter((l) => l.startsWith("error: "));
}

describe("a Sleep replay that got no answer is an error, never a score", () => {
  test("a 5xx after retries on one held-out replay: the gate is not decided, exit 1 with the reason, nothing staged, status counts the failure", async () => {
    using tmp = tempDir();
    const s = await setup(tmp.path, (req) =>
      req.lastUserText.includes("Find the login regression")
        ? { fault: "status", status: 503, message: "upstream overloaded", retryAfterMs: 0 }
        : undefined,
    );
    await using _server = s.server;
    const r = await s.review(ruleTasksFile(s.project, true));
    expect(r.code, r.stderr).toBe(1);
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith(
      `error: ${role("target", s.server.url)} gave no answer for 1 of 3 replay(s) of the baseline_val phase, so nothing was decided on them; last error: `,
    );
    expect(errors[0]).toContain("503");
    // Retried by the model layer before it counted as no answer; no reflection was asked on a missing answer.
    expect(
      s.server.requests.filter((q) => q.lastUserText.includes("Find the login regression")).length,
    ).toBeGreaterThan(1);
    expect(s.server.requests.filter(isReflect)).toHaveLength(0);
    expect(s.staged()).toEqual([]);

    const st = await s.status(true);
    expect(st.code).toBe(0);
    const j = JSON.parse(st.stdout);
    expect(j).toMatchObject({ night: 0, failed_nights: 1 });
    expect(j.history_tail.map((h: { status: string }) => h.status)).toEqual(["failed"]);
    const text = await s.status(false);
    expect(text.stdout.split("\n").slice(0, 2)).toEqual([
      "nights so far: 0",
      "failed nights: 1 (the latest: night 1); nothing was staged from them (`skillopt sleep review` prints why)",
    ]);
    // --debug shows where it stopped (a stack); without it, the one line above.
    const dbg = await s.review(ruleTasksFile(s.project, true), ["--debug"]);
    expect(dbg.code).toBe(1);
    expect(dbg.stderr).toMatch(/^\s+at /m);
  });

  test("the server hangs up mid-answer on a train replay: exit 1 naming the phase, no reflection on it", async () => {
    using tmp = tempDir();
    const s = await setup(tmp.path, (req) =>
      req.lastUserText.includes("Refactor the config loader") ? { fault: "reset" } : undefined,
    );
    await using _server = s.server;
    const r = await s.review(ruleTasksFile(s.project, true));
    expect(r.code, r.stderr).toBe(1);
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith(
      `error: ${role("target", s.server.url)} gave no answer for 1 of 3 replay(s) of the train phase`,
    );
    expect(s.server.requests.filter(isReflect)).toHaveLength(0);
    expect(s.staged()).toEqual([]);
    expect(JSON.parse((await s.status(true)).stdout).failed_nights).toBe(1);
    // Slow on purpose: a hang-up carries no Retry-After, so the layer's 4 retries back off with full jitter (at most 7.5 s in all).
  }, 30_000);

  test("the first judge verdict that does not parse is no verdict: exit 1 with the judge's reason, not a 0", async () => {
    using tmp = tempDir();
    const s = await setup(tmp.path, (req) => (isJudge(req) ? "Looks fine to me, mostly." : undefined));
    await using _server = s.server;
    const path = ruleTasksFile(s.project, true);
    const doc = JSON.parse(readFileSync(path, "utf8"));
    // One held-out task graded by the judge against a rubric; the rest stay rule-checked.
    doc.tasks[1] = { ...doc.tasks[1], reference_kind: "rubric", reference: "Runs bun test, never npm test", judge: {} };
    writeFileSync(path, JSON.stringify(doc));
    const r = await s.review(path);
    expect(r.code, r.stderr).toBe(1);
    const errors = errorLines(r.stderr);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toStartWith(
      `error: ${role("optimizer", s.server.url)} gave no judge verdict for 1 of 3 replay(s) of the baseline_val phase, so nothing was decided on them; \
last error: judge verdict did not parse`,
    );
    // One verdict asked (and re-asked by the layer): no second judge call was needed to stop.
    expect(s.server.requests.filter(isJudge)).toHaveLength(1);
    expect(errors[0]).not.toContain("consecutive");
    expect(s.staged()).toEqual([]);
  });

  test("the same night with every call answered stages its proposal (the fake is not what fails)", async () => {
    using tmp = tempDir();
    const s = await setup(tmp.path, () => undefined);
    await using _server = s.server;
    const r = await s.review(ruleTasksFile(s.project, true));
    expect(r.code, r.stderr).toBe(0);
    expect(s.staged()).toHaveLength(1);
    expect(JSON.parse((await s.status(true)).stdout)).toMatchObject({ night: 1, failed_nights: 0 });
  });
});
