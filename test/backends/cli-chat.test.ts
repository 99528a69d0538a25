import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { createModelClient } from "../../src/backends/index.ts";
import type { BackendError } from "../../src/lib/index.ts";
import { dies, fakeBinEnv } from "../support/fake-bins/index.ts";

const cfg = (model: Record<string, unknown>, execTimeout = 30) => ({
  model: { optimizer: "claude-sonnet-4-5", target: "claude-sonnet-4-5", ...model },
  env: { exec_timeout: execTimeout },
});
const chatReq = (text: string, system?: string) => ({
  stage: "analyst",
  messages: [
    ...(system ? [{ role: "system" as const, content: system }] : []),
    { role: "user" as const, content: text },
  ],
});

describe("claude_chat (claude -p, JSON output)", () => {
  test("runs claude -p in an empty temp dir with the prompt on stdin and parses result, usage and cost", async () => {
    using bins = fakeBinEnv({
      reply: "reply to [{stdin}] with system [{system}]",
      usage: { input: 100, output: 20, cached: 30 },
      cost: 0.0042,
    });
    const client = await createModelClient(cfg({ backend: "claude_chat" }), { noCache: true, env: bins.env });
    const res = await client.chat("optimizer", chatReq("what now?", "be terse"));
    expect(res.text).toBe("reply to [what now?] with system [be terse]");
    expect(res.usage).toEqual({ promptTokens: 130, completionTokens: 20, cachedTokens: 30, reasoningTokens: 0 });
    expect(res.costUsd).toBe(0.0042);
    const call = bins.calls()[0]!;
    expect(call.argv.slice(0, 6)).toEqual([
      "-p",
      "--output-format",
      "json",
      "--permission-mode",
      "dontAsk",
      "--add-dir",
    ]);
    expect(call.argv).toContain("--tools");
    expect(call.argv[call.argv.indexOf("--tools") + 1]).toBe("");
    expect(call.argv).toContain("--strict-mcp-config");
    expect(call.argv).toContain("claude-sonnet-4-5");
    expect(call.cwd).toContain("skillopt-claude-");
    expect(existsSync(call.cwd)).toBe(false);
    await client.close();
  });

  test("a not-logged-in CLI fails fast with a clear message", async () => {
    using bins = fakeBinEnv({ mode: "auth" });
    const client = await createModelClient(cfg({ backend: "claude_chat" }), { noCache: true, env: bins.env });
    const err = (await client.chat("optimizer", chatReq("x")).catch((e: unknown) => e)) as BackendError;
    expect(err.kind).toBe("auth");
    expect(bins.calls().length).toBe(1);
    await client.close();
  });

  test("a hung CLI is killed with its process group at the timeout and retried", async () => {
    using bins = fakeBinEnv({ sequence: ["hang", "ok"], reply: "second try" }, { CLAUDE_CHAT_TIMEOUT: "0.5" });
    const client = await createModelClient(cfg({ backend: "claude_chat" }), {
      noCache: true,
      env: bins.env,
      retry: { baseDelayMs: 1 },
    });
    const t0 = performance.now();
    const res = await client.chat("optimizer", chatReq("x"));
    expect(res).toMatchObject({ text: "second try", attempts: 2 });
    expect(performance.now() - t0).toBeLessThan(5000);
    const hung = bins.calls().find((c) => c.grandchild !== undefined)!;
    expect(await dies(hung.pid)).toBe(true);
    expect(await dies(hung.grandchild!)).toBe(true);
    await client.close();
  });
});

describe("codex_exec as a chat model", () => {
  test("codex exec --json in a read-only temp dir; text from --output-last-message, usage from turn.completed", async () => {
    using bins = fakeBinEnv({ reply: "codex: {stdin}", usage: { input: 300, output: 60, cached: 100 } });
    const client = await createModelClient(
      cfg({ backend: "azure_openai", optimizer_backend: "codex_exec", optimizer: "gpt-5" }),
      { noCache: true, env: bins.env, roles: ["optimizer"] },
    );
    const res = await client.chat("optimizer", chatReq("plan it", "sys"));
    expect(res.text).toBe("codex: sys\n\n---\n\nplan it");
    expect(res.usage).toEqual({ promptTokens: 300, completionTokens: 60, cachedTokens: 100, reasoningTokens: 0 });
    expect(res.costUsd).toBeCloseTo((200 * 1.25 + 100 * 0.125 + 60 * 10) / 1e6, 12);
    const call = bins.calls()[0]!;
    expect(call.argv.slice(0, 4)).toEqual(["exec", "--json", "--ephemeral", "-c"]);
    expect(call.argv[call.argv.indexOf("--sandbox") + 1]).toBe("read-only");
    expect(call.argv.at(-1)).toBe("-");
    await client.close();
  });

  test("a 401 event from codex is an auth failure, not retried", async () => {
    using bins = fakeBinEnv({ mode: "auth" });
    const client = await createModelClient(cfg({ optimizer_backend: "codex_exec" }), {
      noCache: true,
      env: bins.env,
      roles: ["optimizer"],
    });
    const err = (await client.chat("optimizer", chatReq("x")).catch((e: unknown) => e)) as BackendError;
    expect(err.kind).toBe("auth");
    expect(bins.calls().length).toBe(1);
    await client.close();
  });
});

describe("copilot_chat", () => {
  test("prompt in argv, assistant.message contents joined, usage unknown", async () => {
    using bins = fakeBinEnv(
      { reply: "copilot answer for {stdin}" },
      { COPILOT_ALLOW_ALL: "1", GH_TOKEN: "ghp_abcdefghijklmnopqrstuvwx" },
    );
    const client = await createModelClient(cfg({ backend: "copilot_chat", copilot_chat_optimizer_model: "gpt-5" }), {
      noCache: true,
      env: bins.env,
    });
    const res = await client.chat("optimizer", chatReq("q", "s"));
    expect(res.text).toBe("copilot answer for s\n\n---\n\nq");
    expect(res.costUsd).toBeNull();
    const call = bins.calls()[0]!;
    expect(call.argv).toContain("--available-tools=");
    expect(call.argv.slice(-2)).toEqual(["--model", "gpt-5"]);
    expect(call.env).toContain("GH_TOKEN");
    expect(call.env).not.toContain("COPILOT_ALLOW_ALL");
    await client.close();
  });
});

describe("images through CLI chat backends", () => {
  const PNG = "data:image/png;base64,iVBORw0KGgo=";
  const withImage = {
    stage: "rollout",
    messages: [
      {
        role: "user" as const,
        content: [
          { type: "text" as const, text: "what is this" },
          { type: "image" as const, url: PNG },
        ],
      },
    ],
  };

  test("codex gets inline images as --image files", async () => {
    using bins = fakeBinEnv({ reply: "an image" });
    const client = await createModelClient(cfg({ backend: "codex" }), {
      noCache: true,
      env: bins.env,
      roles: ["target"],
    });
    expect((await client.chat("target", withImage)).text).toBe("an image");
    const argv = bins.calls()[0]!.argv;
    expect(argv[argv.indexOf("--image") + 1]).toEndWith("image_01.png");
    await client.close();
  });

  test("claude_chat refuses images clearly instead of dropping them", async () => {
    using bins = fakeBinEnv({});
    const client = await createModelClient(cfg({ backend: "claude_chat" }), {
      noCache: true,
      env: bins.env,
      roles: ["target"],
    });
    await expect(client.chat("target", withImage)).rejects.toThrow("images are not supported");
    expect(bins.calls().length).toBe(0);
    await client.close();
  });
});
