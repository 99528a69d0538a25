import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DataError, MAX_SKILL_BYTES, readSkillFile } from "../../src/lib/index.ts";
import { tempDir } from "../support/tmp.ts";

describe("readSkillFile", () => {
  test("reads UTF-8 Markdown and drops a byte-order mark", () => {
    using dir = tempDir();
    const p = join(dir.path, "s.md");
    writeFileSync(p, "\uFEFF# Skill\n- café\n");
    expect(readSkillFile(p, "--skill")).toBe("# Skill\n- café\n");
  });

  const put = (d: string, name: string, body: string | Uint8Array): string => {
    writeFileSync(join(d, name), body);
    return join(d, name);
  };
  const subdir = (d: string): string => {
    mkdirSync(join(d, "sub"));
    return join(d, "sub");
  };
  test.each([
    ["missing", (d: string) => join(d, "nope.md"), "file not found"],
    ["a directory", subdir, "is a directory"],
    ["binary", (d: string) => put(d, "b.md", new Uint8Array([1, 0, 2])), "contains NUL bytes"],
    ["not UTF-8", (d: string) => put(d, "l.md", new Uint8Array([0x41, 0xff, 0xfe])), "is not valid UTF-8"],
    ["too large", (d: string) => put(d, "h.md", "x".repeat(MAX_SKILL_BYTES + 1)), "too large for a skill"],
  ])("refuses a skill that is %s, naming the flag and path", (_name, make, message) => {
    using dir = tempDir();
    const p = make(dir.path);
    let caught: unknown;
    try {
      readSkillFile(p, "--skill");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DataError);
    expect((caught as DataError).message).toStartWith(`--skill ${p}: `);
    expect((caught as DataError).message).toContain(message);
    expect((caught as DataError).exitCode).toBe(2);
  });
});
