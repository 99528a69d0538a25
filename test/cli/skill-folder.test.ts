import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { writeBestSkillFolder } from "../../src/cli/skill-folder.ts";
import { packPackage } from "../../src/lib/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const POSTMORTEM = join(REPO_ROOT, "fixtures", "benchmarks", "trigger", "incident-postmortem");

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

/** A skill folder: the fixture's SKILL.md with a BOM and CRLF line ends, a reference, a script and a binary file. */
function folder(root: string): string {
  const dir = join(root, "incident-postmortem");
  cpSync(POSTMORTEM, dir, { recursive: true });
  const skill = readFileSync(join(POSTMORTEM, "SKILL.md"), "utf8").replaceAll("\n", "\r\n");
  writeFileSync(join(dir, "SKILL.md"), `\uFEFF${skill}`);
  mkdirSync(join(dir, "references"));
  writeFileSync(join(dir, "references", "severity.md"), "# Severity\r\n\r\nSEV1: customer-facing outage.\r\n");
  mkdirSync(join(dir, "scripts"));
  writeFileSync(join(dir, "scripts", "timeline.sh"), "#!/bin/sh\ngrep -h 'INC-' \"$@\" | sort\n", { mode: 0o755 });
  writeFileSync(join(dir, "scripts", "logo.bin"), new Uint8Array([0, 255, 1, 254, 10, 13, 0]));
  return dir;
}

const EVALS = (dir: string) => `env.data_path=${join(dir, "evals", "trigger_evals.json")}`;

describe("a skill folder as env.skill_init", () => {
  test("comes back as best_skill/ byte for byte when nothing is accepted", async () => {
    using tmp = tempDir();
    const dir = folder(tmp.path);
    const out = join(tmp.path, "run");
    const r = await runCli(
      [
        "train",
        "--config",
        "trigger",
        "--set",
        "model.backend=sim",
        "--set",
        EVALS(dir),
        "--set",
        `env.skill_init=${dir}`,
        // Under the paired rule no gain can reach a minimum effect of 100 points: every candidate is rejected.
        "--set",
        "evaluation.gate_rule=paired",
        "--set",
        "evaluation.gate_min_effect=1",
        "--out",
        out,
        "--json",
      ],
      { env: { SKILLOPT_CACHE_DIR: join(tmp.path, "cache") } },
    );
    expect({ code: r.code, stderr: r.code ? r.stderr : "" }).toEqual({ code: 0, stderr: "" });
    const s = JSON.parse(r.stdout) as { accepted: number; best_skill_dir: string };
    expect(s.accepted).toBe(0);
    expect(s.best_skill_dir).toBe(join(out, "best_skill"));
    expect(tree(join(out, "best_skill"))).toEqual(tree(dir));
    expect(statSync(join(out, "best_skill", "scripts", "timeline.sh")).mode & 0o777).toBe(0o755);
  }, 60_000);

  test("an accepted description changes SKILL.md only; eval scores the folder by its SKILL.md", async () => {
    using tmp = tempDir();
    const dir = folder(tmp.path);
    const out = join(tmp.path, "run");
    const env = { env: { SKILLOPT_CACHE_DIR: join(tmp.path, "cache") } };
    const sets = ["--config", "trigger", "--set", "model.backend=sim", "--set", EVALS(dir)];
    const r = await runCli(
      [
        "train",
        ...sets,
        "--set",
        `env.skill_init=${dir}`,
        "--set",
        "evaluation.gate_rule=strict",
        "--set",
        "train.batch_size=8",
        "--set",
        "train.num_epochs=4",
        "--set",
        "train.seed=3",
        "--out",
        out,
      ],
      env,
    );
    expect({ code: r.code, stderr: r.code ? r.stderr.slice(-500) : "" }).toEqual({ code: 0, stderr: "" });
    expect(r.stdout).toContain(`best skill folder: ${join(out, "best_skill")}`);
    const before = tree(dir);
    const after = tree(join(out, "best_skill"));
    expect([...after.keys()].sort()).toEqual([...before.keys()].sort());
    for (const [f, bytes] of before) if (f !== "SKILL.md") expect(after.get(f)).toEqual(bytes);
    const trained = after.get("SKILL.md")!.toString("utf8");
    expect(trained).not.toBe(before.get("SKILL.md")!.toString("utf8"));
    // best_skill.md holds the whole package in one text: the trained SKILL.md, then each text file between
    // markers (carried fixed: trigger training trains only the description).
    const packed = readFileSync(join(out, "best_skill.md"), "utf8");
    expect(packed.startsWith(trained)).toBe(true);
    expect(packed.slice(trained.length)).toBe(
      "\n<!-- SKILLOPT_FILE references/severity.md (fixed) -->\n# Severity\r\n\r\nSEV1: customer-facing outage.\r\n\n<!-- SKILLOPT_FILE_END -->\n",
    );
    const ev = await runCli(["eval", ...sets, "--skill", join(out, "best_skill"), "--out", join(tmp.path, "ev")], env);
    expect(ev.code).toBe(0);
    expect(ev.stdout).toMatch(/f1=/);
  }, 60_000);

  test("a folder without a SKILL.md is refused in one line that says what a skill folder holds (exit 2)", async () => {
    using tmp = tempDir();
    const empty = join(tmp.path, "not-a-skill");
    mkdirSync(empty);
    const r = await runCli(["eval", "--config", "quickstart", "--skill", empty]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      `error: --skill ${empty}: is a directory without a SKILL.md; expected a Markdown file or a skill folder holding SKILL.md`,
    );
  });

  test("a link inside the folder is refused by name before anything runs", async () => {
    using tmp = tempDir();
    const dir = folder(tmp.path);
    symlinkSync("/etc/hostname", join(dir, "references", "host.md"));
    const out = join(tmp.path, "run");
    const r = await runCli([
      "train",
      "--config",
      "trigger",
      "--set",
      "model.backend=sim",
      "--set",
      EVALS(dir),
      "--set",
      `env.skill_init=${dir}`,
      "--out",
      out,
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("references/host.md is not a regular file");
    expect(await Bun.file(join(out, "state.sqlite")).exists()).toBe(false);
  });

  test("a single file to which training added files comes back as a folder; a path leaving the folder is never written", () => {
    using tmp = tempDir();
    const skill = "---\nname: x\ndescription: y\n---\n# X\n";
    const best = packPackage(`${skill}See references/new.md.\n`, [
      { path: "references/new.md", text: "- a rule\n", fixed: false },
      { path: "../escape.md", text: "no\n", fixed: false },
    ]);
    const out = writeBestSkillFolder(tmp.path, { dir: tmp.path, files: [] }, skill, best);
    expect(Object.fromEntries([...tree(out)].map(([k, v]) => [k, v.toString("utf8")]))).toEqual({
      "SKILL.md": `${skill}See references/new.md.\n`,
      "references/new.md": "- a rule\n",
    });
    expect(readdirSync(tmp.path).sort()).toEqual(["best_skill"]);
  });
});
