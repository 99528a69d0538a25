import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { SLEEP_SENTINEL } from "../../src/lib/index.ts";
import { runCli, spawnCli } from "../support/cli.ts";
import { storedAnswers } from "../support/call-cache.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { RULE, ruleTasksFile as tasksFile } from "./support/rule-tasks.ts";

/** `sleep <verb> --backend openai --json` over a reviewed rule-tasks file. */
const nightArgs = (project: string, verb = "review") => [
  "sleep",
  verb,
  "--backend",
  "openai",
  "--project",
  project,
  "--tasks-file",
  tasksFile(project, true),
  "--json",
];

function reviewJson(project: string, env: Record<string, string>) {
  return runCli(nightArgs(project), { env });
}

async function setup(root: string, extraConfig: Record<string, unknown> = {}, latencyMs = 0) {
  const server = await startFakeOpenAI({
    latencyMs,
    reply: (req) => {
      if (req.lastUserText.includes("Propose at most"))
        return JSON.stringify([{ op: "add", content: RULE, rationale: "the user corrected this" }]);
      return req.lastUserText.includes(RULE) ? "I ran bun test: green." : "I ran npm test: green.";
    },
  });
  const home = join(root, "home");
  const project = join(root, "proj");
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(home, ".skillopt-sleep", "config.json"),
    JSON.stringify({ azure_endpoint: server.url, api_key_env: "SLEEP_FAKE_KEY", model: "fake-model", ...extraConfig }),
  );
  const env = {
    HOME: home,
    SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
    SLEEP_FAKE_KEY: "sk-fake-not-a-secret-123456",
    SKILLOPT_CACHE_DIR: join(root, "cache"),
  };
  return { server, home, project, env };
}

