import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const COMMANDS = ["train", "eval", "sleep", "runs", "report", "ui", "mcp", "integrate", "configs", "config", "version"];

describe("skillopt CLI", () => {
  test("--help lists every command", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toContain(c);
  });

  test("sleep --help lists its subcommands", async () => {
    const r = await runCli(["sleep", "--help"]);
    expect(r.code).toBe(0);
    for (const c of ["review", "harvest", "status", "adopt", "reject", "schedule", "unschedule"])
      expect(r.stdout).toContain(c);
  });

  test("an unknown command exits 2 with a suggestion", async () => {
    const r = await runCli(["trian"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown command "trian" for "skillopt" (did you mean "train"?)');
  });

  test("an unknown flag exits 2 naming the flag", async () => {
    const r = await runCli(["configs", "--jsn"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flag --jsn for "skillopt configs" (did you mean --json?)');
  });

  test("version prints version, commit and bun", async () => {
    const r = await runCli(["version", "--json"]);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.stdout) as Record<string, string>;
    expect(Object.keys(v).sort()).toEqual(["bun", "commit", "target", "version"]);
  });

  test("configs lists the bundled configs as JSON", async () => {
    const r = await runCli(["configs", "--json"]);
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as { name: string }[];
    expect(rows.map((x) => x.name)).toContain("features/soft_gate");
  });

  test("config prints resolved YAML with secrets masked", async () => {
    const r = await runCli([
      "config",
      "--config",
      "features/soft_gate",
      "--set",
      "model.openai_compatible_api_key=sk-live-0123456789abcdef",
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("gate_metric: soft");
    expect(r.stdout).not.toContain("sk-live-0123456789abcdef");
    expect(r.stdout).toContain('openai_compatible_api_key: "****cdef"');
  });

  describe("bad configs exit 2 with one line naming file and key path, and no stack trace", () => {
    const cases: [string, string, string][] = [
      [
        "wrong type",
        "optimizer:\n  learning_rate: lots\n",
        'config error: bad.yaml:2:3: optimizer.learning_rate: expected a positive integer, got "lots"',
      ],
      [
        "unknown key",
        "optimizer:\n  learnin_rate: 3\n",
        'config error: bad.yaml:2:3: optimizer.learnin_rate: unknown key (did you mean "learning_rate"?)',
      ],
      ["YAML syntax", "train:\n  batch_size: [1,\n seed: 2\n", "config error: bad.yaml:3:2: YAML syntax error:"],
      [
        "missing base",
        "_base_: ../gone/base.yaml\n",
        "config error: bad.yaml: _base_: ../gone/base.yaml: file not found",
      ],
    ];
    test.each(cases)("%s", async (_name, text, expected) => {
      using dir = tempDir();
      writeFileSync(join(dir.path, "bad.yaml"), text);
      const r = await runCli(["config", "--config", "bad.yaml"], { cwd: dir.path });
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n")[0]).toStartWith(expected);
      expect(r.stderr).not.toContain("    at ");
      expect(r.stdout).toBe("");
    });
  });

  test("--debug adds the stack trace", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "bad.yaml"), "optimizer:\n  learning_rate: lots\n");
    const r = await runCli(["config", "--config", "bad.yaml", "--debug"], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("at ");
  });

  test("--json renders errors as JSON on stdout", async () => {
    const r = await runCli(["config", "--config", "nope-config", "--json"]);
    expect(r.code).toBe(2);
    expect((JSON.parse(r.stdout) as { error: { code: string } }).error.code).toBe("config");
  });

  test("--json errors carry their typed facts: file, line, column, key path and issues", async () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "bad.yaml"), "optimizer:\n  learning_rate: lots\n");
    const r = await runCli(["config", "--config", "bad.yaml", "--json"], { cwd: dir.path });
    expect(r.code).toBe(2);
    const { error } = JSON.parse(r.stdout) as {
      error: { code: string; exit_code: number; data: Record<string, unknown> };
    };
    expect(error.code).toBe("config");
    expect(error.exit_code).toBe(2);
    expect(error.data).toMatchObject({ line: 2, column: 3, key: "optimizer.learning_rate" });
    expect(String(error.data.file)).toEndWith("bad.yaml");
    expect(error.data.issues).toEqual([expect.objectContaining({ path: "optimizer.learning_rate" })]);
  });
});
