import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { output } from "../../src/cli/output.ts";
import { log } from "../../src/lib/index.ts";
import { runCliProcess, runInProcess } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// test/support/cli.ts's runCli runs the command tree inside the test process. These check that it
// gives what a process gives, and that it leaves the test process as it found it.

/** Commands whose whole output does not depend on the moment: a result, a usage error, a failure, JSON. */
const SAME: { name: string; args: string[] }[] = [
  { name: "version", args: ["version"] },
  { name: "an unknown flag (exit 2)", args: ["train", "--foo"] },
  { name: "a mistyped command with --json", args: ["trian", "--json"] },
  { name: "the resolved config as JSON", args: ["config", "--config", "quickstart", "--json"] },
  { name: "a missing skill file (exit 2)", args: ["eval", "--config", "quickstart", "--skill", "nope.md"] },
  { name: "runs in an empty folder, --quiet", args: ["runs", "--quiet"] },
];

// With SKILLOPT_BIN every run is the compiled binary's, and nothing runs in-process to compare.
describe.skipIf(Boolean(process.env.SKILLOPT_BIN))("runCli in the test process", () => {
  for (const c of SAME) {
    test(`gives what a process gives: ${c.name}`, async () => {
      using dir = tempDir("in-process-");
      const opts = { cwd: dir.path, env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") } };
      const inside = await runInProcess(c.args, opts);
      const spawned = await runCliProcess(c.args, opts);
      expect(inside).toEqual(spawned);
    });
  }

  test("puts back the environment, cwd, argv, exit code, streams, output mode, logger and listeners", async () => {
    using dir = tempDir("in-process-");
    const before = {
      env: { ...process.env },
      cwd: process.cwd(),
      argv: [...process.argv],
      exitCode: process.exitCode,
      output: { ...output },
      level: log.level,
      write: [process.stdout.write, process.stderr.write],
      tty: [process.stdout.isTTY, process.stderr.isTTY],
      listeners: ["SIGINT", "SIGTERM"].map((s) => process.listenerCount(s)),
    };
    const r = await runInProcess(["eval", "--config", "quickstart", "--skill", "missing.md", "--debug", "--no-color"], {
      cwd: dir.path,
      env: { HOME: join(dir.path, "home"), NO_COLOR: undefined, OPENAI_API_KEY: "sk-test-not-a-key-0000" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("missing.md");
    expect({ ...process.env }).toEqual(before.env);
    expect(process.cwd()).toBe(before.cwd);
    expect(process.argv).toEqual(before.argv);
    expect(process.exitCode).toBe(before.exitCode ?? 0);
    expect({ ...output }).toEqual(before.output);
    expect(log.level).toBe(before.level);
    expect([process.stdout.write, process.stderr.write]).toEqual(before.write);
    expect([process.stdout.isTTY, process.stderr.isTTY]).toEqual(before.tty);
    expect(["SIGINT", "SIGTERM"].map((s) => process.listenerCount(s))).toEqual(before.listeners);
  });

  test("a run sees the call's environment and cwd; runs started together take turns", async () => {
    using a = tempDir("in-process-a-");
    using b = tempDir("in-process-b-");
    writeFileSync(join(a.path, "skill.md"), "# A\n\nAnswer briefly.\n");
    const evalArgs = ["eval", "--config", "quickstart", "--skill", "skill.md", "--quiet"];
    const [inA, inB] = await Promise.all([
      runInProcess(evalArgs, { cwd: a.path, env: { SKILLOPT_CACHE_DIR: join(a.path, "cache") } }),
      runInProcess(evalArgs, { cwd: b.path, env: { SKILLOPT_CACHE_DIR: join(b.path, "cache") } }),
    ]);
    expect(inA.code, inA.stderr).toBe(0);
    expect(existsSync(join(a.path, "cache"))).toBe(true);
    expect(inB.code).toBe(2);
    expect(inB.stderr).toContain(join(b.path, "skill.md"));
    expect(existsSync(join(b.path, "cache"))).toBe(false);
  });

  // Own timeout: a bun process of its own, which the watchdog kills after a second of being blocked.
  test("a run that blocks the thread ends the test process with one line naming it, instead of a suite that never ends", async () => {
    using dir = tempDir("in-process-");
    const script = join(dir.path, "blocked.ts");
    writeFileSync(
      script,
      `import { watched } from ${JSON.stringify(join(import.meta.dir, "..", "support", "watchdog.ts"))};
       await watched("skillopt sleep diff", async () => {
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30_000);
       });
       process.stdout.write("returned");`,
    );
    const child = Bun.spawn([process.execPath, script], {
      env: { ...process.env, SKILLOPT_TEST_BLOCKED_S: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
    await child.exited;
    expect(child.signalCode).toBe("SIGKILL");
    expect(stdout).toBe("");
    expect(stderr).toContain("in-process run `skillopt sleep diff` blocked the test process for");
  }, 30_000);
});