describe("sleep review through the shared model layer (OpenAI-compatible fake server)", () => {
  test("replays, reflects and gates over real HTTP; every prompt carries the sentinel", async () => {
    using tmp = tempDir();
    const { server, project, env } = await setup(tmp.path);
    await using _server = server;
    const r = await reviewJson(project, env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ accepted: true, gate_action: "accept_new_best", tasks_reviewed: true });
    expect(out.edits.map((e: { content: string }) => e.content)).toEqual([RULE]);
    expect(out.budget.calls).toBeGreaterThan(0);
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.lastUserText.startsWith(SLEEP_SENTINEL))).toBe(true);
    expect(server.misses).toEqual([]);
    expect(readFileSync(join(out.staging_dir, "proposed_SKILL.md"), "utf8")).toContain(RULE);
  });

  test("a night's first line names the backend and the model each role resolved to", async () => {
    using tmp = tempDir();
    const { server, project, env } = await setup(tmp.path);
    await using _server = server;
    const r = await runCli(
      ["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", tasksFile(project, true)],
      { env },
    );
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n")[0]).toBe(
      "[sleep] backend optimizer=fake-model (openai_compatible) target=fake-model (openai_compatible)",
    );
    const mock = await runCli(
      ["sleep", "dry-run", "--backend", "mock", "--project", project, "--tasks-file", tasksFile(project, true)],
      { env },
    );
    expect(mock.stderr.split("\n")[0]).toBe("[sleep] backend mock (no model: rules only)");
  });

  test("an unreviewed tasks file is refused with a real backend (exit 2), before any call", async () => {
    using tmp = tempDir();
    const { server, project, env } = await setup(tmp.path);
    await using _server = server;
    const r = await runCli(
      ["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", tasksFile(project, false)],
      { env },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not reviewed");
    expect(server.requests).toHaveLength(0);
  });

  test("a failure while scoring the held-out test split stops the night; it is never reported as a score", async () => {
    using tmp = tempDir();
    const { server, project, env } = await setup(tmp.path);
    await using _server = server;
    const path = tasksFile(project, true);
    const doc = JSON.parse(readFileSync(path, "utf8"));
    doc.tasks.push({ ...doc.tasks[0], id: "task_heldout", intent: "Held-out: rename the cache module", split: "test" });
    writeFileSync(path, JSON.stringify(doc));
    server.match((req) => req.lastUserText.includes("Held-out: rename the cache module"), {
      fault: "status",
      status: 401,
      message: "invalid api key",
    });
    const r = await runCli(
      ["sleep", "review", "--backend", "openai", "--project", project, "--tasks-file", path, "--json"],
      { env },
    );
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("held-out test split: 0 task(s)");
    expect(r.stdout + r.stderr).toContain("401");
  });

  test("a call ceiling stops the night cleanly (exit 0) and is reported", async () => {
    using tmp = tempDir();
    const { server, project, env } = await setup(tmp.path, { max_calls_per_night: 2 });
    await using _server = server;
    const r = await reviewJson(project, env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.accepted).toBe(false);
    expect(out.budget.calls).toBe(2);
    expect(out.notes.join(" ")).toContain("call budget of 2 per night reached");
    expect(server.requests).toHaveLength(2);
  });

  test.each([
    ["killed (kill -9)", "SIGKILL"],
    ["stopped with Ctrl-C", "SIGINT"],
  ] as const)(
    "a night %s mid-run is forgotten by the next one: same number, no folder left, history of one",
    async (_, signal) => {
      using tmp = tempDir();
      const { server, project, env } = await setup(tmp.path);
      await using _server = server;
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The killed night's first call never gets its answer: the night has begun and is mid-replay.
      server.match(
        () => true,
        async () => {
          await held;
          return "too late";
        },
        { times: 1 },
      );
      const killed = spawnCli(nightArgs(project), { env });
      await server.waitFor(1);
      const staging = join(project, ".skillopt-sleep", "staging");
      const nights = () => readdirSync(staging).filter((n) => !n.startsWith("."));
      expect(nights()).toHaveLength(1);
      killed.kill(signal);
      if (signal === "SIGINT") {
        // Ctrl-C: one line saying what happens to the night, and the shell's code for an interrupt.
        expect(await killed.exited).toBe(130);
        expect(await new Response(killed.stderr).text()).toContain(
          "[sleep] interrupted: the next review settles this night (a proposal it had staged stays adoptable)",
        );
      } else await killed.exited;
      release();

      const r = await reviewJson(project, env);
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ night: 1, accepted: true });
      // The killed night's half-written folder is gone; the staged night's is the only one.
      expect(nights()).toEqual([basename(out.staging_dir)]);
      const status = await runCli(["sleep", "status", "--project", project, "--json"], { env });
      expect(status.code).toBe(0);
      const st = JSON.parse(status.stdout);
      expect(st.night).toBe(1);
      expect(st.history_tail.map((h: { night: number; status: string }) => [h.night, h.status])).toEqual([
        [1, "completed"],
      ]);
    },
  );

  test("a killed night's answered calls come from the cache when it runs again: none is paid twice", async () => {
    using tmp = tempDir();
    const ref = await setup(join(tmp.path, "ref"), {}, 20);
    await using _ref = ref.server;
    expect((await reviewJson(ref.project, ref.env)).code).toBe(0);
    const total = ref.server.requests.length;
    const s = await setup(join(tmp.path, "killed"), {}, 20);
    await using _s = s.server;
    const cache = join(s.env.SKILLOPT_SLEEP_STATE_DIR, "cache", "calls.sqlite");
    const stored = () => storedAnswers(cache);
    const killed = spawnCli(nightArgs(s.project), { env: s.env });
    let exited = false;
    void killed.exited.then(() => {
      exited = true;
    });
    // Killed once some answers are recorded, while others are in flight.
    while (!exited && stored() < Math.min(4, total - 1)) await Bun.sleep(2);
    const killedMidNight = !exited;
    killed.kill("SIGKILL");
    await killed.exited;
    const kept = stored();
    const before = s.server.requests.length;
    const r = await reviewJson(s.project, s.env);
    expect(r.code).toBe(0);
    // (A night that outran the polling finished before the kill: the review again is night 2, asking nothing.)
    expect(JSON.parse(r.stdout).night).toBe(killedMidNight ? 1 : 2);
    // Only what the killed night had not recorded is asked again (an answer in flight at the kill is lost).
    expect(s.server.requests.length - before).toBe(total - kept);
    expect(kept).toBeGreaterThan(0);
  });

  test("cursor, pi and opencode run their CLIs headless (fake CLIs in their real output formats), isolated", async () => {
    using tmp = tempDir();
    const { project, env } = await setup(tmp.path);
    const log = join(tmp.path, "calls.log");
    // Each fake answers in its CLI's real JSON shape and records where and with what env it ran.
    const reply = `const prompt = process.argv.at(-1) ?? "";
const answer = prompt.includes("Propose at most") ? JSON.stringify([{ op: "add", content: ${JSON.stringify(RULE)}, rationale: "corrected" }]) : prompt.includes(${JSON.stringify(RULE)}) ? "I ran bun test: green." : "I ran npm test: green.";
require("node:fs").appendFileSync(${JSON.stringify(log)}, JSON.stringify({ bin: process.argv[1].split("/").pop(), args: process.argv.slice(2, -1), cwd: process.cwd(), unrelated: process.env.UNRELATED_SECRET ?? null }) + "\\n");`;
    const bins: Record<string, string> = {
      "cursor-agent": `${reply}
console.log(JSON.stringify({ type: "result", subtype: "success", is_error: false, duration_ms: 5, result: answer, session_id: "c-1" }));`,
      pi: `${reply}
for (const e of [{ type: "agent_start" }, { type: "message_end", message: { role: "user", content: [{ type: "text", text: "q" }] } }, { type: "message_end", message: { role: "assistant", content: [{ type: "text", text: answer }], stopReason: "stop" } }, { type: "agent_end" }]) console.log(JSON.stringify(e));`,
      opencode: `${reply}
for (const e of [{ type: "step_start", timestamp: 1, sessionID: "ses_1", part: { type: "step-start" } }, { type: "text", timestamp: 2, sessionID: "ses_1", part: { type: "text", text: answer } }, { type: "step_finish", timestamp: 3, sessionID: "ses_1", part: { type: "step-finish", reason: "stop" } }]) console.log(JSON.stringify(e));`,
    };
    const { chmodSync } = await import("node:fs");
    for (const [name, body] of Object.entries(bins)) {
      writeFileSync(join(tmp.path, name), `#!/usr/bin/env bun\n${body}\n`);
      chmodSync(join(tmp.path, name), 0o755);
    }
    for (const [backend, flag, bin] of [
      ["cursor", "--cursor-path", "cursor-agent"],
      ["pi", "--pi-path", "pi"],
      ["opencode", "--opencode-path", "opencode"],
    ] as const) {
      const r = await runCli(
        [
          "sleep",
          "dry-run",
          "--backend",
          backend,
          flag,
          join(tmp.path, bin),
          "--project",
          project,
          "--tasks-file",
          tasksFile(project, true),
          "--json",
        ],
        { env: { ...env, UNRELATED_SECRET: "do-not-pass-me-123" } },
      );
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      const out = JSON.parse(r.stdout);
      expect(out).toMatchObject({ accepted: true });
      expect(out.edits.map((e: { content: string }) => e.content)).toEqual([RULE]);
      const calls = readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { bin: string; args: string[]; cwd: string; unrelated: string | null })
        .filter((c) => c.bin === bin);
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        expect(c.cwd).not.toBe(project);
        expect(c.unrelated).toBeNull();
      }
      const args = calls[0]!.args.join(" ");
      if (backend === "cursor") expect(args).toContain("-p --output-format json");
      if (backend === "pi") expect(args).toContain("-p --mode json --no-session --no-tools");
      if (backend === "opencode") expect(args).toContain("run --format json");
    }
  });
});

