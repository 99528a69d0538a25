import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const WEAK = "# House style\n\nAnswer with the value only.\n";

describe("skillopt eval", () => {
  test("rolls a skill out on a split, writes eval_summary.json, and --fail-under gates CI", async () => {
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, WEAK);
    const out = join(dir.path, "ev");
    const r = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--skill",
      skill,
      "--split",
      "valid_seen",
      "--out",
      out,
      "--json",
      "--fail-under",
      "0.9",
    ]);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.stdout);
    expect(s).toMatchObject({
      split: "val",
      n_items: 24,
      benchmark: "conventions",
      backend: "sim (offline simulator)",
      passed: false,
    });
    expect(s.hard).toBeLessThan(0.5);
    expect(JSON.parse(readFileSync(join(out, "eval_summary.json"), "utf8")).hard).toBe(s.hard);
    const ok = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--skill",
      skill,
      "--split",
      "test",
      "--out",
      out,
      "--fail-under",
      "0.0",
    ]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("Results: hard=");
  });

  test("an unknown split is a usage error, not a silent fallback to val", async () => {
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, WEAK);
    const r = await runCli(["eval", "--config", "quickstart", "--skill", skill, "--split", "validation_set"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--split validation_set: unknown split");
  });
});
