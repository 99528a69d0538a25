import { describe, expect, test } from "bun:test";
import { BackendError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { refusedUrl } from "../support/net.ts";
import { ask, compatClient } from "./support.ts";

describe("openai_compatible through the real SDK", () => {
  test("a plain call returns text, usage, cost and one attempt", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "hello", usage: { prompt_tokens: 1000, completion_tokens: 500 } },
    });
    await using client = await compatClient(server.url);
    const res = await client.chat("target", ask("hi"));
    expect(res).toMatchObject({
      text: "hello",
      finishReason: "stop",
      attempts: 1,
      cached: false,
      model: "gpt-4o-mini",
    });
    expect(res.usage).toEqual({ promptTokens: 1000, completionTokens: 500, cachedTokens: 0, reasoningTokens: 0 });
    expect(res.costUsd).toBeCloseTo((1000 * 0.15 + 500 * 0.6) / 1e6, 12);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer sk-test-key-should-never-leak-1234");
    expect(server.requests[0]!.body.max_tokens).toBe(8000);
  });

  test("streaming collects the deltas and the usage block", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "a streamed answer of some length", usage: { prompt_tokens: 10, completion_tokens: 7 } },
    });
    await using client = await compatClient(server.url, { openai_compatible_stream: true });
    const res = await client.chat("target", ask("hi"));
    expect(server.requests[0]!.stream).toBe(true);
    expect(res.text).toBe("a streamed answer of some length");
    expect(res.usage.completionTokens).toBe(7);
  });

  test("retries recover from 429 with Retry-After, 500 and a timeout", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue(
      { fault: "rate_limit", retryAfterMs: 30 },
      { fault: "status", status: 500 },
      { fault: "hang" },
      "recovered",
    );
    await using client = await compatClient(server.url, { openai_compatible_timeout_seconds: 0.2 });
    const t0 = performance.now();
    const res = await client.chat("target", ask("hi"));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(30);
    expect(res.text).toBe("recovered");
    expect(res.attempts).toBe(4);
    expect(server.requests.length).toBe(4);
  });

  test("401 fails fast at the first call with the endpoint and model, never the key", async () => {
    await using server = await startFakeOpenAI({
      reply: {
        fault: "status",
        status: 401,
        message: "Incorrect API key provided: sk-test-key-should-never-leak-1234",
      },
    });
    await using client = await compatClient(server.url);
    const err = await client.chat("optimizer", ask("hi", { stage: "analyst" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackendError);
    const e = err as BackendError;
    expect(e.kind).toBe("auth");
    expect(e.message).toContain(server.url.replace(/\/$/, ""));
    expect(e.message).toContain("gpt-4o-mini");
    expect(e.message).not.toContain("sk-test-key-should-never-leak-1234");
    expect(server.requests.length).toBe(1);
  });

  test("a refused connection is reported as refused", async () => {
    await using client = await compatClient(await refusedUrl());
    const err = (await client.chat("target", ask("hi")).catch((e: unknown) => e)) as BackendError;
    expect(err.kind).toBe("refused");
  });
});
