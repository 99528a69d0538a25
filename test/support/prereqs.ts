import { test } from "bun:test";
import { existsSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * What a group of tests needs from the machine beyond `npm install`: Chromium for the browser
 * tests, Python 3 with openpyxl for SpreadsheetBench. On a machine without one, its tests are
 * skipped and the run ends with a line naming what was skipped and the command that installs it
 * (the preload prints it), so `npm test` on a fresh clone is green and says what it did not test.
 *
 * Under CI (CI=true, as GitHub Actions and .ci/run set it) nothing is skipped silently: a missing
 * prerequisite is a failing test naming it, so CI cannot go green without running everything.
 *
 * The checks are injectable for the test of this very behaviour: SKILLOPT_CHROMIUM names the
 * Chromium binary, SKILLOPT_TEST_PYTHON the interpreter that must import openpyxl.
 */
export type Prerequisite = "chromium" | "openpyxl";

const REPO_ROOT = join(import.meta.dir, "..", "..");

export const CHROMIUM_PATH = process.env.SKILLOPT_CHROMIUM ?? "/usr/bin/chromium";

interface Missing {
  what: string;
  install: string;
  files: Set<string>;
}

const missingByKind = new Map<Prerequisite, Missing>();
const checks = new Map<Prerequisite, Promise<string | undefined>>();

/** True when CI says so: CI=true/1/yes. */
export function underCi(env: Record<string, string | undefined> = process.env): boolean {
  return /^(1|true|yes)$/i.test(env.CI ?? "");
}

const INSTALL: Record<Prerequisite, string> = {
  chromium:
    "install it with `sudo apt-get install -y chromium` (or set SKILLOPT_CHROMIUM to a Chromium binary); .ci/run installs it",
  openpyxl:
    "install it with `sudo apt-get install -y python3-openpyxl` (or `pip install openpyxl`); .ci/run installs it",
};

async function check(kind: Prerequisite): Promise<string | undefined> {
  if (kind === "chromium") {
    return existsSync(CHROMIUM_PATH) ? undefined : `Chromium is not at ${CHROMIUM_PATH}`;
  }
  const configured = process.env.SKILLOPT_TEST_PYTHON ?? "";
  // The same probe the benchmark itself runs (python3, python, /usr/bin/python3 importing openpyxl).
  const { interpreter } = await import("../../src/benchmarks/spreadsheetbench/executor.ts");
  try {
    await interpreter(configured);
    return undefined;
  } catch {
    return configured
      ? `${configured} cannot import openpyxl`
      : "no Python 3 with openpyxl (python3, python, /usr/bin/python3)";
  }
}

/**
 * Whether the calling test file must skip the tests that need `kind`: call it at the top of the
 * file (`const noBrowser = await missing("chromium", import.meta.path)`) and pass the answer to
 * `describe.skipIf` / `test.skipIf`, and return early from hooks that would use it.
 */
export async function missing(kind: Prerequisite, file: string): Promise<boolean> {
  let p = checks.get(kind);
  if (!p) {
    p = check(kind);
    checks.set(kind, p);
  }
  const reason = await p;
  if (reason === undefined) return false;
  const entry = missingByKind.get(kind) ?? { what: reason, install: INSTALL[kind], files: new Set<string>() };
  missingByKind.set(kind, entry);
  const name = relative(REPO_ROOT, file);
  if (!entry.files.has(name) && underCi()) {
    test(`prerequisite: ${reason}`, () => {
      throw new Error(`${reason}: CI runs every test; ${entry.install}`);
    });
  }
  entry.files.add(name);
  return true;
}

/** The lines the run ends with: one per missing prerequisite, naming the skipped files and the fix. */
export function skippedSummary(): string[] {
  return [...missingByKind.values()].map(
    (m) => `skipped the tests in ${[...m.files].sort().join(", ")}: ${m.what}; ${m.install}`,
  );
}
