import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// A refused --resume leaves the file exactly as it was (issue 12).
describe("--resume refusals never rewrite state.sqlite", () => {
  test("an empty state.sqlite", async () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, "run"));
    const state = join(dir.path, "run", "state.sqlite");
    writeFileSync(state, "");
    const r = await runCli(["train", "--resume", join(dir.path, "run")], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("the run was stopped before it started, so there is nothing to resume");
    expect(statSync(state).size).toBe(0);
  });

  // What a train killed between opening its new store and committing the store's tables leaves:
  // the switch to WAL only, or, from earlier versions, also an empty schema_versions table.
  for (const [what, setup] of [
    ["WAL set, no tables yet", (_db: Database) => {}],
    [
      "an empty schema_versions table only",
      (db: Database) => db.run("CREATE TABLE schema_versions (namespace TEXT PRIMARY KEY, version INTEGER NOT NULL)"),
    ],
  ] as const) {
    test(`a store killed while it was created (${what}): nothing to resume, and the same command starts over`, async () => {
      using dir = tempDir();
      const run = join(dir.path, "run");
      mkdirSync(run);
      const state = join(run, "state.sqlite");
      const db = new Database(state, { create: true });
      db.run("PRAGMA journal_mode = WAL");
      setup(db);
      db.close();
      const before = readFileSync(state);
      const r = await runCli(["train", "--resume", run], { cwd: dir.path });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("the run was stopped before it started, so there is nothing to resume");
      expect(readFileSync(state).equals(before)).toBe(true);
      const again = await runCli(["train", "--config", "quickstart", "--out", run, "--quiet"], { cwd: dir.path });
      expect(again.stderr).toBe("");
      expect(again.code).toBe(0);
      expect(readFileSync(join(run, "best_skill.md"), "utf8").length).toBeGreaterThan(0);
    }, 60_000);
  }

  test("another tool's SQLite file", async () => {
    using dir = tempDir();
    mkdirSync(join(dir.path, "run"));
    const state = join(dir.path, "run", "state.sqlite");
    const db = new Database(state, { create: true });
    db.run("CREATE TABLE notes (x TEXT)");
    db.run("INSERT INTO notes VALUES ('keep me')");
    db.close();
    const before = readFileSync(state);
    const r = await runCli(["train", "--resume", join(dir.path, "run")], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("is an SQLite file but not a skillopt run store; it is left as it is");
    expect(readFileSync(state).equals(before)).toBe(true);
  });
});
