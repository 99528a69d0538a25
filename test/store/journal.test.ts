import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  getCachedCall,
  insertLedgerRow,
  ledgerRows,
  openCallCache,
  openRunStore,
  putCachedCall,
  useCallTables,
} from "../../src/store/index.ts";
import { CALLS_MIGRATIONS, CALLS_NAMESPACE } from "../../src/store/calls.ts";
import { openStore } from "../../src/store/db.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const ROW = {
  run_id: "r",
  at: 1_700_000_000_000,
  role: "target",
  stage: "rollout",
  backend: "sim",
  endpoint: "sim",
  model: "m",
  cache_key: "k1",
  cached: false,
  attempts: 1,
  status: "ok" as const,
  prompt_tokens: 10,
  completion_tokens: 2,
  cached_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0.5,
  latency_ms: 7,
  error: null,
};

// Issue 31 §2: a call's cache answer and ledger row reach the disk at once (a side file, one
// write) and the database in batches; a kill -9 before a batch loses none of them.
describe("pending call rows", () => {
  test("a process killed with rows not yet in its databases: the next open applies them, once", () => {
    using dir = tempDir();
    const script = join(dir.path, "writer.ts");
    writeFileSync(
      script,
      `import { insertLedgerRow, openCallCache, openRunStore, putCachedCall, useCallTables } from ${JSON.stringify(join(REPO_ROOT, "src/store/index.ts"))};
       const cache = openCallCache(process.argv[2]);
       const run = openRunStore(process.argv[3]);
       useCallTables(run);
       for (let i = 0; i < 5; i++) {
         putCachedCall(cache, { key: "k" + i, backend: "sim", endpoint: "sim", model: "m", response: JSON.stringify({ text: "answer " + i }) });
         insertLedgerRow(run, { ...${JSON.stringify(ROW)}, cache_key: "k" + i, at: ${ROW.at} + i });
       }
       process.kill(process.pid, "SIGKILL");`,
    );
    const state = join(dir.path, "run", "state.sqlite");
    const r = Bun.spawnSync([process.execPath, script, join(dir.path, "cache"), state], { stderr: "pipe" });
    expect(r.signalCode).toBe("SIGKILL");
    expect(readdirSync(join(dir.path, "cache")).filter((n) => n.includes(".pending-")).length).toBe(1);
    const cache = openCallCache(join(dir.path, "cache"));
    for (let i = 0; i < 5; i++) expect(getCachedCall(cache, `k${i}`)).toBe(JSON.stringify({ text: `answer ${i}` }));
    expect(readdirSync(join(dir.path, "cache")).filter((n) => n.includes(".pending-"))).toEqual([]);
    cache.close();
    const run = openRunStore(state);
    useCallTables(run);
    expect(ledgerRows(run, "r").map((x) => x.cache_key)).toEqual(["k0", "k1", "k2", "k3", "k4"]);
    run.close();
    expect(readdirSync(join(dir.path, "run")).filter((n) => n.includes(".pending-"))).toEqual([]);
  });

  test("a side file whose rows were applied before the kill emptied it adds no ledger row twice", () => {
    using dir = tempDir();
    const state = join(dir.path, "state.sqlite");
    const run = openRunStore(state);
    useCallTables(run);
    insertLedgerRow(run, ROW);
    expect(ledgerRows(run, "r")).toHaveLength(1); // applied
    run.close();
    // What a process killed between its batch's commit and the emptying of its side file leaves,
    // in the lines of earlier versions (objects; rows are now arrays of values, read the same).
    const dead = 2 ** 22 + 12_345; // above the kernel's pid limit: no live process
    writeFileSync(
      `${state}.pending-${dead}-1`,
      `${JSON.stringify({ t: "ledger", row: { ...ROW, cached: 0 } })}\n${JSON.stringify({ t: "ledger", row: { ...ROW, cached: 0, at: ROW.at + 1 } })}\n{"t":"led`,
    );
    const again = openRunStore(state);
    useCallTables(again);
    expect(ledgerRows(again, "r").map((x) => x.at)).toEqual([ROW.at, ROW.at + 1]);
    again.close();
  });
});

