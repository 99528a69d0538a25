import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { adoptNight } from "../../src/sleep/adopt/adopt.ts";
import { JOURNAL_FILE, recoverJournal } from "../../src/sleep/adopt/journal.ts";
import { acquireLock, releaseLock } from "../../src/sleep/adopt/locks.ts";
import { rollbackNight } from "../../src/sleep/adopt/rollback.ts";
import { publishNight, readBaseline, reserveNight } from "../../src/sleep/stage.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { MEM_AFTER, MEM_BEFORE, SKILL_AFTER, SKILL_BEFORE, stagedNight } from "./support/staged-night.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

describe("adoption", () => {
  test("applies the pinned proposals with backups and receipts, and rollback restores the original bytes", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const r = adoptNight(n.dir, { mode: "legacy" }, { stateDir: n.stateDir });
    expect(r.updated_paths).toEqual([n.skillPath, n.memoryPath]);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_AFTER);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
    expect(readFileSync(join(n.dir, "backup", "SKILL.md"), "utf8")).toBe(SKILL_BEFORE);
    expect(readFileSync(join(n.dir, "backup", "AGENTS.md"), "utf8")).toBe(MEM_BEFORE);
    const receipts = JSON.parse(readFileSync(join(n.dir, "adopted_legacy.json"), "utf8"));
    expect(receipts.map((x: { target: string }) => x.target)).toEqual(["skill", "memory"]);
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(false);
    const rb = rollbackNight(n.dir, { stateDir: n.stateDir });
    expect(rb.restored).toEqual([n.skillPath, n.memoryPath]);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_BEFORE);
  });

  test("is refused when the live baseline drifted since staging, and nothing is written", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    writeFileSync(n.memoryPath, `${MEM_BEFORE}edited by hand\n`);
    expect(() => adoptNight(n.dir, { mode: "legacy" }, { stateDir: n.stateDir })).toThrow(
      /changed since this night was staged/,
    );
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(`${MEM_BEFORE}edited by hand\n`);
    expect(existsSync(join(n.dir, "backup"))).toBe(false);
    expect(existsSync(join(n.dir, "adopted_legacy.json"))).toBe(false);
  });

  test("the CLI reports a drifted baseline as adoption_refused with exit 2", async () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    writeFileSync(n.skillPath, "replaced\n");
    const r = await runCli(["sleep", "adopt", "--project", n.project, "--json"], {
      env: { HOME: join(tmp.path, "home") },
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: "adoption_refused", staging_dir: n.dir });
  });

  // Own timeout: it waits on a second process (support/slow-adopt.ts) that holds the adoption, about 1.5 s idle.
  test("status and a second adopt leave a running adoption alone (no recovery under a live holder)", async () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "support", "slow-adopt.ts"), n.dir, n.stateDir], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = child.stdout.getReader();
    await reader.read();
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(true);
    const env = { env: { HOME: join(tmp.path, "home") } };
    const [status, second] = await Promise.all([
      runCli(["sleep", "status", "--project", n.project, "--json"], env),
      runCli(["sleep", "adopt", "--project", n.project, "--json"], env),
    ]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).recovered_adoptions).toEqual([]);
    expect(second.code).not.toBe(0);
    expect(JSON.parse(second.stdout).ok).toBe(false);
    reader.releaseLock();
    expect(await child.exited).toBe(0);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_AFTER);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(false);
  }, 30_000);

  test("a crash in the middle of adoption is recovered by the next status, and adopt then succeeds", async () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "support", "crash-adopt.ts"), n.dir, n.stateDir], {
      stdout: "ignore",
      stderr: "ignore",
    });
    expect(await child.exited).not.toBe(0);
    expect(child.signalCode).toBe("SIGKILL");
    // Half-applied: the skill is new, the memory still old, the journal left behind.
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_AFTER);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_BEFORE);
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(true);
    const status = await runCli(["sleep", "status", "--project", n.project, "--json"], {
      env: { HOME: join(tmp.path, "home") },
    });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).recovered_adoptions).toEqual([n.dir]);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(false);
    expect(existsSync(join(n.dir, "backup", "SKILL.md"))).toBe(false);
    const adopt = await runCli(["sleep", "adopt", "--project", n.project, "--json"], {
      env: { HOME: join(tmp.path, "home") },
    });
    expect(adopt.code).toBe(0);
    expect(JSON.parse(adopt.stdout)).toMatchObject({
      ok: true,
      mode: "legacy",
      updated_paths: [n.skillPath, n.memoryPath],
    });
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
  });

  test("a crash in the middle of adoption is recovered by the next adopt itself", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const child = Bun.spawnSync(
      [process.execPath, join(import.meta.dir, "support", "crash-adopt.ts"), n.dir, n.stateDir],
      { stdout: "ignore", stderr: "ignore" },
    );
    expect(child.success).toBe(false);
    const r = adoptNight(n.dir, { mode: "legacy" }, { stateDir: n.stateDir });
    expect(r.recovered).toEqual([n.skillPath]);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_AFTER);
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
  });

  test("recovery keeps everything when someone edited a half-adopted file", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    Bun.spawnSync([process.execPath, join(import.meta.dir, "support", "crash-adopt.ts"), n.dir, n.stateDir], {
      stdout: "ignore",
      stderr: "ignore",
    });
    writeFileSync(n.skillPath, "an editor changed this\n");
    expect(() => recoverJournal(n.dir, { stateDir: n.stateDir })).toThrow(/changed since/);
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(true);
    expect(readFileSync(n.skillPath, "utf8")).toBe("an editor changed this\n");
  });

  test("a lock left by a dead process is broken; a live holder's lock is respected", () => {
    using tmp = tempDir();
    const path = join(tmp.path, "x.lock");
    writeFileSync(path, "pid=999999999\n");
    const lock = acquireLock(path, "test");
    expect(readFileSync(path, "utf8")).toContain(`pid=${process.pid}`);
    expect(() => acquireLock(path, "test")).toThrow(/already in progress/);
    releaseLock(lock);
    expect(existsSync(path)).toBe(false);
  });
});

