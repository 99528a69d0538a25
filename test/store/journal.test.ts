import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  getCachedCall,
  insertLedgerRow,
  ledgerRows,
  openCallCache,
  openRunStore,
  useCallTables,
} from "../../src/store/index.ts";
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
