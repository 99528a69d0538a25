import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { removeOrphanTemps, writeFileAtomic } from "../../src/lib/index.ts";
import { killedWrite } from "../support/killed-write.ts";
import { tempDir } from "../support/tmp.ts";

describe("atomic writes", () => {
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
});