describe("LLM mining over harvested sessions", () => {
  test("the miner turns sessions into checkable tasks, then the night gates and stages as usual", async () => {
    using tmp = tempDir();
    const { buildFakeHome, changedFiles, hashTree } = await import("./support/fake-home.ts");
    const { home, project } = buildFakeHome(tmp.path);
    const server = await startFakeOpenAI({
      reply: (req) => {
        const text = req.lastUserText;
        if (text.includes("extract 0 to 3 recurring")) {
          const first = /User prompts:\n {2}- (.*)/.exec(text)?.[1] ?? "a task";
          if (!/test|regression|refactor|upgrade|port|fix|coverage|rename/i.test(first)) return "[]";
          return JSON.stringify([
            {
              intent: `${first} (and run the suite)`,
              checks: [
                { op: "contains", arg: "bun test" },
                { op: "not_contains", arg: "npm test" },
              ],
              rubric: "",
              satisfied: false,
            },
          ]);
        }
        if (text.includes("Propose at most"))
          return JSON.stringify([{ op: "add", content: RULE, rationale: "corrected in many sessions" }]);
        // The lessons' reading of each session's standing rules (prose there would stop the night).
        if (text.includes("STANDING RULES")) return "[]";
        return text.includes(RULE) ? "I ran bun test: green." : "I ran npm test: green.";
      },
    });
    await using _server = server;
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    writeFileSync(
      join(home, ".skillopt-sleep", "config.json"),
      JSON.stringify({ azure_endpoint: server.url, api_key_env: "SLEEP_FAKE_KEY", model: "fake-model" }),
    );
    const env = {
      HOME: home,
      SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
      SLEEP_FAKE_KEY: "sk-fake-not-a-secret-123456",
      XDG_CACHE_HOME: join(home, ".cache"),
      SKILLOPT_CACHE_DIR: join(home, ".cache", "skillopt"),
    };
    // ~/.cache/bun is Bun's own transpiler cache when the CLI runs from source (a compiled binary has none).
    const skip = [join(project, ".skillopt-sleep"), join(home, ".skillopt-sleep"), join(home, ".cache", "bun")];
    const before = hashTree([tmp.path], skip);
    const r = await runCli(["sleep", "review", "--backend", "openai", "--project", project, "--json"], {
      env,
      cwd: project,
    });
    // A provider night writes nothing outside staging and the state dir (its call cache included).
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ accepted: true, gate_action: "accept_new_best" });
    expect(out.n_tasks).toBeGreaterThanOrEqual(9);
    // With a model the night also reads each session's standing rules for lessons (issue 29): its own ledger stage.
    expect(out.budget.stages.map((s: { stage: string }) => s.stage).sort()).toEqual([
      "attempt",
      "mine",
      "reflect",
      "rules",
    ]);
    const report = JSON.parse(readFileSync(join(out.staging_dir, "report.json"), "utf8"));
    expect(report.n_replayed).toBe(out.n_tasks);
    expect(server.misses).toEqual([]);
  });
});

describe("prompt overrides", () => {
  test("~/.skillopt-sleep/prompts.json replaces a template; the sentinel stays first", async () => {
    using tmp = tempDir();
    const { server, home, project, env } = await setup(tmp.path);
    await using _server = server;
    writeFileSync(
      join(home, ".skillopt-sleep", "prompts.json"),
      JSON.stringify({ attempt: "CUSTOM ATTEMPT\nSkill: __SKILL__\nDo: __INTENT__", bogus: "ignored" }),
    );
    const r = await runCli(nightArgs(project, "dry-run"), { env });
    expect(r.code).toBe(0);
    const attempts = server.requests.filter((q) => q.lastUserText.includes("CUSTOM ATTEMPT"));
    expect(attempts.length).toBeGreaterThan(0);
    expect(
      attempts.every(
        (q) =>
          q.lastUserText.startsWith(`${SLEEP_SENTINEL}\n\nCUSTOM ATTEMPT\nSkill: `) &&
          q.lastUserText.includes("Do: Add a unit test for slugify") === q.lastUserText.includes("slugify"),
      ),
    ).toBe(true);
  });
});
