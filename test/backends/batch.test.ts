import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { type BatchEvent, builtinPrices, createModelClient, PriceTable } from "../../src/backends/index.ts";
import { batchText } from "../../src/report/index.ts";
import { BudgetError, ConfigError, NoAnswerError } from "../../src/lib/index.ts";
import {
  batchItems,
  batchRows,
  ledgerRows,
  openCallCache,
  openRunStore,
  useCallTables,
} from "../../src/store/index.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { ask, compatConfig } from "./support.ts";

const MIN = 60_000;
const echo = (req: { lastUserText: string }) => ({
  text: `answer to ${req.lastUserText}`,
  usage: { prompt_tokens: 1000, completion_tokens: 500 },
});

async function clientAt(
  url: string,
  cacheDir: string,
  model: Record<string, unknown> = {},
  opts: Parameters<typeof createModelClient>[1] = {},
) {
  return createModelClient(compatConfig(url, { batch_poll_seconds: 0.005, ...model }), {
    cacheDir,
    retry: { baseDelayMs: 1, maxDelayMs: 5, random: () => 0.5 },
    ...opts,
  });
}

/** One round of `n` independent calls, as the evaluator issues them. */
function evalRound(client: Awaited<ReturnType<typeof clientAt>>, texts: string[]) {
  return client.round("eval", (task) => Promise.all(texts.map((t) => task(() => client.chat("target", ask(t))))));
}

describe("fake Batch API server", () => {
  test("the openai SDK uploads a JSONL, creates a batch, sees it complete on the simulated clock and downloads the answers", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { completionMs: 10 * MIN } });
    const sdk = new OpenAI({ baseURL: server.url, apiKey: "sk-test", maxRetries: 0 });
    const lines = ["a", "b"].map((t) =>
      JSON.stringify({
        custom_id: t,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "gpt-4o-mini", messages: [{ role: "user", content: t }] },
      }),
    );
    const file = await sdk.files.create({
      file: await toFile(Buffer.from(lines.join("\n")), "in.jsonl"),
      purpose: "batch",
    });
    const created = await sdk.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect((await sdk.batches.retrieve(created.id)).status).toBe("validating");
    server.batch.advance(5 * MIN);
    const half = await sdk.batches.retrieve(created.id);
    expect({ status: half.status, counts: half.request_counts }).toEqual({
      status: "in_progress",
      counts: { total: 2, completed: 1, failed: 0 },
    });
    server.batch.advance(5 * MIN);
    const done = await sdk.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    const out = (await (await sdk.files.content(done.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out.map((l) => [l.custom_id, l.response.status_code, l.response.body.choices[0].message.content])).toEqual([
      ["a", 200, "answer to a"],
      ["b", 200, "answer to b"],
    ]);
    expect((await sdk.batches.list()).data.map((b) => b.id)).toEqual([created.id]);
    const other = await sdk.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect((await sdk.batches.cancel(other.id)).status).toBe("cancelled");
  });

  test("expiry and per-request failures go to the error file", async () => {
    await using server = await startFakeOpenAI({
      reply: echo,
      batch: {
        completionMs: 30 * MIN,
        expiresMs: 20 * MIN,
        failRequest: (r) => (r.lastUserText === "bad" ? { status: 400, message: "bad request" } : undefined),
      },
    });
    const sdk = new OpenAI({ baseURL: server.url, apiKey: "sk-test", maxRetries: 0 });
    const file = await sdk.files.create({
      file: await toFile(
        Buffer.from(
          JSON.stringify({
            custom_id: "x",
            method: "POST",
            url: "/v1/chat/completions",
            body: { model: "m", messages: [{ role: "user", content: "q" }] },
          }),
        ),
        "in.jsonl",
      ),
      purpose: "batch",
    });
    const b = await sdk.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    server.batch.advance(25 * MIN);
    const expired = await sdk.batches.retrieve(b.id);
    expect(expired.status).toBe("expired");
    const err = JSON.parse((await (await sdk.files.content(expired.error_file_id!)).text()).trim());
    expect(err).toMatchObject({ custom_id: "x", response: null, error: { code: "batch_expired" } });
  });
});

