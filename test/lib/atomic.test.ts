import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createExclusive,
  makePrivateDir,
  removeOrphanTemps,
  tightenPrivate,
  writeFileAtomic,
} from "../../src/lib/index.ts";
import { killedWrite } from "../support/killed-write.ts";
import { tempDir } from "../support/tmp.ts";

describe("atomic writes", () => {
  test("mode: the file gets exactly those bits (whatever the umask), replacing a looser file; new folders are 0700", () => {
    using dir = tempDir();
    const path = join(dir.path, "private", "book.json");
    const old = process.umask(0);
    try {
      writeFileAtomic(path, "{}\n", { mode: 0o600 });
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(join(dir.path, "private")).mode & 0o777).toBe(0o700);
      writeFileSync(path, "{}\n", { mode: 0o644 });
      chmodSync(path, 0o644);
      writeFileAtomic(path, "[]\n", { mode: 0o600 });
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readFileSync(path, "utf8")).toBe("[]\n");
    } finally {
      process.umask(old);
    }
  });

  test("tightenPrivate takes others' bits off this user's files and folders, never through a link", () => {
    using dir = tempDir();
    const folder = join(dir.path, "state");
    makePrivateDir(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    chmodSync(folder, 0o755);
    makePrivateDir(folder);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    const file = join(folder, "state.sqlite");
    writeFileSync(file, "x");
    chmodSync(file, 0o644);
    const outside = join(dir.path, "shared.txt");
    writeFileSync(outside, "x");
    chmodSync(outside, 0o644);
    symlinkSync(outside, join(folder, "link"));
    expect(tightenPrivate(file)).toBe(true);
    expect(tightenPrivate(join(folder, "link"))).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(outside).mode & 0o777).toBe(0o644);
  });

  test("a finished write leaves the file and no temp file", () => {
    using dir = tempDir();
    const path = join(dir.path, "a", "b.txt");
    writeFileAtomic(path, ["one ", "two"]);
    expect(readFileSync(path, "utf8")).toBe("one two");
    expect(readdirSync(join(dir.path, "a"))).toEqual(["b.txt"]);
  });

  test("a writer killed mid-write leaves its temp file; only a dead process's are removed", () => {
    using dir = tempDir();
    const path = join(dir.path, "report.html");
    writeFileSync(path, "the previous version");
    const orphan = killedWrite(path);
    // The file keeps its previous version: the rename never happened.
    expect(readFileSync(path, "utf8")).toBe("the previous version");
    expect(readFileSync(join(dir.path, orphan), "utf8").length).toBeGreaterThan(0);
    // This process's own temp file (a write in progress) and unrelated names stay.
    const live = `.${process.pid}.99.${Date.now()}.tmp`;
    writeFileSync(join(dir.path, live), "in progress");
    writeFileSync(join(dir.path, ".notes.tmp"), "not ours");
    expect(removeOrphanTemps(dir.path)).toBe(1);
    expect(existsSync(join(dir.path, orphan))).toBe(false);
    expect(readdirSync(dir.path).sort()).toEqual([live, ".notes.tmp", "report.html"].sort());
    expect(removeOrphanTemps(join(dir.path, "missing"))).toBe(0);
  });

  test("createExclusive makes the file whole with its mode, once: an existing file is kept and no temp file is left", () => {
    using dir = tempDir();
    const path = join(dir.path, "key");
    expect(createExclusive(path, "first\n", 0o600)).toBe(true);
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(createExclusive(path, "second\n", 0o600)).toBe(false);
    expect(readFileSync(path, "utf8")).toBe("first\n");
    expect(readdirSync(dir.path)).toEqual(["key"]);
  });

  test("of processes creating the same file at once, exactly one does, and the file is its whole content", async () => {
    using dir = tempDir();
    const path = join(dir.path, "key");
    const lib = join(import.meta.dir, "..", "..", "src", "lib", "atomic.ts");
    const script = `const { createExclusive } = await import(${JSON.stringify(lib)});
      console.log(createExclusive(${JSON.stringify(path)}, "x".repeat(200000) + process.pid, 0o600) ? "created" : "exists");`;
    const kids = Array.from({ length: 6 }, () => Bun.spawn([process.execPath, "-e", script], { stdout: "pipe" }));
    const outs = await Promise.all(kids.map((k) => new Response(k.stdout).text()));
    const winners = kids.filter((_, i) => outs[i]!.trim() === "created");
    expect(winners).toHaveLength(1);
    expect(outs.filter((o) => o.trim() === "exists")).toHaveLength(5);
    expect(readFileSync(path, "utf8")).toBe("x".repeat(200000) + winners[0]!.pid);
    expect(readdirSync(dir.path)).toEqual(["key"]);
  });
});
