import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sleepConfigLayer } from "../../src/cli/sleep/config-layer.ts";
import { loadSleepConfig } from "../../src/sleep/config.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

function sleepHome(root: string, name: string, text: string): { home: string; project: string; file: string } {
  const home = join(root, "home");
  const project = join(root, "project");
  mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
  mkdirSync(project, { recursive: true });
  const file = join(home, ".skillopt-sleep", name);
  writeFileSync(file, text);
  return { home, project, file };
}

describe("a bad Sleep config file is one line naming file:line:col and the key", () => {
  test("a wrong value in config.yaml: exit 2, the key's position and dot path", async () => {
    using tmp = tempDir("sleep-config-");
    const { home, project, file } = sleepHome(tmp.path, "config.yaml", "backend: mock\n\nedit_budget: lots\n");
    const r = await runCli(["sleep", "status", "--project", project], { env: { HOME: home }, cwd: project });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([
      `config error: ${file}:3:1: edit_budget: expected an integer ≥ 0, got "lots"`,
    ]);
  });

  test("an unknown key in config.json: did-you-mean, and the typed facts under --json", async () => {
    using tmp = tempDir("sleep-config-");
    const { home, project, file } = sleepHome(
      tmp.path,
      "config.json",
      '{\n  "backend": "mock",\n  "edit_budgett": 3\n}\n',
    );
    const r = await runCli(["sleep", "status", "--project", project, "--json"], { env: { HOME: home }, cwd: project });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toEqual({
      code: "config",
      exit_code: 2,
      message: `${file}:3:3: edit_budgett: unknown key (did you mean "edit_budget"?)`,
      data: {
        file,
        line: 3,
        column: 3,
        key: "edit_budgett",
        issues: [{ path: "edit_budgett", message: "unknown key" }],
      },
    });
  });

  test("a YAML syntax error is placed like the engine's", async () => {
    using tmp = tempDir("sleep-config-");
    const { home, project, file } = sleepHome(tmp.path, "config.yml", "backend: mock\nmodel: [unclosed\n");
    const r = await runCli(["sleep", "status", "--project", project], { env: { HOME: home }, cwd: project });
    expect(r.code).toBe(2);
    expect(r.stderr).toStartWith(`config error: ${file}:`);
    expect(r.stderr).toContain("YAML syntax error");
  });

  test("a value a flag set is blamed on the flags, not the file", () => {
    using tmp = tempDir("sleep-config-");
    const { file } = sleepHome(tmp.path, "config.yaml", "edit_budget: 2\n");
    expect(() => loadSleepConfig(sleepConfigLayer, { backend: "claud" }, { file })).toThrow(/^flags: backend: /);
    expect(loadSleepConfig(sleepConfigLayer, {}, { file }).config.edit_budget).toBe(2);
  });
});
