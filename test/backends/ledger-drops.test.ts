import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CallLedger } from "../../src/backends/ledger.ts";
import { openRunStore, useCallTables } from "../../src/store/index.ts";
import { tempDir } from "../support/tmp.ts";

describe("call ledger", () => {
  test("dropped structured results are kept in the run store, so a resumed run still counts them", () => {
    using dir = tempDir();
    const path = join(dir.path, "state.sqlite");
    const first = openRunStore(path);
    useCallTables(first);
    const ledger = new CallLedger(first, "train");
    ledger.drop("analyst", "invalid_json");
    ledger.drop("ranking", "truncated");
    first.close();

    const second = openRunStore(path);
    useCallTables(second);
    const resumed = new CallLedger(second, "train").summary();
    expect(resumed.dropped).toEqual({ invalid_json: 1, truncated: 1 });
    expect(resumed.by_stage.analyst?.dropped).toBe(1);
    expect(resumed.by_stage.ranking?.dropped).toBe(1);
    expect(new CallLedger(second, "another-run").summary().dropped).toEqual({});
    second.close();
  });
});
