import { describe, expect, test } from "bun:test";
import {
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../src/lib/index.ts";
import { adoptNight } from "../../src/sleep/adopt/adopt.ts";
import { JOURNAL_FILE, recoverJournal } from "../../src/sleep/adopt/journal.ts";
import { lockRoot } from "../../src/sleep/adopt/locks.ts";
import { sealKey, sealObject } from "../../src/sleep/adopt/seal.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { changedFiles, hashTree } from "./support/fake-home.ts";
import { MEM_AFTER, MEM_BEFORE, SKILL_AFTER, SKILL_BEFORE, stagedNight } from "./support/staged-night.ts";

const CRASH = join(import.meta.dir, "support", "crash-rollback.ts");

function adopted(root: string) {
  const n = stagedNight(root);
  adoptNight(n.dir, { mode: "legacy" }, { stateDir: n.stateDir });
  expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_AFTER);
  return n;
}

describe("rollback is journaled", () => {
  // Every point a rollback can be killed at: after each of its two targets, after each rename aside.
  for (const point of ["after-target-0", "after-target-1", "after-rename-0", "after-rename-1"]) {
    test(`killed ${point}: status reports it and completes it; the night can be adopted again`, async () => {
      using tmp = tempDir();
      const n = adopted(tmp.path);
      const child = Bun.spawnSync([process.execPath, CRASH, n.dir, n.stateDir, point], {
        stdout: "ignore",
        stderr: "ignore",
      });
      expect(child.signalCode).toBe("SIGKILL");
      expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(true);
      if (point === "after-target-0") {
        // The mixed state the old rollback left unreported: skill restored, memory still adopted.
        expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
        expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
      }
      const env = { env: { HOME: join(tmp.path, "home") } };
      const status = await runCli(["sleep", "status", "--project", n.project, "--json"], env);
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout).completed_rollbacks).toEqual([n.dir]);
      expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
      expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_BEFORE);
      expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(false);
      expect(existsSync(join(n.dir, "adopted_legacy.json"))).toBe(false);
      expect(existsSync(join(n.dir, "backup"))).toBe(false);
      const human = await runCli(["sleep", "status", "--project", n.project], env);
      expect(human.code).toBe(0);
      // Not wedged: the night adopts again, and rolls back again.
      const again = await runCli(["sleep", "adopt", "--project", n.project, "--staging", n.dir, "--json"], env);
      expect(again.code).toBe(0);
      expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
      const back = await runCli(["sleep", "rollback", n.dir, "--project", n.project, "--json"], env);
      expect(back.code).toBe(0);
      expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_BEFORE);
    });
  }

  test("an interrupted rollback is completed by the next rollback command itself", async () => {
    using tmp = tempDir();
    const n = adopted(tmp.path);
    Bun.spawnSync([process.execPath, CRASH, n.dir, n.stateDir, "after-target-0"], {
      stdout: "ignore",
      stderr: "ignore",
    });
    const r = await runCli(["sleep", "rollback", "--project", n.project, "--json"], {
      env: { HOME: join(tmp.path, "home") },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, completed_interrupted: true });
    expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_BEFORE);
  });

  test("damaged receipts give one clean line (exit 1), not an internal error", async () => {
    for (const garbage of ["[1, 2", "{}", '[{"target":"memory"}]', "\u0000\u0001"]) {
      using tmp = tempDir();
      const n = adopted(tmp.path);
      writeFileSync(join(n.dir, "adopted_legacy.json"), garbage);
      const r = await runCli(["sleep", "rollback", "--project", n.project], { env: { HOME: join(tmp.path, "home") } });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/adopted_legacy\.json/);
      expect(r.stderr).not.toMatch(/internal error|^\s+at /m);
      expect(readFileSync(n.memoryPath, "utf8")).toBe(MEM_AFTER);
    }
  });

  test("a receipt row edited to point elsewhere is refused (receipts are sealed row by row)", async () => {
    using tmp = tempDir();
    const n = adopted(tmp.path);
    const p = join(n.dir, "adopted_legacy.json");
    const rows = JSON.parse(readFileSync(p, "utf8"));
    rows[1].live_path = join(tmp.path, "home", ".bashrc");
    writeFileSync(p, JSON.stringify(rows));
    const before = hashTree([join(tmp.path, "home")]);
    const r = await runCli(["sleep", "rollback", "--project", n.project], { env: { HOME: join(tmp.path, "home") } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("receipt 2 was not written by this user's adoption");
    expect(changedFiles(before, hashTree([join(tmp.path, "home")]), join(tmp.path, "home"))).toEqual([]);
  });
});