// Issue 31 §2: answers are stored compactly (call_answers: 32-byte keys, origins once, long
// answers deflated); a cache written by an earlier version (call_cache) reads the same.
describe("compact cache answers", () => {
  const ORIGIN = { backend: "sim", endpoint: "sim:target", model: "skillopt-sim" };
  const hexKey = (i: number) => i.toString(16).padStart(64, "0");

  test("a cache an earlier version wrote still answers, after the migration, beside new answers", () => {
    using dir = tempDir();
    const file = join(dir.path, "calls.sqlite");
    // The schema as the version before call_answers left it, with one of its rows.
    const old = openStore(file, { migrations: CALLS_MIGRATIONS.slice(0, 4), namespace: CALLS_NAMESPACE });
    old.db
      .query("INSERT INTO call_cache (key, backend, endpoint, model, response, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(hexKey(1), "sim", "sim:target", "skillopt-sim", '{"text":"old"}', 1);
    old.close();
    const cache = openCallCache(dir.path);
    expect(getCachedCall(cache, hexKey(1))).toBe('{"text":"old"}');
    putCachedCall(cache, { key: hexKey(2), ...ORIGIN, response: '{"text":"new"}' });
    putCachedCall(cache, { key: "not-a-hash", ...ORIGIN, response: '{"text":"other"}' });
    cache.close();
    const again = openCallCache(dir.path);
    expect([hexKey(1), hexKey(2), "not-a-hash", hexKey(3)].map((k) => getCachedCall(again, k))).toEqual([
      '{"text":"old"}',
      '{"text":"new"}',
      '{"text":"other"}',
      undefined,
    ]);
    const count = (sql: string) => (again.db.query(sql).get() as { n: number }).n;
    expect(count("SELECT count(*) AS n FROM call_answers")).toBe(1);
    expect(count("SELECT count(*) AS n FROM call_cache")).toBe(2); // the old row and the key that is no hash
    again.close();
  });

  test("a long answer is stored deflated and reads back exactly; keys sharing a tag stay apart", () => {
    using dir = tempDir();
    const cache = openCallCache(dir.path);
    const long = JSON.stringify({ text: "edit the rule about dates ".repeat(40), finishReason: "stop" });
    // Same first 6 bytes (the index's tag), different keys.
    const a = `abcdef123456${"0".repeat(52)}`;
    const b = `abcdef123456${"1".repeat(52)}`;
    putCachedCall(cache, { key: a, ...ORIGIN, response: long });
    putCachedCall(cache, { key: b, ...ORIGIN, response: '{"text":"b"}' });
    cache.close();
    const again = openCallCache(dir.path);
    expect(getCachedCall(again, a)).toBe(long);
    expect(getCachedCall(again, b)).toBe('{"text":"b"}');
    const stored = again.db.query("SELECT response FROM call_answers WHERE key = ?").get(Buffer.from(a, "hex")) as {
      response: unknown;
    };
    expect(stored.response).toBeInstanceOf(Uint8Array);
    expect((stored.response as Uint8Array).length).toBeLessThan(long.length / 4);
    expect(again.db.query("SELECT backend, endpoint, model FROM call_origins").all()).toEqual([ORIGIN]);
    again.close();
  });

  test("an answer naming its origin's model is kept without it and reads back exactly, from the side file too", () => {
    using dir = tempDir();
    const same = JSON.stringify({ text: "7", finishReason: "stop", toolCalls: [], model: ORIGIN.model });
    const other = JSON.stringify({ text: "8", finishReason: "stop", toolCalls: [], model: "skillopt-sim-2024" });
    const cache = openCallCache(dir.path);
    putCachedCall(cache, { key: hexKey(1), ...ORIGIN, response: same });
    putCachedCall(cache, { key: hexKey(2), ...ORIGIN, response: other });
    const side = readdirSync(dir.path).find((n) => n.includes(".pending-"))!;
    const lines = readFileSync(join(dir.path, side), "utf8").trim().split("\n");
    expect(lines[1]).not.toContain(ORIGIN.model);
    // Read back from the side file (as a replay does) and from the table.
    const dead = 2 ** 22 + 12_348;
    writeFileSync(join(dir.path, `calls.sqlite.pending-${dead}-1`), `${lines.join("\n")}\n`);
    cache.close();
    const again = openCallCache(dir.path);
    expect([getCachedCall(again, hexKey(1)), getCachedCall(again, hexKey(2))]).toEqual([same, other]);
    expect(again.db.query("SELECT elided, length(response) AS n FROM call_answers ORDER BY id").all()).toEqual([
      { elided: 1, n: same.length - `,"model":${JSON.stringify(ORIGIN.model)}}`.length },
      { elided: 0, n: other.length },
    ]);
    again.close();
    const fresh = join(dir.path, "fresh");
    mkdirSync(fresh);
    writeFileSync(join(fresh, `calls.sqlite.pending-${dead}-1`), `${lines.join("\n")}\n`);
    const replayed = openCallCache(fresh);
    expect([getCachedCall(replayed, hexKey(1)), getCachedCall(replayed, hexKey(2))]).toEqual([same, other]);
    replayed.close();
  });

  test("a side file whose answers were applied before the kill emptied it adds none twice", () => {
    using dir = tempDir();
    const cache = openCallCache(dir.path);
    putCachedCall(cache, { key: hexKey(7), ...ORIGIN, response: '{"text":"first"}' }, 5);
    cache.close();
    const dead = 2 ** 22 + 12_346; // above the kernel's pid limit: no live process
    const line = (key: string, text: string) =>
      `${JSON.stringify(["c", key, ORIGIN.backend, ORIGIN.endpoint, ORIGIN.model, `{"text":"${text}"}`, 6])}\n`;
    writeFileSync(
      join(dir.path, `calls.sqlite.pending-${dead}-1`),
      `${line(hexKey(7), "second")}${line(hexKey(8), "eight")}["c","${hexKey(9)}","si`,
    );
    const again = openCallCache(dir.path);
    expect([7, 8, 9].map((i) => getCachedCall(again, hexKey(i)))).toEqual([
      '{"text":"first"}', // first writer wins
      '{"text":"eight"}',
      undefined, // the torn line
    ]);
    expect((again.db.query("SELECT count(*) AS n FROM call_answers").get() as { n: number }).n).toBe(2);
    expect(readdirSync(dir.path).filter((n) => n.includes(".pending-"))).toEqual([]);
    again.close();
  });
});

describe("side file lines", () => {
  test("applied rows stay in the side file; a process killed after more rows adds each once on the next open", () => {
    using dir = tempDir();
    const script = join(dir.path, "writer.ts");
    const hex = (i: number) => i.toString(16).padStart(64, "a");
    writeFileSync(
      script,
      `import { insertLedgerRow, ledgerRows, openCallCache, openRunStore, putCachedCall, useCallTables } from ${JSON.stringify(join(REPO_ROOT, "src/store/index.ts"))};
       import { flushPending } from ${JSON.stringify(join(REPO_ROOT, "src/store/journal.ts"))};
       const cache = openCallCache(process.argv[2]);
       const run = openRunStore(process.argv[3]);
       useCallTables(run);
       const hex = ${hex.toString()};
       for (let i = 0; i < 6; i++) {
         putCachedCall(cache, { key: hex(i), backend: "sim", endpoint: "sim:" + (i % 2), model: "m", response: JSON.stringify({ text: "answer " + i }) });
         insertLedgerRow(run, { ...${JSON.stringify(ROW)}, endpoint: "sim:" + (i % 2), cache_key: hex(i), at: ${ROW.at} + i });
         if (i === 2) { flushPending(cache); ledgerRows(run, "r"); }
       }
       process.kill(process.pid, "SIGKILL");`,
    );
    const state = join(dir.path, "run", "state.sqlite");
    const r = Bun.spawnSync([process.execPath, script, join(dir.path, "cache"), state], { stderr: "pipe" });
    expect(r.signalCode).toBe("SIGKILL");
    const side = readdirSync(join(dir.path, "cache")).find((n) => n.includes(".pending-"))!;
    const lines = readFileSync(join(dir.path, "cache", side), "utf8")
      .trim()
      .split("\n");
    // Two origins declared once each, six answers (three of them applied before the kill).
    expect(lines.map((l) => (JSON.parse(l) as unknown[])[0])).toEqual(["o", "c", "o", "c", "c", "c", "c", "c"]);
    const cache = openCallCache(join(dir.path, "cache"));
    for (let i = 0; i < 6; i++) expect(getCachedCall(cache, hex(i))).toBe(JSON.stringify({ text: `answer ${i}` }));
    expect((cache.db.query("SELECT count(*) AS n FROM call_answers").get() as { n: number }).n).toBe(6);
    expect(cache.db.query("SELECT endpoint FROM call_origins ORDER BY endpoint").all()).toEqual([
      { endpoint: "sim:0" },
      { endpoint: "sim:1" },
    ]);
    cache.close();
    const run = openRunStore(state);
    useCallTables(run);
    const rows = ledgerRows(run, "r");
    expect(rows.map((x) => [x.cache_key, x.endpoint, x.model])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [hex(i), `sim:${i % 2}`, "m"]),
    );
    expect(rows[0]).toEqual({ ...ROW, endpoint: "sim:0", cache_key: hex(0) });
    run.close();
  });

  test("lines of the previous array form (backend, endpoint and model in each) still apply", () => {
    using dir = tempDir();
    const dead = 2 ** 22 + 12_347; // above the kernel's pid limit: no live process
    const key = "b".repeat(64);
    writeFileSync(
      join(dir.path, `calls.sqlite.pending-${dead}-1`),
      `${JSON.stringify(["c", key, "sim", "sim:target", "m", '{"text":"x"}', 5])}\n`,
    );
    const cache = openCallCache(dir.path);
    expect(getCachedCall(cache, key)).toBe('{"text":"x"}');
    cache.close();
    const state = join(dir.path, "run", "state.sqlite");
    const first = openRunStore(state);
    first.close();
    const columns = Object.keys(ROW);
    writeFileSync(
      `${state}.pending-${dead}-1`,
      `${JSON.stringify(["l", ...columns.map((c) => (c === "cached" ? 0 : (ROW as Record<string, unknown>)[c]))])}\n`,
    );
    const run = openRunStore(state);
    useCallTables(run);
    expect(ledgerRows(run, "r")).toEqual([ROW]);
    run.close();
  });
});

