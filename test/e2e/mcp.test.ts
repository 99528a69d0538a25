import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { buildFakeHome, changedFiles, hashTree } from "../sleep/support/fake-home.ts";
import { childrenOf, connectMcp, dataOf, errorOf, KEY_ENV, searchqaOn, until } from "../mcp/support.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const TOOLS = [
  "eval",
  "report",
  "run_status",
  "runs",
  "sleep_adopt",
  "sleep_diff",
  "sleep_reject",
  "sleep_review",
  "sleep_status",
  "train",
];

describe("skillopt mcp, driven by the official MCP client", () => {
  test("initializes from an empty directory, lists every tool with an input schema, and refuses bad arguments in one line", async () => {
    using dir = tempDir("mcp-empty-");
    await using mcp = await connectMcp(dir.path);
    const { client } = mcp;
    expect(client.getServerVersion()?.name).toBe("skillopt");
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    expect(client.getInstructions()).toContain("sleep_adopt");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(TOOLS);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.description?.length).toBeGreaterThan(20);
    }
    expect(tools.find((t) => t.name === "eval")?.inputSchema.required).toEqual(["config", "skill"]);
    await client.ping();

    expect(dataOf(await client.callTool({ name: "runs", arguments: {} }))).toEqual({ runs: [] });

    // Arguments of the wrong shape are JSON-RPC invalid params, named in one line.
    const invalid = async (name: string, args: Record<string, unknown>) => {
      const err = await client.callTool({ name, arguments: args }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32602);
      return (err as McpError).message;
    };
    expect(await invalid("eval", { config: "quickstart" })).toContain("eval: argument skill is required");
    expect(await invalid("eval", { config: 3, skill: "x.md" })).toContain("eval: argument config must be a string");
    expect(await invalid("train", { config: "quickstart", steps: 3 })).toContain("train: unknown argument steps");
    expect(await invalid("sleep_diff", { night: "--all" })).toContain('argument night must not start with "-"');
    expect(await invalid("no_such_tool", {})).toContain("unknown tool: no_such_tool");

    // What the CLI refuses comes back as a tool error carrying the CLI's own line.
    const missing = await client.callTool({ name: "eval", arguments: { config: "quickstart", skill: "missing.md" } });
    expect(errorOf(missing)).toBe(`--skill ${join(dir.path, "missing.md")}: file not found`);
    // The CLI's typed facts reach the client beside the message.
    expect(missing.structuredContent).toMatchObject({
      code: "data",
      exit_code: 2,
      facts: { path: join(dir.path, "missing.md"), input: "--skill", problem: "not_found" },
    });
    expect(
      errorOf(await client.callTool({ name: "eval", arguments: { config: "no-such-config", skill: "missing.md" } })),
    ).toContain("missing.md");
    expect(errorOf(await client.callTool({ name: "run_status", arguments: { run: "nope" } }))).toContain(
      "nope: no such run folder",
    );
    expect(
      errorOf(
        await client.callTool({
          name: "sleep_diff",
          arguments: { project: dir.path, state_dir: join(dir.path, "state") },
        }),
      ),
    ).toContain("[sleep] no_staging: no staged night");
    // A training run that fails at once: train still returns its folder, run_status then carries the CLI's line.
    const failed = dataOf(await client.callTool({ name: "train", arguments: { config: "no-such-config" } }));
    let st: Record<string, unknown> = {};
    await until(async () => {
      st = dataOf(await client.callTool({ name: "run_status", arguments: { run: String(failed.out) } }));
      return (st.process as { alive: boolean }).alive === false;
    });
    expect(st).toMatchObject({
      status: "failed",
      process: { exit_code: 2, error: "--config no-such-config: no such file or bundled config" },
    });
    // Nothing was written in the empty directory but what the CLI would write (a refused eval writes nothing).
    expect(hashTree([dir.path]).size).toBe(0);
  });

  // Own timeout: a whole training run, an eval, a report and a Sleep night, each a child process of the MCP server (about 2 s idle).
  test("train → run_status → eval → report, then Sleep review → status → diff → adopt (confirmed) → reject, against the simulator and a fake home", async () => {
    using tmp = tempDir("mcp-flow-");
    const { home, project } = buildFakeHome(tmp.path);
    const stateDir = join(home, ".skillopt-sleep");
    await using mcp = await connectMcp(project, { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir });
    const { client } = mcp;

    const started = dataOf(await client.callTool({ name: "train", arguments: { config: "quickstart" } }));
    const out = String(started.out);
    expect(started.status).toBe("started");
    expect(out.startsWith(join(project, "outputs"))).toBe(true);
    let status: Record<string, unknown> = {};
    await until(async () => {
      status = dataOf(await client.callTool({ name: "run_status", arguments: { run: String(started.run_id) } }));
      return (status.process as { alive: boolean }).alive === false;
    });
    expect(status).toMatchObject({
      status: "finished",
      dir: out,
      process: { alive: false, exit_code: 0, error: null },
    });
    expect(status.steps).toBe(status.total_steps);
    expect(dataOf(await client.callTool({ name: "runs", arguments: {} })).runs).toMatchObject([
      { dir: out, status: "finished", kind: "train" },
    ]);

    const skill = join(out, "best_skill.md");
    const evalOut = join(project, "outputs", "eval-best");
    const summary = dataOf(
      await client.callTool({ name: "eval", arguments: { config: "quickstart", skill, split: "test", out: evalOut } }),
    );
    expect(summary).toMatchObject({ status: "finished", split: "test", benchmark: "conventions", errored: 0, skill });
    expect(summary.hard).toBeGreaterThan(0);
    expect(JSON.parse(readFileSync(join(evalOut, "eval_summary.json"), "utf8")).hard).toBe(summary.hard as number);
    expect(dataOf(await client.callTool({ name: "report", arguments: { run: out } }))).toEqual({
      report: join(out, "report.html"),
    });
    // The pull-request check through the same tool: the trained skill against the one it started from.
    const initial = join(project, "initial.md");
    writeFileSync(initial, readFileSync(join(out, "skills", "skill_v0000.md")));
    const check = dataOf(
      await client.callTool({
        name: "eval",
        arguments: {
          config: "quickstart",
          skill,
          baseline: initial,
          baseline_label: "main",
          split: "test",
          out: join(project, "outputs", "check"),
        },
      }),
    );
    expect(check).toMatchObject({
      baseline_path: initial,
      baseline_label: "main",
      candidate_path: skill,
      verdict: "improved",
      failed: false,
    });

    const skip = [join(project, ".skillopt-sleep"), stateDir, join(project, "outputs")];
    const before = hashTree([tmp.path], skip);
    const progress: string[] = [];
    const review = dataOf(
      await client.callTool(
        { name: "sleep_review", arguments: { project, backend: "mock", source: "all" } },
        undefined,
        { onprogress: (p) => progress.push(String(p.message)) },
      ),
    );
    // The review's phases arrive as progress notifications while it runs.
    expect(progress.length).toBeGreaterThan(2);
    expect(progress.every((m) => m.startsWith("[sleep] "))).toBe(true);
    expect(review).toMatchObject({ accepted: true, gate_action: "accept_new_best", n_accepted_edits: 1 });
    const night = String(review.staging_dir);
    expect(dataOf(await client.callTool({ name: "sleep_status", arguments: { project } }))).toMatchObject({
      night: 1,
      project,
      latest_staging: night,
      has_managed_proposal: true,
    });
    const diff = dataOf(await client.callTool({ name: "sleep_diff", arguments: { project } }));
    const files = diff.files as Array<{ live_path: string; patch: string }>;
    const skillPath = join(home, ".claude", "skills", "skillopt-sleep-learned", "SKILL.md");
    expect(files.map((f) => f.live_path)).toEqual([skillPath]);
    expect(files[0]?.patch).toContain("+- Use `bun test` instead of `npm test`.");

    // Adopt without confirm names what it would write and writes nothing.
    const preview = dataOf(await client.callTool({ name: "sleep_adopt", arguments: { project } }));
    expect(preview).toMatchObject({ confirmed: false, written: [], would_write: [skillPath], staging_dir: night });
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([]);
    const adopted = dataOf(await client.callTool({ name: "sleep_adopt", arguments: { project, confirm: true } }));
    expect(adopted).toMatchObject({ ok: true, written: [skillPath], staging_dir: night });
    expect(changedFiles(before, hashTree([tmp.path], skip), tmp.path)).toEqual([
      "home/.claude/skills/skillopt-sleep-learned/SKILL.md",
    ]);
    expect(readFileSync(skillPath, "utf8")).toContain("- Use `bun test` instead of `npm test`.");
    expect(errorOf(await client.callTool({ name: "sleep_reject", arguments: { project } }))).toContain(
      "[sleep] already_adopted:",
    );
    expect(existsSync(join(night, "rejected.json"))).toBe(false);
  }, 60_000);

  test("a cancelled eval stops its process while the server keeps answering", async () => {
    using dir = tempDir("mcp-cancel-");
    const skillFile = join(dir.path, "SKILL.md");
    writeFileSync(skillFile, "# Skill\n\nAnswer with the exact span.\n");
    await using fake = await startFakeOpenAI({ reply: { fault: "hang" } });
    // A fake endpoint and the repository's fixture split: the owner allowed both.
    await using mcp = await connectMcp(dir.path, KEY_ENV, ["--allow-commands"]);
    const { client, transport } = mcp;
    const serverPid = transport.pid!;
    const ctl = new AbortController();
    const call = client.callTool(
      { name: "eval", arguments: { config: "searchqa", skill: skillFile, set: searchqaOn(fake.url), cache: false } },
      undefined,
      { signal: ctl.signal },
    );
    await fake.waitFor(1);
    // While the evaluation waits on its model, the server keeps answering.
    await client.ping();
    expect(dataOf(await client.callTool({ name: "runs", arguments: {} }))).toEqual({ runs: [] });
    const kids = await childrenOf(serverPid);
    expect(kids.length).toBe(1);
    ctl.abort("the user changed their mind");
    expect(
      await call.then(
        () => "answered",
        () => "rejected",
      ),
    ).toBe("rejected");
    await client.ping();
    await until(async () => (await childrenOf(serverPid)).length === 0 && !processAlive(kids[0]!));
    await until(() => fake.inFlight === 0);
    // The server still serves calls after the cancellation.
    expect(dataOf(await client.callTool({ name: "runs", arguments: {} }))).toEqual({ runs: [] });
  });

  test("a client that goes away ends the server and the training runs it started", async () => {
    using dir = tempDir("mcp-eof-");
    await using fake = await startFakeOpenAI({ reply: { fault: "hang" } });
    const mcp = await connectMcp(dir.path, KEY_ENV, ["--allow-commands"]);
    const serverPid = mcp.transport.pid!;
    const started = dataOf(
      await mcp.client.callTool({ name: "train", arguments: { config: "searchqa", set: searchqaOn(fake.url) } }),
    );
    const pid = Number(started.pid);
    await fake.waitFor(1);
    expect(processAlive(pid)).toBe(true);
    await mcp.client.close();
    await until(() => !processAlive(serverPid));
    expect(processAlive(pid)).toBe(false);
    // It was stopped, not left running: the run folder says so.
    const row = (await import("../../src/run/index.ts")).readRunRow(String(started.out));
    expect(["interrupted", "unknown"]).toContain(row.status);
  });
});
