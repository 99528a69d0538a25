import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { buildFakeHome, plainSessions, writeClaudeSession } from "../sleep/support/fake-home.ts";
import { launchBrowser, type TestBrowser } from "../support/browser.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { missing } from "../support/prereqs.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "./support.ts";

// These tests start real processes (training runs, the CLI) and a browser; bun's default is 5 s
// (bunfig.toml's [test] timeout is not a bun setting). Each still finishes in a few seconds.
setDefaultTimeout(120_000);

const noBrowser = await missing("chromium", import.meta.path);

const tmp = tempDir("skillopt-ui-sleep-");
const servers: UiServer[] = [];
let b: TestBrowser;

interface Setup {
  ui: UiServer;
  home: string;
  project: string;
  night: string;
}

/** A dashboard on a project after one `sleep review --backend mock` night. */
async function review(name: string, home: string, project: string, source = "all"): Promise<Setup> {
  const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
  const r = await runCli(
    [
      "sleep",
      "review",
      "--backend",
      "mock",
      "--source",
      source,
      "--lookback-hours",
      "0",
      "--project",
      project,
      "--json",
    ],
    { env, cwd: project },
  );
  expect(r.code).toBe(0);
  const ui = startUi({
    root: join(tmp.path, name, "outputs"),
    port: 0,
    command: [process.execPath, join(REPO_ROOT, "src", "main.ts")],
    cwd: project,
    env,
    sleepProject: project,
  });
  servers.push(ui);
  return { ui, home, project, night: JSON.parse(r.stdout).staging_dir as string };
}

/** A fake home with a project whose sessions hold corrections: the night stages a gated skill edit. */
async function setup(name: string): Promise<Setup> {
  const { home, project } = buildFakeHome(join(tmp.path, name));
  return review(name, home, project);
}

/** Sessions that only ask questions: tasks are mined, nothing is proposed. */
async function setupNothing(name: string): Promise<Setup> {
  const home = join(tmp.path, name, "home");
  const project = join(tmp.path, name, "work", "app");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# App\n");
  for (const [i, s] of plainSessions().entries())
    writeClaudeSession(home, project, s, Date.parse("2026-11-30T09:00:00Z") + i * 60_000);
  return review(name, home, project, "claude");
}

/** The same correction in three sessions, a project with CLAUDE.md and AGENTS.md: one unverified lesson, two staged files. */
async function setupLesson(name: string): Promise<Setup> {
  const home = join(tmp.path, name, "home");
  const project = join(tmp.path, name, "work", "app");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "CLAUDE.md"), "# App\n\nHand-written notes.\n");
  writeFileSync(join(project, "AGENTS.md"), "# Agents\n");
  const tasks = ["Add a test for the slug helper", "Cover the retry policy with tests", "Test the CSV exporter"];
  for (const [i, task] of tasks.entries()) {
    const turns = [
      { user: task, assistant: "Done, ran jest." },
      {
        user: "no, run the tests with bun test and keep them under test/, never jest",
        assistant: "Re-ran with bun test.",
      },
    ];
    writeClaudeSession(
      home,
      project,
      { id: `1e55000${i}-aaaa-4bbb-8ccc-00000000000${i}`, turns },
      Date.parse("2026-11-24T09:00:00Z") + i * 86_400_000,
    );
  }
  return review(name, home, project, "claude");
}

let adoptSetup: Setup;
let rejectSetup: Setup;
let nothingSetup: Setup;
let lessonSetup: Setup;

beforeAll(async () => {
  if (noBrowser) return;
  [b, adoptSetup, rejectSetup, nothingSetup, lessonSetup] = await Promise.all([
    launchBrowser(),
    setup("adopt"),
    setup("reject"),
    setupNothing("nothing"),
    setupLesson("lesson"),
  ]);
});

afterAll(async () => {
  await b?.close();
  for (const s of servers) await s.stop();
  tmp[Symbol.dispose]();
});

