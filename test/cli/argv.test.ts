import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalArgv } from "../../src/cli/args.ts";
import { UsageError } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// One argument parser decides, from each command's flag definitions, which token is a flag, which
// is a flag's value and which is positional. These run the real CLI.
const scratch = tempDir("skillopt-argv-");
const cwd = scratch.path;
writeFileSync(join(cwd, "skill.md"), "# A skill\n\nAnswer briefly.\n");
afterAll(() => scratch[Symbol.dispose]());

describe("--cfg-options takes several KEY=VALUE tokens (upstream's documented form)", () => {
  test("train: --cfg-options limit=5 seed=7 sets both", async () => {
    const r = await runCli(
      ["train", "--config", "quickstart", "--cfg-options", "limit=5", "seed=7", "--dry-run", "--json"],
      { cwd },
    );
    expect(r.stderr).not.toContain("unexpected argument");
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout) as { splits: { train: number } };
    expect(plan.splits.train).toBe(5);
  });

  test("eval: --cfg-options limit=5 seed=7 sets both", async () => {
    const out = join(cwd, "eval-out");
    const r = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        "skill.md",
        "--cfg-options",
        "limit=5",
        "seed=7",
        "--out",
        out,
        "--json",
      ],
      { cwd },
    );
    expect(r.stderr).not.toContain("unexpected argument");
    expect(r.code).toBe(0);
    // limit=5 caps each of the three splits the quickstart evaluates.
    expect((JSON.parse(r.stdout) as { n_items: number }).n_items).toBe(15);
  });

  test("config: --cfg-options seed=7 batch_size=3 then another flag", async () => {
    const r = await runCli(["config", "--config", "quickstart", "--cfg-options", "seed=7", "batch_size=3", "--json"], {
      cwd,
    });
    expect(r.code).toBe(0);
    const c = JSON.parse(r.stdout) as { config: { train: { seed: number; batch_size: number } } };
    expect(JSON.stringify(c)).toContain('"seed":7');
    expect(JSON.stringify(c)).toContain('"batch_size":3');
  });

  test("--cfg-options with no value is one usage line", async () => {
    const r = await runCli(["config", "--config", "quickstart", "--cfg-options", "--json"], { cwd });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--cfg-options needs at least one k=v after it");
  });
});

describe("a flag's value is never read as another flag", () => {
  test("attacker: a PR adds `--set=env.name=x/SKILL.md`; `--skill PATH` evaluates that file", async () => {
    // A pull-request check passes each changed skill as `--skill PATH`. The PR's author names a
    // folder so that the path spells an override; it must stay the skill's path.
    mkdirSync(join(cwd, "--set=env.name=x"), { recursive: true });
    writeFileSync(join(cwd, "--set=env.name=x", "SKILL.md"), "# Hostile\n\nAnswer briefly.\n");
    const out = join(cwd, "o2");
    const r = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        "--set=env.name=x/SKILL.md",
        "--cfg-options",
        "limit=2",
        "--out",
        out,
        "--json",
      ],
      { cwd },
    );
    expect(r.stderr).not.toContain("unknown benchmark");
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { benchmark: string; skill: string };
    expect(summary.benchmark).toBe("conventions");
    expect(summary.skill).toEndWith("--set=env.name=x/SKILL.md");
    expect(existsSync(join(out, "eval_summary.json"))).toBe(true);
  });

  test("attacker: --config VALUE that spells --cfg-options changes nothing else", async () => {
    const r = await runCli(["config", "--env-file", "--cfg-options=seed=99", "--config", "quickstart", "--json"], {
      cwd,
    });
    expect(r.stdout).not.toContain('"seed": 99');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--cfg-options=seed=99");
  });

  test("attacker: an upstream per-key flag's value that spells --set is that flag's value", async () => {
    const r = await runCli(
      ["train", "--config", "quickstart", "--skill_init", "--set=env.name=y/SKILL.md", "--dry-run"],
      { cwd },
    );
    expect(r.stderr).not.toContain("unknown benchmark");
    expect(r.stderr).toContain("env.skill_init: file not found: --set=env.name=y/SKILL.md");
    expect(r.code).toBe(2);
  });

  test("an upstream boolean flag alone does not swallow the flag after it (--use_gate --dry-run stays a dry run)", async () => {
    const r = await runCli(["train", "--config", "quickstart", "--use_gate", "--dry-run", "--json"], { cwd });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { dry_run: boolean }).dry_run).toBe(true);
  });

  test("canonicalArgv glues each value to its flag, and aliases to their long name", () => {
    const args = {
      skill: { type: "string" },
      "cfg-options": { type: "string" },
      config: { type: "string", alias: "c" },
      debug: { type: "boolean" },
      night: { type: "positional" },
    } as const;
    expect(
      canonicalArgv(
        args,
        ["--skill", "--set=a=b", "-c", "q", "--cfg-options", "a=1", "b=2", "--debug", "N", "-5"],
        ["batch_size"],
      ),
    ).toEqual(["--skill=--set=a=b", "--config=q", "--cfg-options=a=1", "--cfg-options=b=2", "--debug", "N", "-5"]);
    expect(canonicalArgv(args, ["--batch-size", "--x", "--", "--skill", "y"], ["batch_size"])).toEqual([
      "--batch_size=--x",
      "--",
      "--skill",
      "y",
    ]);
    expect(() => canonicalArgv(args, ["--cfg-options"])).toThrow(UsageError);
    // Upstream's boolean flags: a value when one follows, true alone or before another flag.
    const bools = new Set(["use_gate"]);
    expect(canonicalArgv(args, ["--use_gate", "--debug"], ["use_gate"], bools)).toEqual(["--use_gate=true", "--debug"]);
    expect(canonicalArgv(args, ["--use-gate", "false"], ["use_gate"], bools)).toEqual(["--use_gate=false"]);
    expect(canonicalArgv(args, ["--use_gate"], ["use_gate"], bools)).toEqual(["--use_gate=true"]);
  });
});
