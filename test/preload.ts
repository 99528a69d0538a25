import { afterAll } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { skippedSummary } from "./support/prereqs.ts";

// Every test process gets its own home, XDG dirs and state dirs, and no provider keys, before
// any src/ module reads the environment.
// bunfig.toml points the JUnit reporter here; it does not create the directory itself.
mkdirSync(join(import.meta.dir, "..", "test-output"), { recursive: true });

const root = mkdtempSync(join(tmpdir(), "skillopt-test-"));
const home = join(root, "home");
for (const d of ["home", "cache", "config", "state", "data"]) mkdirSync(join(root, d), { recursive: true });
process.env.HOME = home;
process.env.USERPROFILE = home;
process.env.XDG_CACHE_HOME = join(root, "cache");
process.env.XDG_CONFIG_HOME = join(root, "config");
process.env.XDG_STATE_HOME = join(root, "state");
process.env.XDG_DATA_HOME = join(root, "data");
process.env.SKILLOPT_CACHE_DIR = join(root, "cache", "skillopt");
process.env.SKILLOPT_STATE_DIR = join(root, "state", "skillopt");
process.env.SKILLOPT_SLEEP_STATE_DIR = join(home, ".skillopt-sleep");
process.env.SKILLOPT_TEST_ROOT = root;
process.env.NO_COLOR = "1";
process.env.SKILLOPT_LOG_LEVEL = "silent";
const KEY_VARS =
  /(_API_KEY|_TOKEN|_SECRET|_BASE_URL|_ENDPOINT|_AUTH_MODE)$|^(OPENAI|AZURE_OPENAI|ANTHROPIC|QWEN|MINIMAX|OPTIMIZER|TARGET|CODEX|CLAUDE|CURSOR|COPILOT)_/;
for (const k of Object.keys(process.env)) if (KEY_VARS.test(k)) delete process.env[k];

// No suite-wide timeout: every test has Bun's default 5 s, and a test that needs longer says so
// beside it, with the reason (Bun applies a preload's setDefaultTimeout to the first file only).

// A machine without Chromium or openpyxl skips the tests that need them (test/support/prereqs.ts);
// the run ends saying which and how to install what is missing. In a preload, afterAll runs once
// after every file.
afterAll(() => {
  for (const line of skippedSummary()) process.stderr.write(`\n${line}\n`);
});
