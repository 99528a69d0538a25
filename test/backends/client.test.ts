import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { type CallEvent, createModelClient } from "../../src/backends/index.ts";
import { BudgetError } from "../../src/lib/index.ts";
import { ledgerRows, openStore, useCallTables } from "../../src/store/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { ask, compatClient } from "./support.ts";

describe("call cache", () => {
  test("a repeated call is served from the cache and the server sees it once", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "cached answer", usage: { prompt_tokens: 100, completion_tokens: 10 } },
    });
    await using client = await compatClient(server.url);
    const first = await client.chat("target", ask("same prompt"));
    const second = await client.chat("target", ask("same prompt"));
    expect(server.requests.length).toBe(1);
    expect(first.cached).toBe(false);
    expect(second).toMatchObject({ text: "cached answer", cached: true, costUsd: 0, attempts: 0 });
    const s = client.ledger.summary();
    expect(s).toMatchObject({ calls: 2, cached: 1, paid: 1 });
    expect(s.tokens.prompt).toBe(100);
  });

  test("different sample indexes are different calls; equal ones are one", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => `sample for ${req.index}` });
    await using client = await compatClient(server.url);
    for (const i of [0, 1, 2, 1, 0]) await client.chat("target", ask("k samples", { sampleIndex: i }));
    expect(server.requests.length).toBe(3);
  });

  test("the cache survives a new client (a resumed run never pays twice)", async () => {
    await using server = await startFakeOpenAI({ reply: "persisted" });
    using dir = tempDir("cache-");
    {
      await using c1 = await compatClient(server.url, {}, { cacheDir: dir.path });
      await c1.chat("optimizer", ask("x", { stage: "analyst" }));
    }
    await using c2 = await compatClient(server.url, {}, { cacheDir: dir.path });
    const res = await c2.chat("optimizer", ask("x", { stage: "analyst" }));
    expect(res.cached).toBe(true);
    expect(server.requests.length).toBe(1);
  });

  test("--no-cache pays for every call", async () => {
    await using server = await startFakeOpenAI({ reply: "fresh" });
    await using client = await compatClient(server.url, {}, { noCache: true });
    await client.chat("target", ask("p"));
    await client.chat("target", ask("p"));
    expect(server.requests.length).toBe(2);
  });

  test("a truncated reply is not cached", async () => {
    await using server = await startFakeOpenAI({ reply: { text: "cut off", finishReason: "length" } });
    await using client = await compatClient(server.url);
    await client.chat("target", ask("long"));
    const again = await client.chat("target", ask("long"));
    expect(again.cached).toBe(false);
    expect(server.requests.length).toBe(2);
  });

  test("concurrent identical calls share one paid request", async () => {
    await using server = await startFakeOpenAI({ reply: { text: "shared", delayMs: 30 } });
    await using client = await compatClient(server.url);
    const all = await Promise.all([1, 2, 3, 4].map(() => client.chat("target", ask("dup"))));
    expect(server.requests.length).toBe(1);
    expect(all.filter((r) => r.cached).length).toBe(3);
  });
});

