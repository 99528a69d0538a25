import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { basename, dirname } from "node:path";
import { newRunFolder } from "../../src/run/index.ts";
import { tempDir } from "../support/tmp.ts";

// The folder a run started from the dashboard or the MCP train tool gets (both use newRunFolder).
describe("newRunFolder", () => {
  test("named after the config file, or its folder for a default.yaml", () => {
    using dir = tempDir();
    expect(basename(newRunFolder(dir.path, "quickstart"))).toMatch(/^quickstart_\d{8}-\d{6}$/);
    expect(basename(newRunFolder(dir.path, "configs/searchqa/default.yaml"))).toMatch(/^searchqa_\d{8}-\d{6}$/);
    expect(basename(newRunFolder(dir.path, "C:\\cfg\\my run.yml"))).toMatch(/^my_run_\d{8}-\d{6}$/);
    expect(basename(newRunFolder(dir.path, "default.yaml"))).toMatch(/^run_\d{8}-\d{6}$/);
    expect(dirname(newRunFolder(dir.path, "quickstart"))).toBe(dir.path);
  });
  test("a folder that exists, or one a launch has claimed, gets -2, -3 …", () => {
    using dir = tempDir();
    const now = new Date(2026, 0, 2, 3, 4, 5);
    const first = newRunFolder(dir.path, "quickstart", undefined, now);
    expect(basename(first)).toBe("quickstart_20260102-030405");
    mkdirSync(first);
    expect(newRunFolder(dir.path, "quickstart", undefined, now)).toBe(`${first}-2`);
    expect(newRunFolder(dir.path, "quickstart", (p) => p === `${first}-2`, now)).toBe(`${first}-3`);
  });
});
