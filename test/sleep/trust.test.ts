import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openLiveFileForRead, readRegularFile, trustNight } from "../../src/sleep/index.ts";
import { sealKey } from "../../src/sleep/adopt/seal.ts";
import { readBaseline } from "../../src/sleep/stage.ts";
import { tempDir } from "../support/tmp.ts";
import { MEM_BEFORE, stagedNight } from "./support/staged-night.ts";

const mkfifo = (p: string) => spawnSync("mkfifo", [p]).status === 0;

describe("night trust", () => {
  test("a night staged by this user is sealed, and its live files read through the path rule", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const key = join(n.stateDir, "night-seal.key");
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(join(n.dir, "manifest.json"), "utf8")).seal).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(readFileSync(join(n.project, ".skillopt-sleep", ".gitignore"), "utf8")).toBe("*\n");
    expect(openLiveFileForRead(n.dir, n.memoryPath, n.stateDir)?.toString()).toBe(MEM_BEFORE);
    // A path the manifest does not name is refused even if it exists.
    expect(() => openLiveFileForRead(n.dir, join(n.project, "other.md"), n.stateDir)).toThrow(/not a target/);
  });

  test("a manifest edited after staging, or shipped without a seal, is refused in one line", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    const mpath = join(n.dir, "manifest.json");
    const m = JSON.parse(readFileSync(mpath, "utf8"));
    m.legacy.memory.live_path = "/etc/shadow";
    writeFileSync(mpath, JSON.stringify(m));
    expect(() => trustNight(n.dir, n.stateDir)).toThrow(
      /was not staged by this user's review: manifest.json: its seal does not verify/,
    );
    delete m.seal;
    writeFileSync(mpath, JSON.stringify(m));
    expect(() => trustNight(n.dir, n.stateDir)).toThrow(/carries no seal/);
    // Another user's state directory (another key) does not verify it either.
    const other = stagedNight(join(tmp.path, "b"));
    expect(() => trustNight(other.dir, join(tmp.path, "someone-else"))).toThrow(/no night seal key yet/);
  });

  test("the seal key: an empty file (a review killed while creating it) is replaced; a damaged one is refused", () => {
    using tmp = tempDir();
    const stateDir = join(tmp.path, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const key = join(stateDir, "night-seal.key");
    writeFileSync(key, "", { mode: 0o600 });
    // Nothing was ever sealed with an empty key: it counts as none, and creating one replaces it.
    expect(sealKey(stateDir)).toBeUndefined();
    const made = sealKey(stateDir, { create: true })!;
    expect(made.key).toHaveLength(32);
    expect(readFileSync(key, "utf8")).toBe(`${made.key.toString("hex")}\n`);
    expect(statSync(key).mode & 0o777).toBe(0o600);
    expect(sealKey(stateDir, { create: true })!.key.equals(made.key)).toBe(true);
    writeFileSync(key, "0123abc\n", { mode: 0o600 });
    expect(() => sealKey(stateDir, { create: true })).toThrow(/night seal key .* is damaged; delete it/);
    expect(readFileSync(key, "utf8")).toBe("0123abc\n");
  });

  test("a live path swapped for a FIFO or a symlink is refused without blocking", () => {
    using tmp = tempDir();
    const n = stagedNight(tmp.path);
    rmSync(n.memoryPath);
    if (mkfifo(n.memoryPath))
      expect(() => openLiveFileForRead(n.dir, n.memoryPath, n.stateDir)).toThrow(
        /is a named pipe \(FIFO\), not a regular file/,
      );
    rmSync(n.memoryPath);
    writeFileSync(join(tmp.path, "secret.md"), "root only\n");
    symlinkSync(join(tmp.path, "secret.md"), n.memoryPath);
    expect(() => openLiveFileForRead(n.dir, n.memoryPath, n.stateDir)).toThrow(
      /now resolves to .*secret\.md, not the pinned/,
    );
  });

  test("review's baseline read refuses a FIFO in place of a memory file instead of blocking", () => {
    using tmp = tempDir();
    const fifo = join(tmp.path, "CLAUDE.md");
    if (mkfifo(fifo)) expect(() => readBaseline(fifo)).toThrow(/is a named pipe \(FIFO\), not a regular file/);
  });

  test("readRegularFile refuses FIFOs, directories and links at once", () => {
    using tmp = tempDir();
    const fifo = join(tmp.path, "f");
    if (mkfifo(fifo)) expect(() => readRegularFile(fifo)).toThrow(/is a named pipe \(FIFO\)/);
    mkdirSync(join(tmp.path, "d"));
    expect(() => readRegularFile(join(tmp.path, "d"))).toThrow(/is a directory/);
    writeFileSync(join(tmp.path, "x"), "x");
    symlinkSync(join(tmp.path, "x"), join(tmp.path, "l"));
    expect(() => readRegularFile(join(tmp.path, "l"))).toThrow(/is a symbolic link/);
    expect(readRegularFile(join(tmp.path, "missing"), { missingOk: true })).toBeUndefined();
    expect(existsSync(join(tmp.path, "missing"))).toBe(false);
  });
});
