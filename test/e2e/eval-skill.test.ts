import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe("skillopt eval refuses what cannot be a skill", () => {
  test.each([
    ["binary", new Uint8Array([0x23, 0, 1, 2, 3]), "contains NUL bytes"],
    ["oversized", `# Skill\n${"- rule\n".repeat(200_000)}`, "too large for a skill document"],
  ])("a %s --skill exits 2 before any model call, writing nothing", async (_name, body, message) => {
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, body);
    const out = join(dir.path, "out");
    const r = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--set",
      "model.backend=sim",
      "--skill",
      skill,
      "--out",
      out,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.split("\n")[0]).toBe(
      `error: --skill ${skill}: ${r.stderr.split(": ").slice(2).join(": ").split("\n")[0]}`,
    );
    expect(r.stderr).toContain(message);
    expect(await Bun.file(join(out, "eval_summary.json")).exists()).toBe(false);
  });

  test("an off-format SKILL.md is still scored, with a warning naming the problem, and gets a report", async () => {
    using dir = tempDir();
    const skill = join(dir.path, "SKILL.md");
    writeFileSync(skill, `---\nname: s\ndescription: ${"x".repeat(1100)}\n---\n# Body\n`);
    const out = join(dir.path, "out");
    const r = await runCli([
      "eval",
      "--config",
      "quickstart",
      "--set",
      "model.backend=sim",
      "--skill",
      skill,
      "--split",
      "val",
      "--out",
      out,
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      "the frontmatter description is 1100 characters (max 1024) (training would reject this skill)",
    );
    expect(await Bun.file(join(out, "report.html")).exists()).toBe(true);
  });
});
