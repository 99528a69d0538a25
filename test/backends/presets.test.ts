import { describe, expect, test } from "bun:test";
import { createModelClient } from "../../src/backends/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { ask } from "./support.ts";

async function bodyFor(
  model: Record<string, unknown>,
  env: Record<string, string> = {},
  role: "optimizer" | "target" = "target",
) {
  await using server = await startFakeOpenAI({ reply: "ok" });
  const client = await createModelClient(
    { model: { optimizer: "o-model", target: "t-model", ...model } },
    { noCache: true, roles: [role], env: { ...env, QWEN_CHAT_BASE_URL: server.url, MINIMAX_BASE_URL: server.url } },
  );
  await client.chat(role, ask("hi", { maxTokens: 20000 }));
  await client.close();
  return server.requests[0]!.body;
}

describe("qwen_chat", () => {
  test("server_default omits chat_template_kwargs; max_tokens is capped; temperature defaults to 0.7", async () => {
    const body = await bodyFor({ backend: "qwen_chat" });
    expect(body.chat_template_kwargs).toBeUndefined();
    expect(body.max_tokens).toBe(8000);
    expect(body.temperature).toBe(0.7);
    expect(body.model).toBe("t-model");
  });

  test("disabled sends enable_thinking false; per-role keys win", async () => {
    const body = await bodyFor({
      backend: "qwen_chat",
      qwen_chat_thinking_mode: "enabled",
      target_qwen_chat_thinking_mode: "disabled",
    });
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: false });
  });

  test("legacy enable_thinking true means enabled; use_max_completion_tokens switches the field; temperature none omits it", async () => {
    const body = await bodyFor(
      { backend: "qwen_chat" },
      { QWEN_CHAT_ENABLE_THINKING: "true", QWEN_CHAT_USE_MAX_COMPLETION_TOKENS: "true", QWEN_CHAT_TEMPERATURE: "none" },
    );
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: true });
    expect(body.max_completion_tokens).toBe(8000);
    expect(body.max_tokens).toBeUndefined();
    expect(body.temperature).toBeUndefined();
  });

  test("conflicting legacy and new settings, or a typo, are config errors", async () => {
    await expect(
      createModelClient(
        { model: { backend: "qwen_chat", qwen_chat_thinking_mode: "disabled" } },
        { noCache: true, roles: ["target"], env: { QWEN_CHAT_ENABLE_THINKING: "true" } },
      ),
    ).rejects.toBeInstanceOf(ConfigError);
    await expect(
      createModelClient(
        { model: { backend: "qwen_chat", qwen_chat_thinking_mode: "enabeld" } },
        { noCache: true, roles: ["target"] },
      ),
    ).rejects.toThrow(/unknown Qwen thinking mode "enabeld"/);
  });
});

describe("minimax_chat", () => {
  test("thinking follows enable_thinking; M2 models always adaptive; both roles use the target deployment", async () => {
    expect((await bodyFor({ backend: "minimax_chat", minimax_model: "MiniMax-M3" })).thinking).toEqual({
      type: "disabled",
    });
    expect((await bodyFor({ backend: "minimax_chat", minimax_model: "MiniMax-M2.5" })).thinking).toEqual({
      type: "adaptive",
    });
    const body = await bodyFor(
      {
        backend: "minimax_chat",
        optimizer_backend: "minimax_chat",
        minimax_model: "MiniMax-M3",
        minimax_enable_thinking: "true",
      },
      {},
      "optimizer",
    );
    expect(body.thinking).toEqual({ type: "adaptive" });
    expect(body.model).toBe("MiniMax-M3");
  });

  test("an explicitly empty minimax_temperature omits the temperature", async () => {
    expect((await bodyFor({ backend: "minimax_chat", minimax_temperature: "" })).temperature).toBeUndefined();
    expect((await bodyFor({ backend: "minimax_chat", minimax_temperature: "0.7" })).temperature).toBe(0.7);
  });

  test("an unknown region is a config error", async () => {
    await expect(
      createModelClient(
        { model: { backend: "minimax_chat", minimax_region: "mars" } },
        { noCache: true, roles: ["target"] },
      ),
    ).rejects.toThrow(/unknown MiniMax region/);
  });
});

describe("openai_compatible settings", () => {
  test("role env beats shared env; reasoning_effort is sent only to models that take it", async () => {
    await using a = await startFakeOpenAI({ reply: "role" });
    await using b = await startFakeOpenAI({ reply: "shared" });
    const client = await createModelClient(
      { model: { backend: "openai_compatible", optimizer: "gpt-5-mini", target: "llama-3" } },
      {
        noCache: true,
        env: {
          OPENAI_COMPATIBLE_BASE_URL: b.url,
          TARGET_OPENAI_COMPATIBLE_BASE_URL: a.url,
          OPENAI_COMPATIBLE_TEMPERATURE: "0.2",
        },
      },
    );
    expect((await client.chat("target", ask("x", { reasoningEffort: "high" }))).text).toBe("role");
    expect((await client.chat("optimizer", ask("x", { reasoningEffort: "high", stage: "analyst" }))).text).toBe(
      "shared",
    );
    expect(a.requests[0]!.body.reasoning_effort).toBeUndefined();
    expect(a.requests[0]!.body.temperature).toBe(0.2);
    expect(b.requests[0]!.body.reasoning_effort).toBe("high");
    await client.close();
  });

  test("a bad numeric setting names its source", async () => {
    await expect(
      createModelClient(
        { model: { backend: "openai_compatible" } },
        { noCache: true, env: { OPENAI_COMPATIBLE_MAX_TOKENS: "lots" } },
      ),
    ).rejects.toThrow("OPENAI_COMPATIBLE_MAX_TOKENS: expected a positive number");
  });
});
