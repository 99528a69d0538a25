import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { buildFakeHome } from "../sleep/support/fake-home.ts";
import { launchBrowser, type TestBrowser } from "../support/browser.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "./support.ts";

// These tests start real processes (training runs, the CLI) and a browser; bun's default is 5 s
// (bunfig.toml's [test] timeout is not a bun setting). Each still finishes in a few seconds.
setDefaultTimeout(120_000);

const tmp = tempDir("skillopt-ui-sleep-");
const servers: UiServer[] = [];
let b: TestBrowser;

/** A fake home with a project whose sessions hold corrections, a staged night, and a dashboard on it. */
async function setup(name: string): Promise<{ ui: UiServer; home: string; project: string; night: string }> {
  const { home, project } = buildFakeHome(join(tmp.path, name));
  const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
  const r = await runCli(["sleep", "review", "--backend", "mock", "--source", "all", "--project", project, "--json"], { env, cwd: project });
  expect(r.code).toBe(0);
  const ui = startUi({ root: join(tmp.path, name, "outputs"), port: 0, command: [process.execPath, join(REPO_ROOT, "src", "main.ts")], cwd: project, env, sleepProject: project });
  servers.push(ui);
  return { ui, home, project, night: JSON.parse(r.stdout).staging_dir as string };
}

let adoptSetup: Awaited<ReturnType<typeof setup>>;
let rejectSetup: Awaited<ReturnType<typeof setup>>;

beforeAll(async () => {
  [b, adoptSetup, rejectSetup] = await Promise.all([launchBrowser(), setup("adopt"), setup("reject")]);
});

afterAll(async () => {
  await b?.close();
  for (const s of servers) await s.stop();
  tmp[Symbol.dispose]();
});

describe("Sleep panel", () => {
  test("shows a staged night's gate result and diff; Adopt applies it through the CLI's adopt", async () => {
    const { ui, home, night } = adoptSetup;
    const page = b.page;
    await page.goto(ui.tokenUrl);
    await page.goto(`${ui.url}/sleep`);
    const card = page.locator('details.night[data-state="staged"]');
    await card.waitFor();
    expect(await card.locator("p", { hasText: "Gate:" }).textContent()).toContain("accept_new_best");
    expect(await card.locator("table.diff-unified tr.add", { hasText: "Use `bun test` instead of `npm test`." }).count()).toBe(1);
    await b.screenshot(page, "ui-sleep-staged");
    const skillPath = join(home, ".claude", "skills", "skillopt-sleep-learned", "SKILL.md");
    expect(readFileSync(skillPath, "utf8")).not.toContain("Use `bun test` instead of `npm test`.");
    await card.locator("button.adopt-btn").click();
    await page.locator('details.night[data-state="adopted"]').waitFor({ timeout: 45_000 });
    expect(readFileSync(skillPath, "utf8")).toContain("- Use `bun test` instead of `npm test`.");
    expect(existsSync(join(night, "adopted_legacy.json"))).toBe(true);
    expect(b.errors).toEqual([]);
  });

  test("Reject needs a session, then discards the night through the CLI's reject", async () => {
    const { ui, project, night } = rejectSetup;
    const refused = await fetch(`${ui.url}/api/sleep/reject`, { method: "POST", body: JSON.stringify({ project, night }) });
    expect(refused.status).toBe(401);
    expect(existsSync(join(night, "rejected.json"))).toBe(false);
    const r = await fetch(`${ui.url}/api/sleep/reject`, {
      method: "POST",
      body: JSON.stringify({ project, night }),
      headers: await signIn(ui),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ ok: true, staging_dir: night, exit_code: 0 });
    expect(existsSync(join(night, "rejected.json"))).toBe(true);
  });

  test("a night outside the project is refused", async () => {
    const ui = servers[0]!;
    const project = join(tmp.path, "adopt", "work", "app");
    const r = await fetch(`${ui.url}/api/sleep/adopt`, {
      method: "POST",
      body: JSON.stringify({ project, night: tmp.path }),
      headers: await signIn(ui),
    });
    expect(r.status).toBe(404);
  });
});
