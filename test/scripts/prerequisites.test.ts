import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

// `npm test` on a fresh machine without Chromium or openpyxl: the tests that need them are
// skipped and the run says so, naming the install command; under CI the same run fails.
// Both prerequisites are made missing through the checks' own settings (a nonexistent Chromium
// and Python), so this machine's installs are untouched. One browser file and one SpreadsheetBench
// file stand for the rest: every such file asks test/support/prereqs.ts the same way.
const FILES = ["test/ui/sleep.test.ts", "test/benchmarks/spreadsheet-exec.test.ts"];

async function bunTest(ci: string | undefined, junit: string) {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  delete env.CI;
  if (ci !== undefined) env.CI = ci;
  env.SKILLOPT_CHROMIUM = "/nonexistent/chromium";
  env.SKILLOPT_TEST_PYTHON = "/nonexistent/python3";
  // Run from a scratch folder with the preload named, so the child writes its own JUnit report
  // rather than the one bunfig.toml gives this run.
  const proc = Bun.spawn(
    [
      process.execPath,
      "test",
      "--preload",
      join(REPO_ROOT, "test", "preload.ts"),
      "--timeout",
      "60000",
      "--reporter=junit",
      `--reporter-outfile=${junit}`,
      ...FILES.map((f) => join(REPO_ROOT, f)),
    ],
    { cwd: dirname(junit), env, stdout: "pipe", stderr: "pipe", timeout: 120_000 },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out: stdout + stderr };
}

describe("tests that need Chromium or openpyxl on a machine without them", () => {
  test("are skipped, and the run exits 0 naming each skipped file, what is missing and the command that installs it", async () => {
    using dir = tempDir();
    const r = await bunTest(undefined, join(dir.path, "junit.xml"));
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      "skipped the tests in test/ui/sleep.test.ts: Chromium is not at /nonexistent/chromium; install it with `sudo apt-get install -y chromium`",
    );
    expect(r.out).toContain(
      "skipped the tests in test/benchmarks/spreadsheet-exec.test.ts: /nonexistent/python3 cannot import openpyxl; install it with `sudo apt-get install -y python3-openpyxl`",
    );
    expect(r.out).not.toContain("(unnamed)");
    expect(r.out).toMatch(/\n\s*0 fail/);
    const totals = readFileSync(join(dir.path, "junit.xml"), "utf8").match(/<testsuites [^>]*>/)?.[0] ?? "";
    expect(totals).toMatch(/ failures="0"/);
    expect(Number(totals.match(/ skipped="(\d+)"/)?.[1])).toBeGreaterThan(5);
  });

  test("under CI=true each missing prerequisite is a failing test, so CI cannot go green without them", async () => {
    using dir = tempDir();
    const r = await bunTest("true", join(dir.path, "junit.xml"));
    expect(r.code).not.toBe(0);
    expect(r.out).toContain("(fail) prerequisite: Chromium is not at /nonexistent/chromium");
    expect(r.out).toContain("(fail) prerequisite: /nonexistent/python3 cannot import openpyxl");
    expect(r.out).toMatch(/\n\s*2 fail/);
  });

  test(".ci/run installs both and runs the suite under CI=true", () => {
    const script = readFileSync(join(REPO_ROOT, ".ci", "run"), "utf8");
    expect(script).toContain("need+=(chromium)");
    expect(script).toContain("need+=(python3-openpyxl)");
    expect(script).toMatch(/CI=true npm test/);
  });
});
