import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import type { TaskRunner } from "../../src/engine/ports.ts";
import { UnsupportedError } from "../../src/lib/index.ts";
import { dies, fakeBinEnv } from "../support/fake-bins/index.ts";

const execCfg = (backend: string, execTimeout = 30, model: Record<string, unknown> = {}) => ({
  model: {
    backend,
    optimizer: "gpt-4o",
    target: "claude-sonnet-4-5",
    azure_openai_endpoint: "https://example.openai.azure.com",
    azure_openai_auth_mode: "api_key",
    azure_openai_api_key: "k-1234567890",
    ...model,
  },
  env: { exec_timeout: execTimeout },
});

async function runner(
  backend: string,
  env: (n: string) => string | undefined,
  execTimeout = 30,
  model: Record<string, unknown> = {},
): Promise<TaskRunner> {
  const client = await createModelClient(execCfg(backend, execTimeout, model), { noCache: true, env });
  const r = client.taskRunner();
  if (!r) throw new Error(`no task runner for ${backend}`);
  return r;
}

const TASK = {
  id: "t1",
  prompt: "What is 2+2? Answer in <answer> tags.\nmore lines",
  files: { "data/input.txt": "4" },
};

describe("exec harnesses (target role)", () => {
  test("claude_code_exec installs the skill, parses the stream into a trajectory and removes the workspace", async () => {
    using bins = fakeBinEnv(
      { reply: "<answer>4</answer> {skill} {task}", usage: { input: 1000, output: 100, cached: 0 }, cost: 0.02 },
      { ANTHROPIC_API_KEY: "sk-ant-secret-value-123456789", AWS_SECRET_ACCESS_KEY: "nope" },
    );
    const r = await runner("claude_code_exec", bins.env);
    let seen: string[] = [];
    const t = await r.runTask("# Skill\nAlways show work.", TASK, {
      inspect: async (ws) => {
        seen = [
          ".claude/skills/skillopt-target/SKILL.md",
          ".agents/skills/skillopt-target/SKILL.md",
          "task.md",
          "data/input.txt",
        ].filter((p) => existsSync(join(ws, p)));
        expect(readFileSync(join(ws, ".claude/skills/skillopt-target/SKILL.md"), "utf8")).toContain(
          "Always show work.",
        );
      },
    });
    expect(seen.length).toBe(4);
    expect(t.finalAnswer).toBe("<answer>4</answer> skill-found What is 2+2? Answer in <answer> tags.");
    expect(t.steps.map((s) => [s.role, s.toolName ?? ""])).toEqual([
      ["assistant", "Read"],
      ["tool", ""],
      ["assistant", ""],
    ]);
    expect(t).toMatchObject({
      costUsd: 0.02,
      exitCode: 0,
      timedOut: false,
      usage: { promptTokens: 1000, completionTokens: 100 },
    });
    expect(t.error).toBeUndefined();
    const call = bins.calls()[0]!;
    expect(existsSync(call.cwd)).toBe(false);
    expect(call.argv.slice(0, 3)).toEqual(["-p", "--output-format", "stream-json"]);
    expect(call.argv[call.argv.indexOf("--") + 1]).toContain("Do not modify any files.");
    expect(call.env).toContain("ANTHROPIC_API_KEY");
    expect(call.env).not.toContain("AWS_SECRET_ACCESS_KEY");
  });

  test("claude_code_exec effort and thinking budget follow the config; empty effort is omitted", async () => {
    using bins = fakeBinEnv({ reply: "<answer>4</answer>" });
    await (
      await runner("claude_code_exec", bins.env, 30, {
        claude_code_exec_effort: "xhigh",
        claude_code_exec_max_thinking_tokens: 2048,
      })
    ).runTask("s", TASK);
    await (
      await runner("claude_code_exec", bins.env, 30, {
        claude_code_exec_effort: "",
        claude_code_exec_max_thinking_tokens: 0,
      })
    ).runTask("s", TASK);
    const [a, b] = bins.calls();
    expect(a!.argv[a!.argv.indexOf("--effort") + 1]).toBe("max");
    expect(a!.argv[a!.argv.indexOf("--max-thinking-tokens") + 1]).toBe("2048");
    expect(b!.argv).not.toContain("--effort");
    expect(b!.argv).not.toContain("--max-thinking-tokens");
  });

  test("a harness that hangs is killed with its whole process group at env.exec_timeout; the task fails with a reason", async () => {
    using bins = fakeBinEnv({ mode: "hang" });
    const r = await runner("claude_code_exec", bins.env, 0.4);
    const t = await r.runTask("skill", TASK);
    expect(t.timedOut).toBe(true);
    expect(t.error).toContain("timed out");
    const hung = bins.calls()[0]!;
    expect(await dies(hung.pid)).toBe(true);
    expect(await dies(hung.grandchild!)).toBe(true);
    expect(existsSync(hung.cwd)).toBe(false);
  });

  test("an empty answer is retried once with the retry paragraph", async () => {
    using bins = fakeBinEnv({ sequence: ["empty", "ok"], reply: "<answer>4</answer>" });
    const r = await runner("claude_code_exec", bins.env);
    const t = await r.runTask("skill", TASK);
    expect(t.finalAnswer).toBe("<answer>4</answer>");
    const calls = bins.calls();
    expect(calls.length).toBe(2);
    expect(calls[1]!.argv.at(-1)).toContain("previous execution returned an empty answer");
  });

  test("codex_exec: prompt verbatim, AGENTS.md skill, last message file, usage", async () => {
    using bins = fakeBinEnv({ reply: "<answer>4</answer> {skill}", usage: { input: 500, output: 50, cached: 100 } });
    const r = await runner("codex_exec", bins.env, 30, { target: "gpt-5" });
    const t = await r.runTask("# Codex skill", TASK);
    expect(t.finalAnswer).toBe("<answer>4</answer> skill-found");
    expect(t.usage).toEqual({ promptTokens: 500, completionTokens: 50, cachedTokens: 100, reasoningTokens: 0 });
    expect(t.costUsd).toBeCloseTo((400 * 1.25 + 100 * 0.125 + 50 * 10) / 1e6, 12);
    expect(t.steps.map((s) => s.toolName ?? s.role)).toEqual(["shell", "assistant"]);
    const call = bins.calls()[0]!;
    expect(call.argv.at(-1)).toBe(TASK.prompt);
    expect(call.argv[call.argv.indexOf("--sandbox") + 1]).toBe("workspace-write");
    expect(call.argv).toContain('approval_policy="never"');
  });

  test("codex_exec failure events become the task's error", async () => {
    using bins = fakeBinEnv({ mode: "fail" });
    const r = await runner("codex_exec", bins.env);
    const t = await r.runTask("s", TASK);
    expect(t.error).toContain("stream disconnected");
  });

  test("cursor_exec: stream-json with tool calls, prompt on stdin, ask mode", async () => {
    using bins = fakeBinEnv({ reply: "<answer>4</answer>" });
    const r = await runner("cursor_exec", bins.env);
    const t = await r.runTask("s", TASK);
    expect(t.finalAnswer).toBe("<answer>4</answer>");
    expect(t.steps.map((s) => s.toolName ?? s.role)).toEqual(["readToolCall", "assistant"]);
    expect(t.costUsd).toBeNull();
    const call = bins.calls()[0]!;
    expect(call.argv).toEqual(expect.arrayContaining(["--trust", "--sandbox", "enabled", "--mode", "ask"]));
    expect(call.stdin).toContain("read task.md");
  });

  test("copilot_exec: prompt in argv, -C workspace, messages joined", async () => {
    using bins = fakeBinEnv({ reply: "<answer>4</answer> {skill}" });
    const r = await runner("copilot_exec", bins.env);
    const t = await r.runTask("s", TASK);
    expect(t.finalAnswer).toBe("<answer>4</answer> skill-found");
    const call = bins.calls()[0]!;
    expect(call.argv[call.argv.indexOf("-C") + 1]).toBe(call.cwd);
    expect(call.argv).not.toContain("--allow-all-tools");
  });

  test("an exec-only target is not a chat model", async () => {
    using bins = fakeBinEnv({});
    const client = await createModelClient(execCfg("claude_code_exec"), { noCache: true, env: bins.env });
    await expect(
      client.chat("target", { stage: "rollout", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toBeInstanceOf(UnsupportedError);
    expect(client.info.target).toMatchObject({ backend: "claude_code_exec", exec: true });
  });

  test("a missing CLI is a task failure naming it, and the workspace is still removed", async () => {
    using bins = fakeBinEnv({});
    const r = await runner("cursor_exec", bins.env, 30, { cursor_exec_path: "/nonexistent/cursor-agent" });
    const t = await r.runTask("s", TASK);
    expect(t.error).toContain("cursor_exec");
  });
});

describe("exec harness safety", () => {
  test("cursor file edits with the sandbox disabled are refused before any process starts", async () => {
    using bins = fakeBinEnv({ reply: "x" });
    const r = await runner("cursor_exec", bins.env, 30, { cursor_exec_sandbox: "disabled" });
    const t = await r.runTask("s", { ...TASK, allowEdits: true });
    expect(t.error).toContain("refused");
    expect(bins.calls().length).toBe(0);
  });
});

describe("exec trajectories carry no credentials", () => {
  test("a secret handed to the agent is scrubbed from its answer and steps", async () => {
    using bins = fakeBinEnv({ reply: "my key is {stdin}" }, { CURSOR_API_KEY: "cursor-plain-secret-42" });
    const r = await runner("cursor_exec", bins.env);
    bins.setControl({ reply: "leaked cursor-plain-secret-42 here" });
    const t = await r.runTask("s", TASK);
    expect(t.finalAnswer).toBe("leaked [REDACTED] here");
    expect(JSON.stringify(t.steps)).not.toContain("cursor-plain-secret-42");
  });
});

describe("exec runs are accounted", () => {
  test("task runs go through the ledger, the limiter and the budget", async () => {
    using bins = fakeBinEnv({ reply: "<answer>4</answer>", cost: 0.5 });
    const client = await createModelClient(execCfg("claude_code_exec"), {
      noCache: true,
      env: bins.env,
      maxCalls: 2,
      concurrency: { target: 1 },
    });
    const r = client.taskRunner()!;
    await Promise.all([r.runTask("s", TASK), r.runTask("s", { ...TASK, id: "t2" })]);
    const s = client.ledger.summary();
    expect(s.by_stage.rollout).toMatchObject({ calls: 2, cached: 0 });
    expect(s.cost_usd).toBeCloseTo(1, 9);
    expect(client.limiter("target", "exec:claude_code_exec").maxRunning).toBe(1);
    await expect(r.runTask("s", TASK)).rejects.toThrow("call budget reached");
    expect(bins.calls().length).toBe(2);
  });
});
