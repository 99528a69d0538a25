import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";

const MAIN = join(REPO_ROOT, "src", "main.ts");
const run = (args: string[], stdout: "pipe" | Bun.BunFile = "pipe") => {
  const r = Bun.spawnSync([process.execPath, MAIN, ...args], {
    stdout,
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { exitCode: r.exitCode, stdout: r.stdout?.toString() ?? "", stderr: r.stderr.toString() };
};

// Issue 31 §1: `version` is answered by src/cli/quick.ts before the CLI loads (the binary's
// `--help` too: test/build.test.ts); with one more global flag the same command goes through citty.
describe("the start-up fast path (src/main.ts)", () => {
  test("`version`, `--version` and `-v` print what the full CLI prints", () => {
    const full = run(["--no-color", "version"]);
    expect(full.exitCode).toBe(0);
    expect(full.stdout).toMatch(/^skillopt \S+ \(commit \S+, .+, bun \S+\)\n$/);
    for (const args of [["version"], ["--version"], ["-v"]]) {
      const quick = run(args);
      expect(quick.exitCode).toBe(0);
      expect(quick.stdout).toBe(full.stdout);
    }
  });

  test("a stdout that cannot be written is one line on stderr and exit 1, as for any command", () => {
    const quick = run(["version"], Bun.file("/dev/full"));
    const full = run(["--no-color", "version"], Bun.file("/dev/full"));
    expect(quick.exitCode).toBe(1);
    expect(quick.stderr).toBe(full.stderr);
    expect(quick.stderr.trim().split("\n")[0]).toContain("ENOSPC");
    expect(quick.stderr).not.toContain("    at ");
  });

  test("a full disk behind stdout is a file-system failure naming standard output, with or without --json", () => {
    for (const args of [
      ["config", "--config", "quickstart"],
      ["--json", "config", "--config", "quickstart"],
    ]) {
      const r = run(args, Bun.file("/dev/full"));
      expect(r.exitCode).toBe(1);
      expect(r.stderr).toBe(
        "error: cannot write standard output: no space left on device (ENOSPC)\n" +
          "  hint: free some space (or choose another --out) and rerun; completed work is kept\n",
      );
    }
  });
});