describe("limits and accounting", () => {
  test("the limiter never exceeds its bound", async () => {
    await using server = await startFakeOpenAI({ reply: { text: "ok", delayMs: 15 } });
    await using client = await compatClient(server.url, {}, { concurrency: { target: 3 } });
    await Promise.all(Array.from({ length: 24 }, (_, i) => client.chat("target", ask(`task ${i}`))));
    expect(server.requests.length).toBe(24);
    expect(server.maxInFlight).toBe(3);
  });

  test("the bound comes from the config's worker keys per role", async () => {
    await using server = await startFakeOpenAI({ reply: { text: "ok", delayMs: 15 } });
    await using client = await compatClient(server.url);
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => client.chat("optimizer", ask(`a ${i}`, { stage: "analyst" }))),
    );
    expect(server.maxInFlight).toBe(4);
  });

  test("cost and tokens add up by stage and in total", async () => {
    await using server = await startFakeOpenAI();
    server.match((r) => r.lastUserText.startsWith("analyst"), {
      text: "a",
      usage: { prompt_tokens: 2000, completion_tokens: 1000, cached_tokens: 1000 },
    });
    server.match((r) => r.lastUserText.startsWith("rollout"), {
      text: "r",
      usage: { prompt_tokens: 400, completion_tokens: 100 },
    });
    await using client = await compatClient(server.url, {
      optimizer: "gpt-4o",
      pricing: { "my-local-model": { input_per_mtok: 1, output_per_mtok: 2 } },
    });
    const a = await client.chat("optimizer", ask("analyst 1", { stage: "analyst" }));
    const r1 = await client.chat("target", ask("rollout 1"));
    const r2 = await client.chat("target", ask("rollout 2"));
    await client.chat("target", ask("rollout 1"));
    // gpt-4o: 1000 fresh × 2.5 + 1000 cached × 1.25 + 1000 out × 10, per 1M tokens
    expect(a.costUsd).toBeCloseTo((1000 * 2.5 + 1000 * 1.25 + 1000 * 10) / 1e6, 12);
    const s = client.ledger.summary();
    expect(s.by_stage.analyst).toMatchObject({
      calls: 1,
      cached: 0,
      prompt_tokens: 2000,
      completion_tokens: 1000,
      cached_tokens: 1000,
    });
    expect(s.by_stage.rollout).toMatchObject({ calls: 3, cached: 1, prompt_tokens: 800, completion_tokens: 200 });
    expect(s.cost_usd).toBeCloseTo(a.costUsd! + r1.costUsd! + r2.costUsd!, 12);
    expect(s.tokens).toEqual({ prompt: 2800, completion: 1200, cached: 1000, reasoning: 0, total: 4000 });
    expect(s.cost_known).toBe(true);
    expect(client.snapshot().cost_usd).toBeCloseTo(s.cost_usd, 12);
  });

  test("an unknown model's cost is unknown, never 0; model.pricing makes it known", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "x", usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000 } },
    });
    await using unknown = await compatClient(server.url, { target: "mystery-model" });
    const r = await unknown.chat("target", ask("q"));
    expect(r.costUsd).toBeNull();
    expect(unknown.ledger.summary().cost_known).toBe(false);
    expect(unknown.snapshot().cost_usd).toBeNull();
    await using priced = await compatClient(server.url, {
      target: "mystery-model",
      pricing: { "mystery-model": { input_per_mtok: 1, output_per_mtok: 3 } },
    });
    expect((await priced.chat("target", ask("q2"))).costUsd).toBeCloseTo(4, 9);
  });

  test("the call budget stops before the call that would exceed it", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    await using client = await compatClient(server.url, {}, { maxCalls: 2 });
    await client.chat("target", ask("1"));
    await client.chat("target", ask("2"));
    expect(client.budgetExceeded()).toEqual({ limit: "calls", spent: 2, cap: 2, at: { kind: "step_boundary" } });
    const err = await client.chat("target", ask("3")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect((err as BudgetError).exitCode).toBe(1);
    expect((err as BudgetError).code).toBe("budget");
    // The typed facts are the error's data; its message is worded from them.
    expect((err as BudgetError).data).toEqual({
      limit: "calls",
      spent: 2,
      cap: 2,
      at: { kind: "call", stage: "rollout" },
    });
    expect((err as BudgetError).message).toBe("call budget reached: 2 of 2 model calls made (before a rollout call)");
    expect(server.requests.length).toBe(2);
    // a cache hit costs nothing and is still served at the cap
    expect((await client.chat("target", ask("1"))).cached).toBe(true);
  });

  test("the cost budget is checked before every call", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "ok", usage: { prompt_tokens: 1_000_000, completion_tokens: 0 } },
    });
    await using client = await compatClient(server.url, { max_cost_usd: 0.1 });
    await client.chat("target", ask("1"));
    const err = await client.chat("target", ask("2")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect((err as BudgetError).limit).toBe("cost");
  });

  test("the ledger is persisted with the run and a resumed client keeps counting toward the cap", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "ok", usage: { prompt_tokens: 10, completion_tokens: 5 } },
    });
    using dir = tempDir("run-");
    const store = openStore(`${dir.path}/state.sqlite`, { migrations: [] });
    useCallTables(store);
    {
      await using c1 = await compatClient(server.url, {}, { ledgerStore: store, runId: "run-1", maxCalls: 3 });
      await c1.chat("target", ask("1"));
      await c1.chat("target", ask("2"));
    }
    expect(ledgerRows(store, "run-1").map((r) => [r.stage, r.cached, r.prompt_tokens])).toEqual([
      ["rollout", false, 10],
      ["rollout", false, 10],
    ]);
    await using c2 = await compatClient(server.url, {}, { ledgerStore: store, runId: "run-1", maxCalls: 3 });
    expect(c2.ledger.summary().paid).toBe(2);
    await c2.chat("target", ask("3"));
    await expect(c2.chat("target", ask("4"))).rejects.toBeInstanceOf(BudgetError);
    store.close();
  });

  test("onCall streams one event per call and per retry", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue({ fault: "status", status: 503, retryAfterMs: 0 }, "done");
    const events: CallEvent[] = [];
    await using client = await compatClient(server.url, {}, { onCall: (e) => events.push(e) });
    await client.chat("optimizer", ask("e", { stage: "merge" }));
    expect(events.map((e) => `${e.type}:${e.stage}`)).toEqual(["retry:merge", "call:merge"]);
    // The retry's failure is typed: its kind and HTTP status, beside its (redacted) message.
    expect(events[0]).toMatchObject({ type: "retry", role: "optimizer", attempt: 1, kind: "http", status: 503 });
  });
});

