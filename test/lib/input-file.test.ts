import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, DataError, readInputText } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

function mkfifo(path: string): void {
  const r = Bun.spawnSync(["mkfifo", path]);
  if (r.exitCode !== 0) throw new Error(`mkfifo failed: ${r.stderr.toString()}`);
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected an error");
}

describe("readInputText: only regular files, never a hang (issue 12)", () => {
  test("a FIFO with no writer, a device, a directory and a missing path each get one line", () => {
    using dir = tempDir();
    const fifo = join(dir.path, "pipe");
    mkfifo(fifo);
    mkdirSync(join(dir.path, "d"));
    expect(thrown(() => readInputText(fifo, "--skill")).message).toBe(
      `--skill ${fifo}: is a named pipe (FIFO), expected a regular file`,
    );
    expect(thrown(() => readInputText("/dev/zero", "--skill")).message).toBe(
      "--skill /dev/zero: is a character device, expected a regular file",
    );
    expect(thrown(() => readInputText(join(dir.path, "d"), "x")).message).toBe(
      `x ${join(dir.path, "d")}: is a directory, expected a regular file`,
    );
    expect(thrown(() => readInputText(join(dir.path, "nope"), "x")).message).toBe(
      `x ${join(dir.path, "nope")}: file not found`,
    );
    expect(thrown(() => readInputText(fifo, "")).constructor).toBe(DataError);
    expect(thrown(() => readInputText(fifo, "--env-file", (m) => new ConfigError(m))).constructor).toBe(ConfigError);
  });

  test("a regular file is read", () => {
    using dir = tempDir();
    writeFileSync(join(dir.path, "a.txt"), "hello");
    expect(readInputText(join(dir.path, "a.txt"), "x")).toBe("hello");
  });

  test("the CLI refuses a FIFO as --env-file, --config, --skill, env.skill_init, env.data_path, a tasks file and a run's history", async () => {
    using dir = tempDir();
    const fifo = join(dir.path, "pipe");
    mkfifo(fifo);
    mkdirSync(join(dir.path, "run"));
    mkfifo(join(dir.path, "run", "history.jsonl"));
    const cases: [string[], string][] = [
      [
        ["config", "--config", "quickstart", "--env-file", fifo],
        `config error: --env-file ${fifo}: is a named pipe (FIFO)`,
      ],
      [["config", "--config", fifo], `config error: --config ${fifo}: is a named pipe (FIFO)`],
      [
        ["eval", "--config", "quickstart", "--skill", fifo, "--out", join(dir.path, "e")],
        `error: --skill ${fifo}: is a named pipe (FIFO)`,
      ],
      [
        [
          "train",
          "--config",
          "quickstart",
          "--set",
          `env.skill_init=${fifo}`,
          "--dry-run",
          "--out",
          join(dir.path, "t1"),
        ],
        `error: env.skill_init ${fifo}: is a named pipe`,
      ],
      [
        [
          "train",
          "--config",
          "quickstart",
          "--set",
          "env.name=tasks",
          "--set",
          `env.data_path=${fifo}`,
          "--dry-run",
          "--out",
          join(dir.path, "t2"),
        ],
        `error: ${fifo}: is a named pipe`,
      ],
      [["sleep", "run", "--tasks-file", fifo], `error: tasks file ${fifo}: is a named pipe`],
      [["report", join(dir.path, "run")], `error: ${join(dir.path, "run", "history.jsonl")}: is a named pipe`],
    ];
    for (const [args, start] of cases) {
      const r = await runCli(args, { cwd: dir.path, timeoutMs: 30_000 });
      expect({ args, stderr: r.stderr.split("\n")[0] }).toEqual({ args, stderr: expect.stringContaining(start) });
      expect(r.code).toBeGreaterThan(0);
    }
  }, 120_000);
});
