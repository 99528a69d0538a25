import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient, type SkilloptModelClient } from "../../src/backends/index.ts";
import { ledgerRows, openRunStore, type Store, useCallTables } from "../../src/store/index.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { type FakeOpenAIServer, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { ask, compatConfig } from "./support.ts";

const PROMPTS = ["p0", "p1", "p2", "p3", "p4"];

/**
 * A run's process with the real client and stores (`config`, this cache and run store) that runs
 * `body` with CallLedger.record wrapped by `wrap` (code given `rec`, `at`, the real `record` and a
 * `paid` counter), which places a kill -9; the caller waits for it.
 */
async function killedChild(o: { config: unknown; cacheDir: string; state: string; wrap: string; body: string }) {
  using scratch = tempDir("child-");
  const script = join(scratch.path, "run.ts");
  writeFileSync(
    script,
    `import { createModelClient } from ${JSON.stringify(join(REPO_ROOT, "src/backends/index.ts"))};
     import { CallLedger } from ${JSON.stringify(join(REPO_ROOT, "src/backends/ledger.ts"))};
     import { openRunStore, useCallTables } from ${JSON.stringify(join(REPO_ROOT, "src/store/index.ts"))};
     const record = CallLedger.prototype.record;
     let paid = 0;
     CallLedger.prototype.record = function (rec, at) {
       ${o.wrap}
     };
     const store = openRunStore(${JSON.stringify(o.state)});
     useCallTables(store);
     const client = await createModelClient(${JSON.stringify(o.config)}, {
       cacheDir: ${JSON.stringify(o.cacheDir)}, ledgerStore: store, runId: "train",
     });
     ${o.body}`,
  );
  const child = Bun.spawn([process.execPath, script], { stderr: "pipe", stdout: "pipe" });
  await child.exited;
  expect(child.signalCode, await new Response(child.stderr).text()).toBe("SIGKILL");
}

/**
 * A run's process that asks PROMPTS in order and kills itself with SIGKILL at the third paid
 * call's ledger row: `before` it is written (the answer is already in the cache's side file: the
 * kill between the two writes), or `after` it. The kill is placed by wrapping CallLedger.record in
 * the child only; the client, the stores and the server are the real ones.
 */
function killedRun(server: FakeOpenAIServer, cacheDir: string, state: string, when: "before" | "after") {
  return killedChild({
    config: compatConfig(server.url),
    cacheDir,
    state,
    wrap: `const third = !rec.cached && ++paid === 3;
       if (third && ${JSON.stringify(when)} === "before") process.kill(process.pid, "SIGKILL");
       record.call(this, rec, at);
       if (third) process.kill(process.pid, "SIGKILL");`,
    body: `for (const p of ${JSON.stringify(PROMPTS)})
       await client.chat("target", { stage: "rollout", messages: [{ role: "user", content: p }] });`,
  });
}

async function runClient(url: string, cacheDir: string, store: Store): Promise<SkilloptModelClient> {
  return createModelClient(compatConfig(url), { cacheDir, ledgerStore: store, runId: "train" });
}

async function askAll(client: SkilloptModelClient): Promise<void> {
  for (const p of PROMPTS) await client.chat("target", ask(p));
}

function openLedgerStore(state: string): Store {
  const store = openRunStore(state);
  useCallTables(store);
  return store;
}

const reply = (req: { lastUserText: string }) => ({
  text: `answer to ${req.lastUserText}`,
  usage: { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 100, reasoning_tokens: 50 },
});

