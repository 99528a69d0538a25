import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import tasks from "../../src/benchmarks/tasks/index.ts";
import { StoreError } from "../../src/lib/index.ts";
import {
  insertLedgerRow,
  ledgerRows,
  openStore,
  setRunMeta,
  openRunStore,
  useCallTables,
} from "../../src/store/index.ts";
import { compatClient } from "../backends/support.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

/** Make every further write fail with SQLITE_FULL, as a full disk does: cap the file, then fill every free page. */
function fillUp(store: { db: { query(sql: string): { get(): unknown; run(...a: unknown[]): unknown } } }): void {
  store.db.query("CREATE TABLE IF NOT EXISTS filler (x BLOB)").run();
  const { page_count } = store.db.query("PRAGMA page_count").get() as { page_count: number };
  store.db.query(`PRAGMA max_page_count = ${page_count + 1}`).get();
  for (let size = 4096; size >= 1; size = Math.floor(size / 2)) {
    for (;;) {
      try {
        store.db.query("INSERT INTO filler VALUES (zeroblob(?))").run(size);
      } catch {
        break;
      }
    }
  }
}

const ROW = {
  run_id: "r",
  at: 1,
  role: "target",
  stage: "rollout",
  backend: "b",
  endpoint: "e",
  model: "m",
  cache_key: null,
  cached: false,
  attempts: 1,
  status: "ok" as const,
  prompt_tokens: 1,
  completion_tokens: 1,
  cached_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: null,
  latency_ms: 1,
  error: "x".repeat(20_000),
};

describe("a full disk (issue 12)", () => {
  test("a failed store write is one StoreError naming the file", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.sqlite");
    const store = openRunStore(path);
    useCallTables(store);
    fillUp(store);
    // A ledger row is on disk in the store's side file at once and goes into the table with its
    // batch (here: when the rows are read): that is where the full file says so.
    const ledger = () => {
      insertLedgerRow(store, ROW);
      ledgerRows(store, "r");
    };
    for (const write of [ledger, () => setRunMeta(store, { big: "y".repeat(50_000) })]) {
      let err: unknown;
      try {
        write();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StoreError);
      expect((err as Error).message).toBe(`cannot write ${path}: no space left on device (SQLITE_FULL)`);
    }
    store.close();
  });

  test("a ledger batch that cannot be written stops the run with the file named; the rows are kept for later", async () => {
    await using server = await startFakeOpenAI({ reply: "<answer>144</answer>" });
    using dir = tempDir();
    const store = openStore(join(dir.path, "state.sqlite"), { migrations: [] });
    useCallTables(store);
    await using client = await compatClient(server.url, {}, { ledgerStore: store, runId: "train", noCache: true });
    const ctx = {
      model: client,
      env: {
        split_mode: "ratio",
        split_seed: 42,
        data_path: join(FIXTURES, "tasks", "my_tasks.jsonl"),
        evaluator: "exact",
        exec_timeout: 60,
        limit: 0,
      },
      configDir: dir.path,
      workDir: dir.path,
      target: { model: "gpt-4o-mini", maxTokens: 512 },
      seed: 42,
    };
    const splits = await tasks.loadSplits(ctx);
    const t1 = [...splits.train, ...splits.val, ...splits.test].find((t) => t.id === "t1")!;
    expect((await tasks.rollout(t1, "", ctx, 0)).hard).toBe(1);
    // Fill the file up with ledger rows of a big error text, then cap it: the next ledger insert fails.
    fillUp(store);
    // The rollout's call completed and its row is on disk (the side file): its score is real.
    expect((await tasks.rollout(t1, "", ctx, 0)).hard).toBe(1);
    insertLedgerRow(store, { ...ROW, run_id: "train" }); // a row too big for the pages left
    const err = (() => {
      try {
        ledgerRows(store, "train");
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).message).toContain("no space left on device (SQLITE_FULL)");
    // Space again: the rows that waited are applied, the rollout's among them.
    store.db.query("DROP TABLE filler").run();
    store.db.query("PRAGMA max_page_count = 1073741823").get();
    expect(ledgerRows(store, "train").filter((r) => r.stage === "rollout" && r.error === null).length).toBeGreaterThan(
      0,
    );
    store.close();
  });
});
