import { describe, expect, test } from "bun:test";
import { backoffDelay, defaultPolicy, parseRetryAfter, withRetry } from "../../src/backends/retry.ts";
import { BackendError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { ask, compatClient } from "./support.ts";

describe("retry policy", () => {
  test("full jitter stays within the exponential cap", () => {
    const p = defaultPolicy(5, { baseDelayMs: 100, maxDelayMs: 1000, random: () => 0.999 });
    expect([1, 2, 3, 4, 5].map((r) => backoffDelay(p, r, new Error("x")))).toEqual([99, 199, 399, 799, 999]);
    expect(backoffDelay({ ...p, random: () => 0 }, 3, new Error("x"))).toBe(0);
  });

  test("Retry-After wins over the backoff, capped", () => {
    const p = defaultPolicy(3, { maxRetryAfterMs: 5000 });
    expect(backoffDelay(p, 1, new BackendError("rate_limit", "x", { retryable: true, retryAfterMs: 1234 }))).toBe(1234);
    expect(backoffDelay(p, 1, new BackendError("rate_limit", "x", { retryable: true, retryAfterMs: 60_000 }))).toBe(
      5000,
    );
  });

  test("Retry-After headers parse as ms, seconds or an HTTP date", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(parseRetryAfter(h({ "retry-after-ms": "250" }))).toBe(250);
    expect(parseRetryAfter(h({ "retry-after": "2" }))).toBe(2000);
    expect(parseRetryAfter(h({ "retry-after": new Date(10_000).toUTCString() }), 4_000)).toBe(6000);
    expect(parseRetryAfter(h({}))).toBeUndefined();
  });

  test("attempts stop at the policy's count and say so", async () => {
    let n = 0;
    const err = await withRetry(
      async () => {
        n++;
        throw new BackendError("http", "HTTP 500", { retryable: true, status: 500 });
      },
      defaultPolicy(3, { baseDelayMs: 0 }),
    ).catch((e: unknown) => e);
    expect(n).toBe(3);
    expect((err as BackendError).message).toContain("after 3 attempts");
  });
});

describe("fault modes against the fake server", () => {
  test("optimizer stages get 3 attempts, rollouts 5", async () => {
    await using server = await startFakeOpenAI({ reply: { fault: "status", status: 502 } });
    await using client = await compatClient(server.url);
    await expect(client.chat("optimizer", ask("o", { stage: "analyst" }))).rejects.toBeInstanceOf(BackendError);
    expect(server.requests.length).toBe(3);
    await expect(client.chat("target", ask("t"))).rejects.toBeInstanceOf(BackendError);
    expect(server.requests.length).toBe(8);
    const s = client.ledger.summary();
    expect(s.by_stage.analyst!.errors).toBe(1);
    expect(s.attempts).toBe(8);
  });

  for (const status of [400, 403, 404]) {
    test(`HTTP ${status} is not retried`, async () => {
      await using server = await startFakeOpenAI({ reply: { fault: "status", status, message: "nope" } });
      await using client = await compatClient(server.url);
      const err = (await client.chat("target", ask("x")).catch((e: unknown) => e)) as BackendError;
      expect(err.status).toBe(status);
      expect(err.retryable).toBe(false);
      expect(server.requests.length).toBe(1);
    });
  }

  test("a 404 names the model and suggests checking it", async () => {
    await using server = await startFakeOpenAI({
      reply: { fault: "status", status: 404, message: "The model `gpt-9` does not exist" },
    });
    await using client = await compatClient(server.url, { target: "gpt-9" });
    const err = (await client.chat("target", ask("x")).catch((e: unknown) => e)) as BackendError;
    expect(err.kind).toBe("not_found");
    expect(err.message).toContain("model gpt-9");
    expect(err.hint).toContain("model");
  });

  test("malformed JSON, a reset connection and a cut stream are retried", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue({ fault: "malformed" }, { fault: "reset" }, "fine");
    await using client = await compatClient(server.url);
    expect((await client.chat("target", ask("a"))).attempts).toBe(3);

    await using streaming = await compatClient(server.url, { openai_compatible_stream: true });
    server.enqueue({ fault: "cut" }, { fault: "reset" }, "streamed fine");
    const res = await streaming.chat("target", ask("b"));
    expect(res).toMatchObject({ text: "streamed fine", attempts: 3 });
  });

  test("a hang past the timeout is abandoned and retried", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue({ fault: "hang" }, "after hang");
    await using client = await compatClient(server.url, { openai_compatible_timeout_seconds: 0.15 });
    const res = await client.chat("target", ask("h"));
    expect(res).toMatchObject({ text: "after hang", attempts: 2 });
  });

  test("an abort from the caller stops at once without retries", async () => {
    await using server = await startFakeOpenAI({ reply: { fault: "hang" } });
    await using client = await compatClient(server.url);
    const ctl = new AbortController();
    const p = client.chat("target", ask("c"), { signal: ctl.signal });
    await server.waitFor(1);
    ctl.abort(new Error("stop"));
    await expect(p).rejects.toThrow("stop");
    expect(server.requests.length).toBe(1);
  });

  test("an unscripted request is a descriptive 500 and fails teardown", async () => {
    const server = await startFakeOpenAI();
    await using client = await compatClient(server.url, {}, { retry: { attempts: { target: 1 } } });
    const err = (await client.chat("target", ask("nobody scripted me")).catch((e: unknown) => e)) as BackendError;
    expect(err.message).toContain("no scripted reply");
    await expect(server.close()).rejects.toThrow("1 request(s) had no scripted reply");
  });
});
