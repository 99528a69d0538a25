import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BLOCK_END, BLOCK_START, projectMarker } from "../../src/sleep/scheduler.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

/** A real `crontab` executable on PATH that keeps the table in a file. */
function fakeCrontab(dir: string): { bin: string; table: string } {
  const bin = join(dir, "bin");
  const table = join(dir, "crontab.txt");
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    join(bin, "crontab"),
    `#!/bin/sh\nif [ "$1" = "-l" ]; then\n  if [ -f "${table}" ]; then cat "${table}"; exit 0; fi\n  echo "no crontab for user" >&2; exit 1\nfi\nif [ "$1" = "-" ]; then cat > "${table}"; exit 0; fi\nexit 2\n`,
  );
  chmodSync(join(bin, "crontab"), 0o755);
  return { bin, table };
}

describe.skipIf(process.platform === "win32")("sleep schedule / unschedule (crontab)", () => {
  test("installs one managed line per project keeping every flag, preserves foreign lines, and removes it again", async () => {
    using tmp = tempDir();
    const { bin, table } = fakeCrontab(tmp.path);
    writeFileSync(table, "MAILTO=me@example.com\n0 1 * * * /usr/bin/backup\n");
    const project = join(tmp.path, "proj");
    mkdirSync(project);
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const r = await runCli(
      [
        "sleep",
        "schedule",
        "--project",
        project,
        "--hour",
        "4",
        "--minute",
        "5",
        "--source",
        "codex",
        "--max-tasks",
        "7",
        "--memory-target",
        "AGENTS.md",
        "--auto-adopt",
      ],
      { env },
    );
    expect(r.code).toBe(0);
    const text = readFileSync(table, "utf8");
    expect(text.startsWith("MAILTO=me@example.com\n0 1 * * * /usr/bin/backup\n")).toBe(true);
    expect(text).toContain(BLOCK_START);
    expect(text).toContain(BLOCK_END);
    const line = text.split("\n").find((l) => l.endsWith(projectMarker(project)))!;
    expect(line.startsWith("5 4 * * *")).toBe(true);
    for (const part of [
      "sleep review",
      `--project ${project}`,
      "--scope invoked",
      "--backend mock",
      "--source codex",
      "--max-tasks 7",
      "--memory-target AGENTS.md",
      "--auto-adopt",
      ".skillopt-sleep/cron.log",
    ])
      expect(line).toContain(part);

    const again = await runCli(["sleep", "schedule", "--project", project, "--hour", "2"], { env });
    expect(again.code).toBe(0);
    const lines = readFileSync(table, "utf8")
      .split("\n")
      .filter((l) => l.endsWith(projectMarker(project)));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.startsWith("17 2 * * *")).toBe(true);

    const un = await runCli(["sleep", "unschedule", "--project", project], { env });
    expect(un.code).toBe(0);
    expect(readFileSync(table, "utf8")).toBe("MAILTO=me@example.com\n0 1 * * * /usr/bin/backup\n");
  });

  test("escapes % in the cron line, so cron runs the whole command (cron cuts at an unescaped %)", async () => {
    using tmp = tempDir();
    const { bin, table } = fakeCrontab(tmp.path);
    const project = join(tmp.path, "100%proj");
    mkdirSync(project);
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: join(tmp.path, "home") };
    const r = await runCli(["sleep", "schedule", "--project", project, "--preferences", "keep 50% of notes"], { env });
    expect(r.code).toBe(0);
    const line = readFileSync(table, "utf8")
      .split("\n")
      .find((l) => l.endsWith(projectMarker(project)))!;
    expect(line).not.toMatch(/(^|[^\\])%/);
    // What cron does with the line: five time fields, then the command up to the first
    // unescaped %, with each \% turned back into %.
    const fields = line.split(/\s+/);
    const rest = line.slice(line.indexOf(fields[5]!));
    const cut = /(^|[^\\])%/.exec(rest);
    const command = (cut ? rest.slice(0, cut.index + cut[1]!.length) : rest).replace(/\\%/g, "%");
    expect(command).toContain(`--preferences 'keep 50% of notes'`);
    // Run it as cron would: the scheduled review must reach the project and write its log there.
    const proc = Bun.spawnSync(["/bin/sh", "-c", command], { env: { ...process.env, ...env, NO_COLOR: "1" } });
    expect(proc.exitCode).not.toBe(127);
    expect(readFileSync(join(project, ".skillopt-sleep", "cron.log"), "utf8")).toContain("[sleep]");
  });

  test("the cron line carries PATH and the non-secret environment the review needs, never keys", async () => {
    using tmp = tempDir();
    const { bin, table } = fakeCrontab(tmp.path);
    const project = join(tmp.path, "proj");
    mkdirSync(project);
    const agentBin = join(tmp.path, "agent-bin");
    mkdirSync(agentBin);
    const env = {
      PATH: `${bin}:${agentBin}:${process.env.PATH}`,
      HOME: join(tmp.path, "home"),
      CODEX_HOME: join(tmp.path, "codex"),
      OPENAI_API_KEY: "sk-never-in-crontab-123456789",
    };
    const r = await runCli(["sleep", "schedule", "--project", project], { env });
    expect(r.code).toBe(0);
    const line = readFileSync(table, "utf8")
      .split("\n")
      .find((l) => l.endsWith(projectMarker(project)))!;
    expect(line).toContain(`env PATH=${bin}:${agentBin}:`);
    expect(line).toContain(`CODEX_HOME=${join(tmp.path, "codex")}`);
    expect(line).not.toContain("sk-never-in-crontab");
    expect(line).not.toContain("OPENAI_API_KEY");
    // Run the line's command under cron's minimal environment: the review runs and gets the user's PATH.
    const command = line.slice(line.indexOf("mkdir")).replace(/\\%/g, "%");
    const proc = Bun.spawnSync(["/bin/sh", "-c", command], { env: { PATH: "/usr/bin:/bin" } });
    expect(proc.exitCode).toBe(0);
    expect(readFileSync(join(project, ".skillopt-sleep", "cron.log"), "utf8")).toContain("[sleep]");
    const path = /env (PATH=\S+)/.exec(line)![1]!;
    const probe = Bun.spawnSync(["/bin/sh", "-c", `env ${path} /bin/sh -c 'echo $PATH'`], {
      env: { PATH: "/usr/bin:/bin" },
    });
    expect(probe.stdout.toString()).toContain(agentBin);
  });

  test("refuses an hour out of range with exit 2", async () => {
    using tmp = tempDir();
    const { bin } = fakeCrontab(tmp.path);
    const r = await runCli(["sleep", "schedule", "--hour", "24"], {
      env: { PATH: `${bin}:${process.env.PATH}` },
      cwd: tmp.path,
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--hour must be an integer 0..23");
  });

  test("a crontab that refuses the new table: exit 1, its words, and with --json the program and its exit code (schedule, unschedule)", async () => {
    using tmp = tempDir();
    const bin = join(tmp.path, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "crontab"),
      '#!/bin/sh\nif [ "$1" = "-l" ]; then echo "no crontab for user" >&2; exit 1; fi\necho "table is locked" >&2\nexit 3\n',
    );
    chmodSync(join(bin, "crontab"), 0o755);
    const project = join(tmp.path, "proj");
    mkdirSync(project);
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const text = await runCli(["sleep", "schedule", "--project", project], { env });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain("[sleep] crontab - failed: table is locked");
    const json = await runCli(["sleep", "schedule", "--project", project, "--json"], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toMatchObject({
      code: "staging",
      message: "crontab - failed: table is locked",
      data: { program: "crontab", exit_code: 3, problem: "scheduler_failed" },
    });
    const removed = await runCli(["sleep", "unschedule", "--project", project, "--json"], { env });
    expect(removed.code).toBe(1);
    expect(JSON.parse(removed.stdout).error.data).toEqual({
      program: "crontab",
      exit_code: 3,
      problem: "scheduler_failed",
    });
  });

  test("no crontab on PATH: with --json one error document (unsupported, feature crontab), the line to add as its hint", async () => {
    using tmp = tempDir();
    const empty = join(tmp.path, "empty");
    const project = join(tmp.path, "proj");
    mkdirSync(empty);
    mkdirSync(project);
    const env = { PATH: empty };
    const r = await runCli(["sleep", "schedule", "--project", project, "--json"], { env });
    expect(r.code).toBe(1);
    const e = JSON.parse(r.stdout).error;
    expect(e).toMatchObject({ code: "unsupported", data: { feature: "crontab", needs: "crontab on PATH" } });
    expect(e.hint).toContain(`sleep review --project ${project}`);
    const text = await runCli(["sleep", "schedule", "--project", project], { env });
    expect(text.code).toBe(1);
    expect(text.stdout).toContain(`sleep review --project ${project}`);
    const removed = await runCli(["sleep", "unschedule", "--project", project, "--json"], { env });
    expect(removed.code).toBe(1);
    expect(JSON.parse(removed.stdout).error.data).toEqual({ feature: "crontab", needs: "crontab on PATH" });
  });
});

describe("sleep subcommand help", () => {
  test("each subcommand's --help lists its own flags only; the shared flags are still accepted", async () => {
    const help = async (cmd: string) => (await runCli(["sleep", cmd, "--help"])).stdout;
    const adopt = await help("adopt");
    for (const f of ["--project", "--staging", "--all-skills", "--legacy", "--json"]) expect(adopt).toContain(f);
    for (const f of ["--backend", "--codex-path", "--lookback-hours", "--max-tasks", "--preferences"])
      expect(adopt).not.toContain(f);
    const diff = await help("diff");
    expect(diff).not.toContain("--backend");
    expect(diff).toContain("--project");
    const harvest = await help("harvest");
    expect(harvest).toContain("--source");
    expect(harvest).not.toContain("--edit-budget");
    expect(await help("review")).toContain("--edit-budget");
  });
});