describe("model.batch through the model layer", () => {
  test("a round becomes one batch whose answers equal the live ones at half the accounted price, and land in the shared cache", async () => {
    await using server = await startFakeOpenAI({
      reply: echo,
      batch: { completionMs: 20 * MIN, advancePerPollMs: 2 * MIN },
    });
    using cache = tempDir("calls-");
    using liveCache = tempDir("calls-");
    const texts = ["q1", "q2", "q3", "q4", "q5"];
    const events: BatchEvent[] = [];
    const batched = await clientAt(server.url, cache.path, { batch: "eval" }, { onBatch: (e) => events.push(e) });
    const viaBatch = await evalRound(batched, texts);
    expect(server.batch.calls["POST /batches"]).toBe(1);
    expect(server.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(0);
    expect(batchRows(openCallCache(cache.path))).toMatchObject([{ state: "settled", status: "completed", total: 5 }]);
    expect(events.map((e) => e.type)).toContain("submitted");
    expect(events.flatMap((e) => (e.type === "status" ? [e.status] : []))).toContain("in_progress");
    const live = await clientAt(server.url, liveCache.path);
    const viaLive = await Promise.all(texts.map((t) => live.chat("target", ask(t))));
    expect(viaBatch.map((r) => r.text)).toEqual(viaLive.map((r) => r.text));
    const batchCost = batched.snapshot().cost_usd!;
    const liveCost = live.snapshot().cost_usd!;
    expect(batchCost).toBeCloseTo(liveCost / 2, 12);
    // A rerun (batch or live) of the same requests pays nothing: the answers are in the call cache.
    const again = await clientAt(server.url, cache.path);
    const rerun = await Promise.all(texts.map((t) => again.chat("target", ask(t))));
    expect(rerun.every((r) => r.cached)).toBe(true);
    expect(again.snapshot().cost_usd).toBe(0);
    for (const c of [batched, live, again]) await c.close();
  });

  test("a batch answer is written to the cache once, marked paid with its latency and price as its ledger row counts them", async () => {
    await using server = await startFakeOpenAI({
      reply: echo,
      batch: { completionMs: 20 * MIN, advancePerPollMs: 2 * MIN },
    });
    using cache = tempDir("calls-");
    using run = tempDir("run-");
    const store = openRunStore(join(run.path, "state.sqlite"));
    useCallTables(store);
    const client = await clientAt(server.url, cache.path, { batch: "eval" }, { ledgerStore: store, runId: "train" });
    await evalRound(client, ["q1", "q2", "q3"]);
    // The cache's side file (this process's, not yet applied): one answer line per call.
    const lines = readdirSync(cache.path)
      .filter((n) => n.startsWith("calls.sqlite.pending-"))
      .flatMap((n) => readFileSync(join(cache.path, n), "utf8").split("\n"))
      .filter((l) => l.startsWith('["c",'))
      .map((l) => JSON.parse(l) as [string, string, number, string]);
    expect(lines).toHaveLength(3);
    expect(new Set(lines.map((l) => l[1])).size).toBe(3);
    const rows = ledgerRows(store, "train");
    expect(rows).toHaveLength(3);
    for (const [, key, , text] of lines) {
      const paid = (JSON.parse(`${text}}`) as { paid: (string | number | null)[] }).paid;
      const row = rows.find((r) => r.cache_key === key)!;
      expect(paid.slice(3, 10)).toEqual([1, paid[4] ?? null, 1000, 500, 0, 0, row.cost_usd]);
      // Asked, then polled at least once (5 ms) before the answer: the mark is taken as the batch settles, the row after.
      expect(paid[4] as number).toBeGreaterThanOrEqual(5);
      expect(paid[4] as number).toBeLessThanOrEqual(row.latency_ms);
    }
    await client.close();
    store.close();
  });

  test("rollouts asking the same request share one line of the batch, and the round still completes", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { advancePerPollMs: MIN } });
    using cache = tempDir("calls-");
    const client = await clientAt(server.url, cache.path, { batch: "eval" });
    const out = await evalRound(client, ["a", "a", "b", "a"]);
    expect(out.map((r) => r.text)).toEqual(["answer to a", "answer to a", "answer to b", "answer to a"]);
    expect(server.batch.batches.map((b) => b.lines.length)).toEqual([2]);
    await client.close();
  });

  test("live answers serve a later batch run from the cache: nothing is submitted", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { advancePerPollMs: MIN } });
    using cache = tempDir("calls-");
    const live = await clientAt(server.url, cache.path);
    await Promise.all(["a", "b"].map((t) => live.chat("target", ask(t))));
    await live.close();
    const batched = await clientAt(server.url, cache.path, { batch: "eval" });
    const out = await evalRound(batched, ["a", "b"]);
    expect(out.every((r) => r.cached)).toBe(true);
    expect(server.batch.uploads).toBe(0);
    expect(batched.snapshot().calls - batched.snapshot().cached).toBe(0);
    await batched.close();
  });

  test("a pending batch of a closed (killed) client is re-attached by the next one, never resubmitted", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { completionMs: 30 * MIN } });
    using cache = tempDir("calls-");
    const first = await clientAt(server.url, cache.path, { batch: "eval" });
    const pending = evalRound(first, ["a", "b", "c"]);
    const store = openCallCache(cache.path);
    while (batchRows(store).length === 0) await Bun.sleep(5);
    await first.close();
    await expect(pending).rejects.toThrow(/closed while a batch was pending/);
    expect(batchRows(store)).toMatchObject([{ id: "batch_1", state: "pending", total: 3 }]);
    server.batch.advance(30 * MIN);
    const second = await clientAt(server.url, cache.path, { batch: "eval" });
    const out = await evalRound(second, ["a", "b", "c"]);
    expect(out.map((r) => r.text)).toEqual(["answer to a", "answer to b", "answer to c"]);
    expect(server.batch.calls["POST /batches"]).toBe(1);
    expect(server.batch.uploads).toBe(1);
    expect(batchRows(store)[0]!.state).toBe("settled");
    await second.close();
  });

  test("a batch created by a process that died before recording it is found by its requests and adopted, not submitted again", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { completionMs: 30 * MIN } });
    using cache = tempDir("calls-");
    const first = await clientAt(server.url, cache.path, { batch: "eval" });
    const pending = evalRound(first, ["a", "b"]);
    const store = openCallCache(cache.path);
    while (batchRows(store).length === 0) await Bun.sleep(5);
    await first.close();
    await pending.catch(() => undefined);
    // The commit never happened, as far as the next process can tell.
    store.db.exec("DELETE FROM call_batch_items; DELETE FROM call_batches;");
    server.batch.advance(30 * MIN);
    const second = await clientAt(server.url, cache.path, { batch: "eval" });
    const out = await evalRound(second, ["b", "a"]);
    expect(out.map((r) => r.text)).toEqual(["answer to b", "answer to a"]);
    expect(server.batch.calls["POST /batches"]).toBe(1);
    expect(server.batch.uploads).toBe(1);
    expect(batchRows(store)).toMatchObject([{ id: "batch_1", state: "settled" }]);
    await second.close();
  });

  test("expired entries are resubmitted once and then answered", async () => {
    await using server = await startFakeOpenAI({
      reply: echo,
      batch: { completionMs: (i) => (i === 0 ? 30 * MIN : 5 * MIN), expiresMs: 20 * MIN, advancePerPollMs: 10 * MIN },
    });
    using cache = tempDir("calls-");
    const client = await clientAt(server.url, cache.path, { batch: "eval" });
    const out = await evalRound(client, ["a", "b"]);
    expect(out.map((r) => r.text)).toEqual(["answer to a", "answer to b"]);
    expect(server.batch.batches.map((b) => b.status)).toEqual(["expired", "completed"]);
    const store = openCallCache(cache.path);
    expect(batchItems(store, "batch_1").map((i) => [i.state, i.attempt])).toEqual([
      ["failed", 1],
      ["failed", 1],
    ]);
    expect(batchItems(store, "batch_2").map((i) => [i.state, i.attempt])).toEqual([
      ["answered", 2],
      ["answered", 2],
    ]);
    await client.close();
  });

  test("entries that fail twice are asked live under batch_fallback=live, and stop the run under stop", async () => {
    const failing = {
      reply: echo,
      batch: {
        advancePerPollMs: MIN,
        failRequest: (r: { lastUserText: string }) =>
          r.lastUserText === "bad" ? { status: 500, message: "server error" } : undefined,
      },
    };
    await using server = await startFakeOpenAI(failing);
    using cache = tempDir("calls-");
    const events: BatchEvent[] = [];
    const client = await clientAt(server.url, cache.path, { batch: "eval" }, { onBatch: (e) => events.push(e) });
    const out = await evalRound(client, ["ok", "bad"]);
    expect(out.map((r) => r.text)).toEqual(["answer to ok", "answer to bad"]);
    expect(server.batch.batches.map((b) => b.lines.length)).toEqual([2, 1]);
    // Typed events: the failed request is resubmitted once, given up on in the second batch, then asked live.
    const faults = events.filter((e) => e.type === "resubmit" || e.type === "fallback" || e.type === "live");
    expect(faults).toMatchObject([
      { type: "resubmit", id: "batch_1", reason: expect.stringContaining("server error") },
      { type: "fallback", id: "batch_2", reason: expect.stringContaining("server error") },
      { type: "live", submissions: 2 },
    ]);
    const [resubmit, fallback] = faults as Extract<BatchEvent, { type: "resubmit" | "fallback" }>[];
    expect(fallback!.key).toBe(resubmit!.key);
    expect(faults.map(batchText)).toEqual([
      `request ${resubmit!.key.slice(0, 12)} of batch batch_1: ${resubmit!.reason}; resubmitting it once`,
      `request ${fallback!.key.slice(0, 12)} of batch batch_2: ${fallback!.reason}`,
      "a request got no answer from 2 batch submissions; asking it live (model.batch_fallback=live)",
    ]);
    expect(server.requests.filter((r) => r.path.endsWith("/chat/completions")).map((r) => r.lastUserText)).toEqual([
      "bad",
    ]);
    await client.close();

    await using strict = await startFakeOpenAI(failing);
    using cache2 = tempDir("calls-");
    const stopping = await clientAt(strict.url, cache2.path, { batch: "eval", batch_fallback: "stop" });
    await expect(evalRound(stopping, ["ok", "bad"])).rejects.toBeInstanceOf(NoAnswerError);
    expect(strict.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(0);
    await stopping.close();
  });

  test("a cost cap refuses a batch whose worst case would pass it, before anything is uploaded", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { advancePerPollMs: MIN } });
    using cache = tempDir("calls-");
    const client = await clientAt(server.url, cache.path, { batch: "eval", max_cost_usd: 0.0001 });
    const err = await evalRound(client, ["a", "b", "c"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect((err as BudgetError).message).toMatch(/a batch of 3 requests could cost up to \$/);
    // The cap's facts are typed: dollars spent of the cap, met by the batch's worst case.
    expect((err as BudgetError).data).toMatchObject({
      limit: "cost",
      spent: 0,
      cap: 0.0001,
      at: { kind: "batch", requests: 3, worst_usd: expect.any(Number) },
    });
    expect(server.batch.uploads).toBe(0);
    await client.close();
  });

  test("an endpoint without a Batch API (404) is called live with a warning, or refused under batch_required", async () => {
    await using server = await startFakeOpenAI({ reply: echo });
    using cache = tempDir("calls-");
    const events: BatchEvent[] = [];
    const client = await clientAt(server.url, cache.path, { batch: "eval" }, { onBatch: (e) => events.push(e) });
    const out = await evalRound(client, ["a", "b"]);
    expect(out.map((r) => r.text)).toEqual(["answer to a", "answer to b"]);
    const unsupported = events.filter((e) => e.type === "unsupported");
    expect(unsupported).toEqual([
      { type: "unsupported", backend: "openai_compatible", endpoint: expect.any(String), requests: 2 },
    ]);
    expect(batchText(unsupported[0]!)).toBe(
      `openai_compatible at ${(unsupported[0] as { endpoint: string }).endpoint} has no Batch API (HTTP 404 on its files or batches route): \
calling it live instead (set model.batch_required=true to refuse)`,
    );
    await client.close();
    using cache2 = tempDir("calls-");
    const strict = await clientAt(server.url, cache2.path, { batch: "eval", batch_required: true });
    await expect(evalRound(strict, ["c"])).rejects.toBeInstanceOf(ConfigError);
    await strict.close();
  });

  test("Azure OpenAI: the batch goes to /openai/files and /openai/batches with api-version, its lines to /chat/completions of the GlobalBatch deployment", async () => {
    await using server = await startFakeOpenAI({ reply: echo, batch: { advancePerPollMs: MIN } });
    using cache = tempDir("calls-");
    const config = {
      model: {
        backend: "azure_openai",
        optimizer: "gpt-4o-mini",
        target: "my-batch-deployment",
        azure_openai_endpoint: server.origin,
        azure_openai_auth_mode: "api_key",
        azure_openai_api_key: "azure-secret-key-000111",
        batch: "eval",
        batch_poll_seconds: 0.005,
      },
    };
    const client = await createModelClient(config, { cacheDir: cache.path });
    const out = await client.round("eval", (task) =>
      Promise.all(["a", "b"].map((t) => task(() => client.chat("target", ask(t))))),
    );
    expect(out.map((r) => r.text)).toEqual(["answer to a", "answer to b"]);
    const b = server.batch.batches[0]!;
    expect(b.endpoint).toBe("/chat/completions");
    expect(b.lines.map((l) => [l.url, l.body.model])).toEqual([
      ["/chat/completions", "my-batch-deployment"],
      ["/chat/completions", "my-batch-deployment"],
    ]);
    expect(server.requests.filter((r) => r.path.endsWith("/chat/completions"))).toHaveLength(0);
    await client.close();
  });

  test("a backend without a Batch API refuses model.batch_required at start-up (exit 2)", async () => {
    using cache = tempDir("calls-");
    const config = {
      model: { backend: "sim", optimizer: "sim", target: "sim", batch: "eval", batch_required: true },
      env: { workers: 2 },
      gradient: {},
      train: { seed: 42 },
    };
    const err = await createModelClient(config, { cacheDir: cache.path }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as ConfigError).message).toMatch(/model.batch=eval: the optimizer backend sim has no Batch API/);
  });
});