describe("recovery writes only through the path rule", () => {
  test("a journal target swapped for a symlink out of the project is not written; temp files of dead writers are removed", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    Bun.spawnSync([process.execPath, join(import.meta.dir, "support", "crash-adopt.ts"), n.dir, n.stateDir], {
      stdout: "ignore",
      stderr: "ignore",
    });
    expect(existsSync(join(n.dir, JOURNAL_FILE))).toBe(true);
    const planted = join(tmp.path, "home", "planted.md");
    writeFileSync(planted, SKILL_AFTER);
    rmSync(n.skillPath);
    symlinkSync(planted, n.skillPath);
    expect(() => recoverJournal(n.dir, { stateDir: n.stateDir })).toThrow(
      /now resolves to .*planted\.md, not the pinned/,
    );
    expect(readFileSync(planted, "utf8")).toBe(SKILL_AFTER);
    rmSync(n.skillPath);
    writeFileSync(n.skillPath, SKILL_AFTER);
    // Left by an atomic write killed mid-way (its pid is long gone).
    const temp = join(n.project, `.AGENTS.md.skillopt-999999999-deadbeef.tmp`);
    writeFileSync(temp, "half");
    const stagingTemp = join(n.dir, ".adopted_legacy.json.skillopt-999999999-0badf00d.tmp");
    writeFileSync(stagingTemp, "[");
    const r = recoverJournal(n.dir, { stateDir: n.stateDir });
    expect(r.restored).toEqual([n.skillPath]);
    expect(r.cleaned.sort()).toEqual([temp, stagingTemp].sort());
    expect(existsSync(temp) || existsSync(stagingTemp)).toBe(false);
    expect(readFileSync(n.skillPath, "utf8")).toBe(SKILL_BEFORE);
  });

  test("even a journal sealed with the user's key cannot name a path its manifest does not", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const planted = join(tmp.path, "home", "planted.sh");
    const key = sealKey(n.stateDir)!;
    const journal = {
      version: 2,
      kind: "legacy",
      targets: [
        {
          key: "legacy memory",
          live_path: planted,
          expected_realpath: planted,
          expected_basename: "planted.sh",
          proposed_sha256: "",
          original_b64: Buffer.from("evil").toString("base64"),
          original_mode: 0o755,
          original_file_id: null,
          baseline_sha256: sha256("evil"),
          backup_path: "",
          created_dirs: [],
          created_dir_ids: [],
        },
      ],
      receipt: {
        path: join(n.dir, "adopted_legacy.json"),
        original_b64: null,
        original_mode: null,
        original_file_id: null,
        baseline_sha256: "",
        proposed_sha256: "",
      },
    };
    writeFileSync(join(n.dir, JOURNAL_FILE), JSON.stringify(sealObject(key, "journal", n.dir, journal)));
    expect(() => recoverJournal(n.dir, { stateDir: n.stateDir })).toThrow(
      /is not a target of .*manifest; refusing to touch it/,
    );
    expect(existsSync(planted)).toBe(false);
  });
});

describe("adoption lock directory", () => {
  test("is per user (not the shared temp dir), 0700, and one owned by another user is refused", () => {
    using tmp = tempDir();
    const root = lockRoot(join(tmp.path, "state"));
    expect(root.startsWith(join(tmp.path, "state"))).toBe(true);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    const other = join(tmp.path, "other");
    mkdirSync(join(other, "skillopt-sleep", "adopt-locks"), { recursive: true, mode: 0o700 });
    if (process.getuid?.() === 0) {
      chownSync(join(other, "skillopt-sleep", "adopt-locks"), 65534, 65534);
      expect(() => lockRoot(other)).toThrow(/is owned by another user \(uid 65534\); refusing to use it/);
    }
    expect(readdirSync(root)).toEqual([]);
  });
});