describe("a kill -9 between a call's answer (call cache) and its ledger row (run store)", () => {
  for (const when of ["before", "after"] as const) {
    test(`killed ${when} the third paid call's ledger row: the resumed run counts 5 paid calls and pays none twice`, async () => {
      await using server = await startFakeOpenAI({ reply });
      using dir = tempDir("killed-ledger-");
      // The same calls without a kill: what the ledger must come to.
      const refStore = openLedgerStore(join(dir.path, "ref", "state.sqlite"));
      const ref = await runClient(server.url, join(dir.path, "ref-cache"), refStore);
      await askAll(ref);
      await askAll(ref);
      const expected = ref.ledger.summary();
      await ref.close();
      refStore.close();
      expect(expected).toMatchObject({ paid: 5, cached: 5 });
      server.resetCounters();
      const before = server.requests.length;

      const cache = join(dir.path, "cache");
      const state = join(dir.path, "run", "state.sqlite");
      await killedRun(server, cache, state, when);
      expect(server.requests.length - before).toBe(3);

      // The resume: its client asks the same calls (and again, as the reference did).
      const resumedAt = Date.now();
      const store = openLedgerStore(state);
      const resumed = await runClient(server.url, cache, store);
      await askAll(resumed);
      await askAll(resumed);
      // Never paid twice: the three answered before the kill came from the cache.
      expect(server.requests.length - before).toBe(5);
      const got = resumed.ledger.summary();
      expect(got.paid).toBe(expected.paid);
      expect(got.cost_usd).toBeCloseTo(expected.cost_usd, 12);
      expect(got.tokens).toEqual(expected.tokens);
      expect(got.attempts).toBe(expected.attempts);
      await resumed.close();
      // Persisted: the run's rows say each prompt was paid once, also read by a later process.
      const paidRows = ledgerRows(store, "train").filter((r) => !r.cached);
      expect(paidRows).toHaveLength(5);
      expect(new Set(paidRows.map((r) => r.cache_key)).size).toBe(5);
      // The three paid before the kill keep the time they were paid (the recovered one too).
      expect(paidRows.filter((r) => r.at < resumedAt)).toHaveLength(3);
      const again = await runClient(server.url, cache, store);
      await askAll(again);
      expect(again.ledger.summary().paid).toBe(5);
      await again.close();
      store.close();

      // Another run on the same cache is served every answer and pays for none (the marks are not its).
      const otherStore = openLedgerStore(join(dir.path, "other", "state.sqlite"));
      const other = await runClient(server.url, cache, otherStore);
      await askAll(other);
      expect(other.ledger.summary()).toMatchObject({ paid: 0, cached: 5 });
      await other.close();
      otherStore.close();
      expect(server.requests.length - before).toBe(5);
    });
  }
});

const MIN = 60_000;
const BATCH = { batch: "eval", batch_poll_seconds: 0.005 };

/** One evaluation round of PROMPTS through a provider batch, as the evaluator issues it. */
function batchRound(client: SkilloptModelClient) {
  return client.round("eval", (task) => Promise.all(PROMPTS.map((p) => task(() => client.chat("target", ask(p))))));
}

describe("a kill -9 after a batch's answers are cached and before their ledger rows", () => {
  test("the resumed round counts the batch's five calls as paid, at the batch price, with their latency, and submits nothing", async () => {
    await using server = await startFakeOpenAI({ reply, batch: { completionMs: 20 * MIN, advancePerPollMs: 2 * MIN } });
    using dir = tempDir("killed-batch-");
    const client = (cacheDir: string, store: Store) =>
      createModelClient(compatConfig(server.url, BATCH), { cacheDir, ledgerStore: store, runId: "train" });
    const refStore = openLedgerStore(join(dir.path, "ref", "state.sqlite"));
    const ref = await client(join(dir.path, "ref-cache"), refStore);
    await batchRound(ref);
    const expected = ref.ledger.summary();
    await ref.close();
    refStore.close();
    expect(expected).toMatchObject({ paid: 5, cached: 0 });

    // The child: the same round, killed just before the second paid row (the batcher cached all
    // five answers as it settled the batch; the first caller's row is written).
    const cache = join(dir.path, "cache");
    const state = join(dir.path, "run", "state.sqlite");
    await killedChild({
      config: compatConfig(server.url, BATCH),
      cacheDir: cache,
      state,
      wrap: `if (!rec.cached && ++paid === 2) process.kill(process.pid, "SIGKILL");
       record.call(this, rec, at);`,
      body: `await client.round("eval", (task) => Promise.all(${JSON.stringify(PROMPTS)}.map((p) =>
       task(() => client.chat("target", { stage: "rollout", messages: [{ role: "user", content: p }] })))));`,
    });
    const submitted = server.batch.calls["POST /batches"];

    const store = openLedgerStore(state);
    const resumed = await client(cache, store);
    await batchRound(resumed);
    expect(server.batch.calls["POST /batches"]).toBe(submitted);
    const got = resumed.ledger.summary();
    expect(got.paid).toBe(5);
    expect(got.cost_usd).toBeCloseTo(expected.cost_usd, 12);
    expect(got.tokens).toEqual(expected.tokens);
    await resumed.close();
    const paidRows = ledgerRows(store, "train").filter((r) => !r.cached);
    expect(new Set(paidRows.map((r) => r.cache_key)).size).toBe(5);
    // Each recovered row has the latency its call had in the killed process: asked, then polled.
    for (const r of paidRows) expect(r.latency_ms).toBeGreaterThanOrEqual(5);
    store.close();
  });
});