describe("compact ledger", () => {
  test("rows an earlier version wrote read first, then new ones, through the call_ledger view", () => {
    using dir = tempDir();
    const state = join(dir.path, "state.sqlite");
    const key = "c".repeat(64);
    const old = openStore(state, { migrations: CALLS_MIGRATIONS.slice(0, 4), namespace: CALLS_NAMESPACE });
    const columns = Object.keys(ROW);
    const insert = old.db.query(
      `INSERT INTO call_ledger (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`,
    );
    for (const at of [1, 2])
      insert.run(
        ...columns.map((c) =>
          c === "cached" ? 0 : c === "at" ? at : ((ROW as Record<string, unknown>)[c] as string | number | null),
        ),
      );
    old.close();
    const run = openRunStore(state);
    useCallTables(run);
    insertLedgerRow(run, { ...ROW, at: 3, cache_key: key, cost_usd: null, error: "x" });
    insertLedgerRow(run, { ...ROW, at: 4, cache_key: null, model: "other" });
    const rows = ledgerRows(run, "r");
    expect(rows.map((r) => [r.at, r.cache_key, r.model])).toEqual([
      [1, "k1", "m"],
      [2, "k1", "m"],
      [3, key, "m"],
      [4, null, "other"],
    ]);
    expect(rows[2]).toEqual({ ...ROW, at: 3, cache_key: key, cost_usd: null, error: "x" });
    expect(run.db.query("SELECT id, typeof(cache_key) AS t FROM call_log ORDER BY id").all()).toEqual([
      { id: 3, t: "blob" },
      { id: 4, t: "null" },
    ]);
    run.close();
  });
});