describe("the batch column of the pricing table", () => {
  test("built-in OpenAI models cost half live through a batch (sourced); others pay their live price unless given a batch price", () => {
    const table = new PriceTable({
      "my-model": { input_per_mtok: 1, output_per_mtok: 4 },
      "my-batched": { input_per_mtok: 1, output_per_mtok: 4, batch_input_per_mtok: 0.2, batch_output_per_mtok: 0.8 },
    });
    const usage = { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedTokens: 0, reasoningTokens: 0 };
    expect(table.cost("gpt-4o-mini", usage, { batch: true })).toBeCloseTo(table.cost("gpt-4o-mini", usage)! / 2, 12);
    expect(builtinPrices()["gpt-4o-mini"]!.batch_source).toMatch(/Batch API.*50 ?%.*checked 2026-12-03/);
    expect(builtinPrices()["claude-sonnet-5"]!.batch_input_per_mtok).toBeUndefined();
    expect(table.cost("my-model", usage, { batch: true })).toBe(5);
    expect(table.cost("my-batched", usage, { batch: true })).toBeCloseTo(1, 12);
  });

  test("train --dry-run shows the cost with model.batch beside the live cost, and the rounds that wait on a batch", async () => {
    const r = await runCli(
      [
        "train",
        "--config",
        "quickstart",
        "--dry-run",
        "--json",
        ...[
          "model.backend=openai_compatible",
          "model.openai_compatible_base_url=http://127.0.0.1:9/v1",
          "model.target=gpt-4o-mini",
          "model.optimizer=gpt-4o-mini",
          "model.batch=eval",
        ].flatMap((s) => ["--set", s]),
      ],
      { env: { OPENAI_COMPATIBLE_API_KEY: "sk-dry" } },
    );
    expect(r.code).toBe(0);
    const est = JSON.parse(r.stdout).estimated_cost_usd;
    expect(est.with_batch).toMatchObject({
      modes: { optimizer: "eval", target: "eval" },
      rounds_waiting_on_a_batch: 1,
      optimizer: est.optimizer,
    });
    expect(est.with_batch.target).toBeLessThan(est.target);
    expect(est.with_batch.calls_through_batch).toBe(JSON.parse(r.stdout).predicted_calls.target.final_test);
  });
});