describe.skipIf(noBrowser)("Sleep panel", () => {
  test("Adopt asks first, showing the diff and each edit's evidence; Cancel changes nothing; confirming adopts through the CLI; Rollback restores every byte", async () => {
    const { ui, home, night } = adoptSetup;
    const page = b.page;
    await page.goto(ui.tokenUrl);
    await page.goto(`${ui.url}/sleep`);
    const card = page.locator('details.night[data-state="staged"]');
    await card.waitFor();
    expect(await card.locator("p", { hasText: "Gate:" }).textContent()).toContain("accept_new_best");
    expect(
      await card
        .locator(".night-body table.diff-unified tr.add", { hasText: "Use `bun test` instead of `npm test`." })
        .count(),
    ).toBe(1);
    // The edit's verdict is the gate's, with its rule; the strict rule's accept is not passed off as the paired test's.
    const verdict = card.locator("table.edits td.edit-verdict");
    expect(await verdict.locator(".verdict").getAttribute("data-verdict")).toBe("accept");
    expect(await verdict.textContent()).toContain("strict rule");
    // What the paired test says depends on how many held-out tasks the night drew (the split hashes
    // the task ids, which hold the temporary project path): on a few it is undecided and the card
    // says so; when it agrees with the strict rule there is nothing to add.
    const report = JSON.parse(readFileSync(join(night, "report.json"), "utf8")) as {
      gate_trials: { gate?: { verdict: string; paired_verdict?: string } }[];
    };
    const gate = report.gate_trials.find((t) => t.gate?.paired_verdict)?.gate;
    expect(gate?.verdict).toBe("accept");
    if (gate!.paired_verdict !== gate!.verdict)
      expect(await verdict.textContent()).toContain(`the paired test on the same tasks: ${gate!.paired_verdict}`);
    else expect(await verdict.textContent()).not.toContain("the paired test");
    const skillPath = join(home, ".claude", "skills", "skillopt-sleep-learned", "SKILL.md");
    const original = readFileSync(skillPath);

    await card.locator("button.adopt-btn").click();
    const dialog = page.locator("dialog.sleep-confirm[open]");
    await dialog.waitFor();
    expect(
      await dialog.locator("table.diff-unified tr.add", { hasText: "Use `bun test` instead of `npm test`." }).count(),
    ).toBe(1);
    const evidence = dialog.locator(".evidence-card", { hasText: "Use `bun test` instead of `npm test`." });
    expect(await evidence.count()).toBe(1);
    expect(await evidence.locator(".card-verdict .verdict").getAttribute("data-verdict")).toBe("accept");
    expect(await evidence.textContent()).toContain(skillPath);
    await b.screenshot(page, "ui-sleep-adopt-confirm");
    await dialog.locator("button.cancel-btn").click();
    await page.locator("dialog.sleep-confirm[open]").waitFor({ state: "detached" });
    expect(readFileSync(skillPath)).toEqual(original);
    expect(existsSync(join(night, "adopted_legacy.json"))).toBe(false);

    await card.locator("button.adopt-btn").click();
    await page.locator("dialog.sleep-confirm[open] button.confirm-btn").click();
    const adopted = page.locator('details.night[data-state="adopted"]');
    await adopted.waitFor();
    expect(readFileSync(skillPath, "utf8")).toContain("- Use `bun test` instead of `npm test`.");
    expect(existsSync(join(night, "adopted_legacy.json"))).toBe(true);
    expect(await adopted.locator("button.adopt-btn").count()).toBe(0);

    await adopted.locator("button.rollback-btn").click();
    const rb = page.locator("dialog.sleep-confirm[open]");
    await rb.waitFor();
    expect(await rb.textContent()).toContain(skillPath);
    await b.screenshot(page, "ui-sleep-rollback-confirm");
    await rb.locator("button.confirm-btn").click();
    await page.locator('details.night[data-state="staged"]', { hasText: "rolled back" }).waitFor();
    expect(readFileSync(skillPath)).toEqual(original);
    expect(b.errors).toEqual([]);
  });

  test("a night with nothing to adopt is badged so, with no Adopt button", async () => {
    const { ui, night } = nothingSetup;
    expect(JSON.parse(readFileSync(join(night, "manifest.json"), "utf8"))).toMatchObject({
      has_managed_skill: false,
      has_managed_memory: false,
    });
    const page = await b.context.newPage();
    await page.goto(ui.tokenUrl);
    await page.goto(`${ui.url}/sleep`);
    const card = page.locator('details.night[data-state="nothing"]');
    await card.waitFor();
    expect(await card.locator("summary .badge").textContent()).toBe("nothing to adopt");
    // Nothing was replayed: no score is shown as if it were one.
    expect(await card.locator("p", { hasText: "Gate:" }).textContent()).toContain(
      "held-out score not scored (nothing was replayed)",
    );
    expect(await page.locator('details.night[data-state="staged"]').count()).toBe(0);
    expect(await card.locator("button").count()).toBe(0);
    await page.close();
    expect(b.errors).toEqual([]);
  });

  test("an unverified lesson staged for CLAUDE.md and AGENTS.md: the confirmation shows both diffs and the card says unverified", async () => {
    const { ui, project } = lessonSetup;
    const page = await b.context.newPage();
    await page.goto(ui.tokenUrl);
    await page.goto(`${ui.url}/sleep`);
    const card = page.locator('details.night[data-state="staged"]');
    await card.waitFor();
    expect(await card.locator(".night-body .evidence-card .card-verdict .verdict").getAttribute("data-verdict")).toBe(
      "unverified",
    );
    await card.locator("button.adopt-btn").click();
    const dialog = page.locator("dialog.sleep-confirm[open]");
    await dialog.waitFor();
    expect(await dialog.locator("h3 code").allTextContents()).toEqual([
      join(project, "CLAUDE.md"),
      join(project, "AGENTS.md"),
    ]);
    expect(await dialog.locator("table.diff-unified tr.add", { hasText: "bun test" }).count()).toBe(2);
    expect(await dialog.locator(".evidence-card .card-verdict").textContent()).toContain("no replay was run");
    expect(await dialog.locator("button.confirm-btn").textContent()).toBe("Adopt 2 file(s)");
    await b.screenshot(page, "ui-sleep-lesson-confirm");
    await dialog.locator("button.cancel-btn").click();
    expect(readFileSync(join(project, "AGENTS.md"), "utf8")).toBe("# Agents\n");
    await page.close();
    expect(b.errors).toEqual([]);
  });

  test("Reject needs a session, then discards the night through the CLI's reject", async () => {
    const { ui, project, night } = rejectSetup;
    const refused = await fetch(`${ui.url}/api/sleep/reject`, {
      method: "POST",
      body: JSON.stringify({ project, night }),
    });
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

  test("Rollback of a night nothing was adopted from is refused with the CLI's reason", async () => {
    const { ui, project, night } = lessonSetup;
    const r = await fetch(`${ui.url}/api/sleep/rollback`, {
      method: "POST",
      body: JSON.stringify({ project, night }),
      headers: await signIn(ui),
    });
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ ok: false, error: "nothing_to_rollback" });
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
