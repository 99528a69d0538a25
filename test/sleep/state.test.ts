import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { basename, join } from "node:path";
import { reserveNight } from "../../src/sleep/stage.ts";
import { openSleepStore } from "../../src/store/sleep.ts";
import { runCli } from "../support/cli.ts";
import { killedWrite } from "../support/killed-write.ts";
import { tempDir } from "../support/tmp.ts";
import { buildFakeHome } from "./support/fake-home.ts";

describe("sleep state (state.sqlite)", () => {
  // Own timeout: it starts eight bun processes per round (half a second idle, about two with both cores busy).
  test("processes opening a fresh state database at the same time all migrate it without error", async () => {
    using tmp = tempDir();
    for (let round = 0; round < 4; round++) {
      const db = join(tmp.path, `state-${round}.sqlite`);
      const kids = Array.from({ length: 8 }, () =>
        Bun.spawn([process.execPath, join(import.meta.dir, "support", "open-store.ts"), db], {
          stdout: "ignore",
          stderr: "pipe",
        }),
      );
      const codes = await Promise.all(kids.map((k) => k.exited));
      expect(codes).toEqual(codes.map(() => 0));
    }
  }, 30_000);

  test("concurrent reviews of two projects on one state dir get distinct night numbers", async () => {
    using tmp = tempDir();
    const a = buildFakeHome(join(tmp.path, "a"));
    const b = buildFakeHome(join(tmp.path, "b"), { project: join(tmp.path, "b", "work", "other") });
    const stateDir = join(tmp.path, "state");
    const go = (home: string, project: string) =>
      runCli(["sleep", "review", "--backend", "mock", "--project", project, "--json"], {
        env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir },
        cwd: project,
      });
    const [ra, rb] = await Promise.all([go(a.home, a.project), go(b.home, b.project)]);
    expect([ra.code, rb.code]).toEqual([0, 0]);
    const nights = [JSON.parse(ra.stdout).night, JSON.parse(rb.stdout).night].sort();
    expect(nights).toEqual([1, 2]);
    const store = openSleepStore(join(stateDir, "state.sqlite"));
    try {
      expect(store.history(10).map((h) => h.status)).toEqual(["completed", "completed"]);
      // The mock makes no provider calls, so the per-night ledger stays empty.
      expect([...store.ledger(1), ...store.ledger(2)]).toEqual([]);
      expect(store.archivedTasks(a.project, 100).length).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  });

  test("nights left running: a dead process's is settled (forgotten, or kept as interrupted if it staged); a live one's is left alone", async () => {
    using tmp = tempDir();
    const { home, project } = buildFakeHome(tmp.path);
    const stateDir = join(home, ".skillopt-sleep");
    mkdirSync(stateDir, { recursive: true });
    const staging = join(project, ".skillopt-sleep", "staging");
    const folder = (name: string, manifest: boolean) => {
      const dir = join(staging, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "evidence.jsonl"), "{}\n");
      if (manifest) writeFileSync(join(dir, "manifest.json"), "{}\n");
      return dir;
    };
    const gone = Bun.spawn(["true"]);
    await gone.exited;
    const live = Bun.spawn(["sleep", "60"]);
    try {
      const store = openSleepStore(join(stateDir, "state.sqlite"));
      const begin = (name: string, manifest: boolean, pid: number, host = hostname()) => {
        const n = store.beginNight(project, Date.now(), "mock::");
        store.setNightDir(n, folder(name, manifest));
        store.store.db.query("UPDATE sleep_nights SET owner_pid = ?, owner_host = ? WHERE night = ?").run(pid, host, n);
        return n;
      };
      expect([
        begin("20261201-000000", true, gone.pid),
        begin("20261201-000001", false, live.pid),
        begin("20261201-000002", false, gone.pid),
        // Killed right after claiming a name the live night had just taken: that folder is not its own.
        begin("20261201-000001", false, gone.pid),
        // Another machine's night (a state directory shared between hosts): its pid means nothing here.
        begin("20261201-000003", false, gone.pid, "another-host"),
      ]).toEqual([1, 2, 3, 4, 5]);
      // Writes killed half-way: the staging folder's `.latest`, a staged night's file, the lesson book.
      const orphans = [
        join(staging, killedWrite(join(staging, ".latest"))),
        join(staging, "20261201-000000", killedWrite(join(staging, "20261201-000000", "diagnostics.json"))),
        join(stateDir, "lessons", killedWrite(join(stateDir, "lessons", "book.json"))),
      ];
      expect(store.deadNights((pid) => pid === live.pid).map((n) => [n.night, basename(n.staging_dir)])).toEqual([
        [1, "20261201-000000"],
        [3, "20261201-000002"],
        [4, ""],
      ]);
      store.close();

      const night = (verb: string) =>
        runCli(["sleep", verb, "--backend", "mock", "--project", project, "--json"], {
          env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir },
          cwd: project,
        });
      // A dry-run settles nothing but names the number the real night will get.
      const dry = await night("dry-run");
      expect(dry.code).toBe(0);
      expect(JSON.parse(dry.stdout).night).toBe(6);
      expect(existsSync(join(staging, "20261201-000002"))).toBe(true);
      const r = await night("review");
      expect(r.code).toBe(0);
      // Nights 3 and 4 died before staging anything: forgotten; 3's folder is removed, the live
      // night's folder that 4 had named is not. (Without night 5, number 3 would be given again.)
      expect(JSON.parse(r.stdout).night).toBe(6);
      expect(existsSync(join(staging, "20261201-000002"))).toBe(false);
      expect(existsSync(join(staging, "20261201-000000", "manifest.json"))).toBe(true);
      expect(existsSync(join(staging, "20261201-000001"))).toBe(true);
      expect(existsSync(join(staging, "20261201-000003"))).toBe(true);
      expect(orphans.filter((f) => existsSync(f))).toEqual([]);
      const after = openSleepStore(join(stateDir, "state.sqlite"));
      try {
        expect(after.history(10).map((h) => [h.night, h.status])).toEqual([
          [1, "interrupted"],
          [6, "completed"],
        ]);
        expect([after.getNight(2)?.status, after.getNight(5)?.status]).toEqual(["running", "running"]);
      } finally {
        after.close();
      }
    } finally {
      live.kill();
    }
  });

  test("a night's folder is named to its row before it exists, so a kill never leaves a folder no row knows", () => {
    using tmp = tempDir();
    const project = join(tmp.path, "proj");
    mkdirSync(project);
    const at = new Date(Date.UTC(2026, 11, 3, 12, 0, 0));
    const claims: [string, boolean][] = [];
    const first = reserveNight(project, at, (dir) => claims.push([dir, existsSync(dir)]));
    // Taken: the next reservation claims the next free name only.
    const second = reserveNight(project, at, (dir) => claims.push([dir, existsSync(dir)]));
    expect(claims).toEqual([
      [first, false],
      [second, false],
    ]);
    expect(second).toBe(`${first}-2`);
  });

  test("a changed backend/model prints the model-change advisory on stderr", async () => {
    using tmp = tempDir();
    const { home, project } = buildFakeHome(tmp.path);
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"), SKILLOPT_LOG_LEVEL: "info" };
    expect((await runCli(["sleep", "dry-run", "--backend", "mock", "--project", project], { env })).code).toBe(0);
    const store = openSleepStore(join(home, ".skillopt-sleep", "state.sqlite"));
    store.setLastModelKey("claude::sonnet");
    store.close();
    const r = await runCli(["sleep", "dry-run", "--backend", "mock", "--project", project], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "sleep: the model changed (claude::sonnet -> mock::); rules learned for one model may not transfer",
    );
    expect(r.stderr).not.toContain("[sleep] night:");
    // With --progress the night's typed events become one line each, in phase order, worded by the CLI.
    const p = await runCli(["sleep", "dry-run", "--backend", "mock", "--project", project, "--progress"], { env });
    expect(p.code).toBe(0);
    const phases = p.stderr
      .split("\n")
      .flatMap((l) => /^\[sleep\] ([a-z]+): /.exec(l)?.[1] ?? [])
      .filter((ph, i, all) => ph !== all[i - 1]);
    expect(phases.slice(0, 4)).toEqual(["night", "skill", "harvest", "mine"]);
    expect(p.stderr).toMatch(/^\[sleep\] night: night \d+ · project .+ · backend mock$/m);
    expect(p.stderr).toMatch(/^\[sleep\] harvest: harvest done: \d+ sessions$/m);
    expect(p.stderr).toMatch(/^\[sleep\] mine: mine done: \d+ tasks$/m);
  });
});
