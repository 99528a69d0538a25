import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { REPO_ROOT } from "./cli.ts";
import { CHROMIUM_PATH } from "./prereqs.ts";

export { CHROMIUM_PATH };

/** Where browser tests put screenshots for review (gitignored). */
export const TEST_OUTPUT = join(REPO_ROOT, "test-output");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors seen so far on any page of the context. */
  errors: string[];
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Launch Debian's Chromium through playwright-core with a fresh profile. A browser test file asks
 * `missing("chromium", import.meta.path)` first (test/support/prereqs.ts): skipped, and named at the
 * end of the run, on a machine without Chromium; a failure under CI. Launching anyway throws with the
 * command that installs it.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `browser tests need Chromium at ${CHROMIUM_PATH}; install it with \`apt-get install -y chromium\` (.ci/run does this) or set SKILLOPT_CHROMIUM`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "skillopt-chromium-"));
  // playwright-core's launch passes --user-data-dir itself when asked for a persistent context.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  // Playwright's own 30 s default is a timing assumption a busy machine breaks; the test's timeout bounds the wait instead.
  context.setDefaultTimeout(100_000);
  const errors: string[] = [];
  const watch = (page: Page) => {
    page.on("console", (msg) => {
      if (msg.type() === "error") errors.push(`console: ${msg.text()}`);
    });
    page.on("pageerror", (err) => errors.push(`pageerror: ${err.message}`));
  };
  context.pages().forEach(watch);
  context.on("page", watch);
  const page = context.pages()[0] ?? (await context.newPage());
  mkdirSync(TEST_OUTPUT, { recursive: true });
  return {
    context,
    page,
    errors,
    async screenshot(p, name) {
      const path = join(TEST_OUTPUT, `${name}.png`);
      await p.screenshot({ path, fullPage: true });
      return path;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export type { Browser, Page };