describe("cache location", () => {
  test("model.cache_dir puts the cache database there", async () => {
    await using server = await startFakeOpenAI({ reply: "x" });
    using dir = tempDir("cfgcache-");
    const client = await createModelClient({
      model: { backend: "openai_compatible", openai_compatible_base_url: server.url, cache_dir: dir.path },
    });
    await client.chat("target", ask("1"));
    await client.close();
    expect(existsSync(`${dir.path}/calls.sqlite`)).toBe(true);
  });

  test("auto without any endpoint falls back to the simulator and says so", async () => {
    const client = await createModelClient(
      { model: { backend: "auto" }, train: { seed: 1 }, env: {} },
      { noCache: true },
    );
    expect(client.resolved.auto).toEqual({ chose: "sim", reason: "no OpenAI-compatible endpoint or key configured" });
    expect(client.info.optimizer?.backend).toBe("sim");
    expect((await client.chat("target", ask("hello"))).costUsd).toBe(0);
    await client.close();
  });
});

describe("shared in-flight calls", () => {
  test("one caller's cancellation does not fail another caller of the same call", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue({ text: "slow", delayMs: 200 }, "second caller's own answer");
    await using client = await compatClient(server.url);
    const ctl = new AbortController();
    const first = client.chat("target", ask("same"), { signal: ctl.signal });
    await server.waitFor(1);
    const second = client.chat("target", ask("same"));
    ctl.abort(new Error("first caller gave up"));
    await expect(first).rejects.toThrow("first caller gave up");
    expect((await second).text).toBe("second caller's own answer");
  });

  test("a role that was not set up is an internal error, not a confusing one", async () => {
    await using server = await startFakeOpenAI({ reply: "x" });
    await using client = await compatClient(server.url, {}, { roles: ["target"] });
    await expect(client.chat("optimizer", ask("x", { stage: "analyst" }))).rejects.toThrow(
      "not set up for this command",
    );
  });
});