describe("adopt that creates the managed skill's folders (issue 27 #9)", () => {
  test("exits 0, reports the folders it created, and rollback removes the file and the folders", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "project");
    const home = join(tmp.path, "home");
    mkdirSync(project, { recursive: true });
    // The user has no ~/.claude/skills/learned/ yet: adoption creates `skills` and `learned`.
    mkdirSync(join(home, ".claude"), { recursive: true });
    const skillPath = join(home, ".claude", "skills", "learned", "SKILL.md");
    const dir = reserveNight(project);
    publishNight(dir, {
      stateDir: process.env.SKILLOPT_SLEEP_STATE_DIR!,
      skillPath,
      memoryPath: join(project, "AGENTS.md"),
      accepted: true,
      proposals: [{ which: "skill", text: SKILL_AFTER, baseline: readBaseline(skillPath) }],
      reportJson: {},
      reportMd: "# report\n",
    });
    const env = { env: { HOME: home } };
    const r = await runCli(["sleep", "adopt", "--project", project, "--json"], env);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ ok: true, updated_paths: [skillPath] });
    expect(out.created_dirs).toEqual([join(home, ".claude", "skills"), join(home, ".claude", "skills", "learned")]);
    expect(readFileSync(skillPath, "utf8")).toBe(SKILL_AFTER);
    const back = await runCli(["sleep", "rollback", "--project", project, "--json"], env);
    expect(back.code).toBe(0);
    expect(JSON.parse(back.stdout).removed).toEqual([skillPath]);
    expect(existsSync(join(home, ".claude", "skills"))).toBe(false);
    expect(existsSync(join(home, ".claude"))).toBe(true);
  });
});
