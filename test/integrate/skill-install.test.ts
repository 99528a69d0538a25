import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { writePackageWorld } from "../../bench/lib/package-world.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { skillProblems } from "./formats.ts";

/** Every file under `dir` (relative path → bytes). */
function tree(dir: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), readFileSync(p));
    }
  };
  walk(dir);
  return out;
}

/** A trained run folder: best_skill/ is the package world's folder plus a script and a binary file. */
function runFolder(root: string): string {
  const run = join(root, "run");
  const skill = writePackageWorld(join(run, "best_skill"), 7);
  mkdirSync(join(skill, "scripts"));
  writeFileSync(join(skill, "scripts", "check.sh"), "#!/bin/sh\necho ok\n", { mode: 0o755 });
  writeFileSync(join(skill, "scripts", "table.bin"), new Uint8Array([0, 1, 2, 255]));
  return run;
}

/** Where each agent reads skills, in a project and for the user. */
const PLACES: Record<string, { project: string; user: string }> = {
  claude: { project: ".claude/skills", user: ".claude/skills" },
  codex: { project: ".agents/skills", user: ".agents/skills" },
  copilot: { project: ".github/skills", user: ".copilot/skills" },
  cursor: { project: ".cursor/skills", user: ".cursor/skills" },
};

describe("skillopt integrate AGENT --skill: a trained folder placed where the agent reads skills", () => {
  for (const agent of Object.keys(PLACES))
    test(`${agent}: --dry-run lists every file of the package, install writes them byte for byte, --remove takes them out`, async () => {
      using tmp = tempDir(`integrate-skill-${agent}-`);
      const run = runFolder(tmp.path);
      const source = tree(join(run, "best_skill"));
      for (const scope of ["project", "user"] as const) {
        const root = join(tmp.path, scope);
        mkdirSync(root);
        const where = scope === "user" ? ["--user"] : ["--project", root];
        const env = { HOME: join(tmp.path, "user"), XDG_STATE_HOME: join(tmp.path, `state-${scope}`) };
        const dest = join(root, PLACES[agent]![scope], "house-style");
        const dry = await runCli(["integrate", agent, "--skill", run, ...where, "--dry-run"], { env });
        expect(dry.code).toBe(0);
        expect(dry.stdout.trim().split("\n")).toEqual(
          [...source.keys()].sort().map((f) => `would create ${join(dest, f)}`),
        );
        expect(readdirSync(root)).toEqual([]);

        const r = await runCli(["integrate", agent, "--skill", run, ...where, "--json"], { env });
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
        expect((JSON.parse(r.stdout) as { skill: string }).skill).toBe("house-style");
        expect(tree(dest)).toEqual(source);
        expect(statSync(join(dest, "scripts", "check.sh")).mode & 0o777).toBe(0o755);
        expect(skillProblems(readFileSync(join(dest, "SKILL.md"), "utf8"), "house-style")).toEqual([]);

        const again = await runCli(["integrate", agent, "--skill", run, ...where], { env });
        expect(again.code).toBe(2);
        expect(again.stderr).toContain(
          `skillopt integrate ${agent} --skill house-style is already installed in ${root}`,
        );

        const rm = await runCli(["integrate", agent, "--skill", run, ...where, "--remove"], { env });
        expect(rm.code).toBe(0);
        expect(readdirSync(root)).toEqual([]);
      }
    }, 60_000);

  test("refuses devin, a folder without SKILL.md, and a SKILL.md name that is not a skill name", async () => {
    using tmp = tempDir("integrate-skill-refuse-");
    const run = runFolder(tmp.path);
    const p = join(tmp.path, "proj");
    mkdirSync(p);
    const devin = await runCli(["integrate", "devin", "--skill", run, "--project", p]);
    expect(devin.code).toBe(2);
    expect(devin.stderr).toContain("devin has no documented folder for Agent Skills");
    const none = await runCli(["integrate", "claude", "--skill", p, "--project", p]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      `--skill ${p}: not a skill folder (no SKILL.md) nor a run folder holding best_skill/`,
    );
    const skill = join(run, "best_skill", "SKILL.md");
    writeFileSync(skill, readFileSync(skill, "utf8").replace("name: house-style", "name: House Style"));
    const bad = await runCli(["integrate", "claude", "--skill", run, "--project", p]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`SKILL.md's name "House Style" is not a skill name`);
    expect(readdirSync(p)).toEqual([]);
  }, 60_000);
});
