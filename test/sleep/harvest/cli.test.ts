import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { harvest } from "../../../src/sleep/harvest/index.ts";
import { harvestState, openHarvestStore } from "../../../src/store/index.ts";
import { runCli } from "../../support/cli.ts";
import { fakeHome } from "./support.ts";

function hashTree(root: string, skip: (rel: string) => boolean): Record<string, string> {
  return Object.fromEntries(
    [...new Bun.Glob("**/*").scanSync({ cwd: root, dot: true, onlyFiles: true })]
      .filter((f) => !skip(f))
      .sort()
      .map((f) => [
        f,
        createHash("sha256")
          .update(readFileSync(join(root, f)))
          .digest("hex"),
      ]),
  );
}

describe("skillopt sleep harvest", () => {
  test("--json prints the tasks payload of every source and --output writes the same draft", async () => {
    using h = fakeHome();
    const out = join(h.home, "..", "tasks.json");
    const env = {
      HOME: h.home,
      USERPROFILE: h.home,
      XDG_CONFIG_HOME: join(h.home, ".config"),
      XDG_DATA_HOME: join(h.home, ".local", "share"),
      SKILLOPT_SLEEP_STATE_DIR: undefined,
    };
    const before = hashTree(h.home, (f) => f.startsWith(".skillopt-sleep/"));
    const r = await runCli(["sleep", "harvest", "--scope", "all", "--source", "all", "--json", "--output", out], {
      env,
      cwd: h.home,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const payload = JSON.parse(r.stdout) as {
      format: string;
      reviewed: boolean;
      n_sessions: number;
      tasks: { intent: string }[];
      output: string;
      harvest: { source: string }[];
      harvest_timing: { seconds: number; cpu_seconds: number; read_workers: number };
    };
    expect(payload.format).toBe("skillopt_sleep.tasks.v1");
    expect(payload.reviewed).toBe(false);
    expect(payload.n_sessions).toBe(9);
    expect(payload.tasks.length).toBeGreaterThan(0);
    expect(payload.output).toBe(out);
    expect(payload.harvest.map((s) => s.source)).toEqual([
      "claude",
      "codex",
      "copilot",
      "copilot_cli",
      "cursor",
      "devin",
      "opencode",
      "pi",
    ]);
    // The harvest's own cost: a small history reads on the main thread alone.
    expect(payload.harvest_timing.read_workers).toBe(0);
    expect(payload.harvest_timing.seconds).toBeGreaterThan(0);
    expect(payload.harvest_timing.cpu_seconds).toBeGreaterThan(0);
    const file = JSON.parse(readFileSync(out, "utf8")) as Record<string, unknown>;
    const { output: _o, harvest: _h, harvest_timing: _t, ...rest } = payload;
    expect(file).toEqual(rest);
    expect(r.stdout).not.toMatch(/sk-proj|ghp_[a-z]|AKIAIOSFODNN7EXAMPLE|local-secret|pg-secret/);
    // Read-only: only the state dir changed under the fake home.
    expect(hashTree(h.home, (f) => f.startsWith(".skillopt-sleep/"))).toEqual(before);
  });

  test("human output lists each task with its split and outcome; --new shows only unconsumed sessions", async () => {
    using h = fakeHome();
    const env = { HOME: h.home, USERPROFILE: h.home, SKILLOPT_SLEEP_STATE_DIR: undefined };
    const r = await runCli(
      ["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0"],
      { env, cwd: h.home },
    );
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
    expect(r.stdout).toMatch(
      /^ {2}\[(train|val|test)\/(fail|success|mixed|unknown)\] Add a --json flag to the export command/m,
    );
    const fresh = await runCli(
      ["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0", "--new"],
      { env, cwd: h.home },
    );
    expect(fresh.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
    // A night consumes the session (as review does); --new then has nothing, a plain harvest still shows it.
    const store = openHarvestStore(join(h.home, ".skillopt-sleep", "state.sqlite"));
    const night = await harvest({
      sources: ["codex"],
      scope: "invoked",
      invokedProject: "/work/demo",
      locations: h.locations,
      state: harvestState(store),
    });
    night.commit();
    store.close();
    const after = await runCli(
      ["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0", "--new"],
      { env, cwd: h.home },
    );
    expect(after.stdout.split("\n")[0]).toBe("0 sessions -> 0 tasks");
    const all = await runCli(
      ["sleep", "harvest", "--project", "/work/demo", "--source", "codex", "--lookback-hours", "0"],
      { env, cwd: h.home },
    );
    expect(all.stdout.split("\n")[0]).toBe("1 sessions -> 1 tasks");
  });

  test("--progress reports each source on stderr", async () => {
    using h = fakeHome();
    const env = { HOME: h.home, USERPROFILE: h.home, SKILLOPT_SLEEP_STATE_DIR: undefined };
    const r = await runCli(["sleep", "harvest", "--scope", "all", "--source", "pi", "--progress"], {
      env,
      cwd: h.home,
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("[sleep] harvest pi: 1 sessions (2 seen");
  });

  test("devin_transcripts and cursor_user_dir in the config file move where Devin transcripts and Cursor's state.vscdb are read", async () => {
    using h = fakeHome();
    const env = {
      HOME: h.home,
      USERPROFILE: h.home,
      XDG_CONFIG_HOME: join(h.home, ".config"),
      XDG_DATA_HOME: join(h.home, ".local", "share"),
      SKILLOPT_SLEEP_STATE_DIR: undefined,
    };
    const count = async () => {
      const r = await runCli(
        ["sleep", "harvest", "--scope", "all", "--source", "all", "--lookback-hours", "0", "--json"],
        { env, cwd: h.home },
      );
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as { harvest: { source: string; sessions: number }[] }).harvest.map((s) => [
        s.source,
        s.sessions,
      ]);
    };
    // Defaults: the Linux per-OS locations under the fake home (Devin's fixture is there; no Cursor database).
    const before = await count();
    expect(before).toContainEqual(["devin", 1]);
    const elsewhere = join(h.home, "..", "elsewhere");
    mkdirSync(elsewhere, { recursive: true });
    renameSync(h.locations.devinTranscripts, join(elsewhere, "devin-t"));
    const user = join(elsewhere, "cursor-data", "User");
    mkdirSync(join(user, "globalStorage"), { recursive: true });
    const db = new Database(join(user, "globalStorage", "state.vscdb"), { create: true });
    db.exec(
      "CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB); CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
    );
    const cid = "0a1b2c3d-1111-4222-8333-444455556666";
    const put = db.query("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)");
    put.run(
      `composerData:${cid}`,
      JSON.stringify({
        composerId: cid,
        createdAt: 1764500000000,
        lastUpdatedAt: 1764500600000,
        fullConversationHeadersOnly: [{ bubbleId: "b1", type: 1 }],
      }),
    );
    put.run(
      `bubbleId:${cid}:b1`,
      JSON.stringify({ type: 1, bubbleId: "b1", text: "add a dark mode toggle to the settings page" }),
    );
    db.close();
    expect(await count()).toContainEqual(["devin", 0]);
    mkdirSync(join(h.home, ".skillopt-sleep"), { recursive: true });
    writeFileSync(
      join(h.home, ".skillopt-sleep", "config.json"),
      JSON.stringify({
        devin_transcripts: join(elsewhere, "devin-t"),
        cursor_user_dir: join(elsewhere, "cursor-data"),
      }),
    );
    const after = await count();
    expect(after).toContainEqual(["devin", 1]);
    expect(after.find(([s]) => s === "cursor")![1]).toBe((before.find(([s]) => s === "cursor")![1] as number) + 1);
  });

  test("an unknown source is a config error (exit 2) naming the key", async () => {
    using h = fakeHome();
    const r = await runCli(["sleep", "harvest", "--source", "gemini"], { env: { HOME: h.home }, cwd: h.home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("transcript_source");
  });

  test("--harvest-prefetch takes on, off or auto; anything else is a usage error naming the flag", async () => {
    using h = fakeHome();
    const bad = await runCli(["sleep", "harvest", "--harvest-prefetch", "maybe"], {
      env: { HOME: h.home },
      cwd: h.home,
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--harvest-prefetch expects on, off or auto");
    const on = await runCli(
      ["sleep", "harvest", "--json", "--source", "claude", "--scope", "all", "--harvest-prefetch", "on"],
      {
        env: { HOME: h.home },
        cwd: h.home,
      },
    );
    expect(on.code).toBe(0);
    expect(JSON.parse(on.stdout).harvest_timing.prefetch).toBe(true);
  });
});
