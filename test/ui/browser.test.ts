import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { NO_EVENTS } from "../../src/engine/index.ts";
import { warningText } from "../../src/report/index.ts";
import { normalizeAction, writeRunReport } from "../../src/report/html/index.ts";
import { recordingWarnings } from "../../src/run/index.ts";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { commitSyntheticStep, writeSyntheticRun } from "../run/support.ts";
import { launchBrowser, type TestBrowser } from "../support/browser.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { missing } from "../support/prereqs.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "./support.ts";

// These tests start real processes (training runs, the CLI) and a browser; bun's default is 5 s
// (bunfig.toml's [test] timeout is not a bun setting). Each still finishes in a few seconds.
setDefaultTimeout(120_000);

const noBrowser = await missing("chromium", import.meta.path);

const tmp = tempDir("skillopt-browser-");
const root = join(tmp.path, "outputs");
let ui: UiServer;
let b: TestBrowser;
let firstSignIn = "";

function history(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, "history.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

beforeAll(async () => {
  if (noBrowser) return;
  mkdirSync(root, { recursive: true });
  cpSync(join(REPO_ROOT, "fixtures", "runs", "quickstart"), join(root, "finished"), { recursive: true });
  writeSyntheticRun(join(root, "other"), { steps: 5 });
  ui = startUi({
    root,
    port: 0,
    command: [process.execPath, join(REPO_ROOT, "src", "main.ts")],
    cwd: REPO_ROOT,
    env: { SKILLOPT_LOG_LEVEL: undefined },
  });
  b = await launchBrowser();
  // Sign in as the owner does: open the URL `skillopt ui` printed; it lands on the clean URL.
  firstSignIn = ui.tokenUrl;
  await b.page.goto(firstSignIn);
  expect(b.page.url()).toBe(`${ui.url}/`);
});

afterAll(async () => {
  await b?.close();
  await ui?.stop();
  tmp[Symbol.dispose]();
});

function expectedActions(dir: string): string[] {
  return history(dir).map((r) => normalizeAction(String(r.outcome ?? r.action)));
}

describe.skipIf(noBrowser)("dashboard in a real browser", () => {
  test("a finished run: one chart point per step, and the accepted markers match history", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/`);
    await page.click('tr[data-run="finished"] a');
    await page.waitForSelector("svg#score-chart");
    const actions = await page.$$eval('svg#score-chart [data-series="decision"]', (els) =>
      els.map((e) => e.getAttribute("data-action")),
    );
    const want = expectedActions(join(root, "finished"));
    expect(actions).toEqual(want);
    const accepted = await page.$$eval('svg#score-chart [data-series="decision"][data-action="accepted"]', (els) =>
      els.map((e) => Number(e.getAttribute("data-step"))),
    );
    expect(accepted).toEqual(
      history(join(root, "finished"))
        .filter((r) => normalizeAction(String(r.outcome ?? r.action)) === "accepted")
        .map((r) => Number(r.step)),
    );
    const early = history(join(root, "finished")).find((r) => r.outcome === "rejected_early")!;
    const details = page.locator(`#step-${early.step}`);
    await details.locator("summary").click();
    expect(await details.locator("table.edits .badge.b-rejected").count()).toBeGreaterThan(0);
    expect(await details.locator("table.diff-unified tr.add").count()).toBeGreaterThan(0);
    expect(await page.locator("#step-table").textContent()).toContain(
      `at ${early.selection_evaluated}/${early.selection_total}`,
    );
    await b.screenshot(page, "ui-finished-run");
  });

  test("the runs list sorts by a column when its header is clicked", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/`);
    const order = () => page.$$eval("#runs tbody tr", (rows) => rows.map((r) => r.getAttribute("data-run")));
    await page.click('#runs th:has-text("steps")');
    const asc = await order();
    await page.click('#runs th:has-text("steps")');
    const desc = await order();
    expect(asc.slice(0, 2)).toEqual(["other", "finished"]);
    expect(desc).toEqual([...asc].reverse());
  });

  test("a run while it trains shows a new step without reloading", async () => {
    const dir = join(root, "live");
    mkdirSync(dir);
    const step = (n: number) => ({
      epoch: 1,
      step: n,
      learning_rate: 2,
      rollout_hard: 0.2 + n / 10,
      candidate_gate_score: 0.3 + n / 10,
      current_score: 0.3 + n / 10,
      best_score: 0.3 + n / 10,
      action: "accept_new_best" as const,
      outcome: "accepted" as const,
      calls: { total: 5, cached: 0, by_stage: {} },
      cost_usd: 0.001,
      wall_time_s: 0.2,
    });
    for (const n of [1, 2, 3]) commitSyntheticStep(dir, step(n), `# skill\nrule ${n}\n`);
    const page = b.page;
    await page.goto(`${ui.url}/runs/live`);
    await page.waitForSelector('svg#score-chart [data-series="decision"]');
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    expect(await page.locator('svg#score-chart [data-series="decision"]').count()).toBe(3);
    expect(await page.locator("#live").textContent()).toBe("live");
    commitSyntheticStep(dir, step(4), "# skill\nrule 4\n");
    await page.waitForSelector('svg#score-chart [data-series="decision"][data-step="4"]', { timeout: 45_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    expect(await page.locator("#step-table tbody tr").count()).toBe(4);
    await b.screenshot(page, "ui-live-run");
  });

  test("a warning the run records shows on its page without reloading, in the console's words", async () => {
    const dir = join(root, "live");
    const page = b.page;
    await page.goto(`${ui.url}/runs/live`);
    await page.waitForSelector("#step-table");
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    expect(await page.locator("#run-warnings").count()).toBe(0);
    // The sink the trainer's events go through (train's recordingWarnings), given one typed warning.
    const warning = { type: "warning", code: "merge_fallback", side: "success", level: 2, patches: 4 } as const;
    recordingWarnings(dir, NO_EVENTS).emit(warning);
    await page.waitForSelector('#run-warnings li[data-code="merge_fallback"]', { timeout: 45_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    const text = await page.locator('#run-warnings li[data-code="merge_fallback"]').textContent();
    expect(text?.endsWith(` ${warningText(warning)}`)).toBe(true);
    expect(warningText(warning)).toBe("merge level 2 (success): falling back to concatenation");
  });

  test("the runs list follows a running run without reloading", async () => {
    const dir = join(root, "live");
    const page = b.page;
    await page.goto(`${ui.url}/`);
    const steps = page.locator('tr[data-run="live"] td:nth-child(7)');
    expect(await steps.textContent()).toBe("4/6");
    await page.evaluate(() => {
      (window as unknown as { notReloaded: boolean }).notReloaded = true;
    });
    commitSyntheticStep(
      dir,
      { epoch: 2, step: 5, current_score: 0.95, best_score: 0.95, action: "accept_new_best", outcome: "accepted" },
      "# skill\nrule 5\n",
    );
    await page.locator('tr[data-run="live"] td:nth-child(7)', { hasText: "5/6" }).waitFor({ timeout: 45_000 });
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  test("compare two runs: both curves on one chart and the best skills diffed", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/`);
    await page.check('tr[data-run="finished"] input.pick');
    await page.check('tr[data-run="other"] input.pick');
    await page.click("#compare-btn");
    await page.waitForSelector("svg#compare-chart");
    expect(await page.locator('svg#compare-chart path.series-line[data-series^="run-"]').count()).toBe(2);
    expect(
      await page.locator("#compare-diff table.diff-unified tr.add, #compare-diff table.diff-unified tr.del").count(),
    ).toBeGreaterThan(0);
    await b.screenshot(page, "ui-compare");
  });

  test("an invalid override shows the error next to its field", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/launch`);
    await page.fill("#f-config", "features/soft_gate");
    await page.fill("#f-train-batch_size", "0");
    const err = page.locator('[data-error-for="train.batch_size"]');
    await err.filter({ hasText: "positive integer" }).waitFor({ timeout: 45_000 });
    await page.click("#launch-btn");
    await page.locator("#launch-msg", { hasText: "not started" }).waitFor();
    expect(await err.textContent()).toBe("expected a positive integer, got 0");
    expect(ui.launcher.list()).toEqual([]);
    await page.fill("#f-config", "no-such-config");
    await page
      .locator('[data-error-for="config"]', { hasText: "no such file or bundled config" })
      .waitFor({ timeout: 45_000 });
    await b.screenshot(page, "ui-invalid-override");
  });

  test("launch a quickstart from the form and watch it finish", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/launch`);
    await page.fill("#f-config", "quickstart");
    await page.click("#launch-btn");
    await page.locator("#launch-msg", { hasText: "started" }).waitFor();
    const launch = page.locator(".launch").first();
    await page.locator('.launch[data-status="finished"]').waitFor({ timeout: 60_000 });
    const info = ui.launcher.list()[0]!;
    expect(info).toMatchObject({ status: "finished", exitCode: 0, config: "quickstart" });
    expect(await launch.locator("pre.log").textContent()).toContain("Training finished");
    await b.screenshot(page, "ui-launch-finished");
    await launch.locator("a.run-link").click();
    await page.waitForSelector("svg#score-chart");
    expect(await page.locator('svg#score-chart [data-series="decision"]').count()).toBe(history(info.out).length);
    expect(await page.locator("#run-body").getAttribute("data-status")).toBe("finished");
  });

  test("a launched run's page follows its stages and steps, and its Stop button interrupts it", async () => {
    const r = await fetch(`${ui.url}/api/launch`, {
      method: "POST",
      headers: await signIn(ui),
      body: JSON.stringify({ config: "quickstart", values: {}, extra: "model.sim_latency_ms=100\ntrain.seed=99" }),
    });
    const { launch } = (await r.json()) as { launch: { id: string; out: string } };
    await new Promise<void>((done) => {
      const off = ui.launcher.subscribe(launch.id, (_, line) => {
        if (line?.includes("[STEP 1/")) {
          off();
          done();
        }
      });
    });
    const page = b.page;
    await page.goto(`${ui.url}/runs/${encodeURIComponent(launch.out.split("/").pop()!)}`);
    await page.locator("#launch-progress .stage.on").waitFor({ timeout: 45_000 });
    await page.locator("#launch-where", { hasText: /step \d+ of 12/ }).waitFor({ timeout: 45_000 });
    await b.screenshot(page, "ui-launched-run-live");
    await page.click("#launch-progress .stop-btn");
    await page.locator("#launch-status", { hasText: "stopped" }).waitFor({ timeout: 45_000 });
    expect(ui.launcher.get(launch.id)!.status).toBe("stopped");
    expect(await page.locator("#launch-progress .stage.on").count()).toBe(0);
  });

  test("the page holds no token a script could reuse, and the session cookie is out of its reach", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/launch`);
    const html = await page.content();
    expect(html).not.toContain("skillopt-token");
    expect(html).not.toContain(ui.token);
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const cookies = await b.context.cookies(ui.url);
    expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
      { name: `skillopt_session_${ui.port}`, httpOnly: true, sameSite: "Strict" },
    ]);
  });

  test("a browser that never opened the sign-in URL sees nothing, and the used URL does not sign it in", async () => {
    await b.context.clearCookies();
    const page = b.page;
    const res = await page.goto(`${ui.url}/`);
    expect(res?.status()).toBe(401);
    expect(await page.content()).not.toContain("Runs");
    const used = await page.goto(firstSignIn);
    expect(used?.status()).toBe(401);
    expect(await b.context.cookies(ui.url)).toEqual([]);
    const status = await page.evaluate(() =>
      fetch("/api/launch", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ config: "quickstart" }),
      }).then((r) => r.status),
    );
    expect(status).toBe(401);
    expect(ui.launcher.list()).toHaveLength(2);
    await page.goto(ui.tokenUrl);
    expect(await page.locator("#runs").count()).toBe(1);
  });

  test("the pages raised no console error beyond the refusals the tests provoked", () => {
    expect(b.errors.filter((e) => !/Failed to load resource: .* status of (401|403|422)\b/.test(e))).toEqual([]);
  });
});

describe.skipIf(noBrowser)("report.html in a real browser", () => {
  test("opened as a file, the curves and diffs render with no console errors", async () => {
    using dir = tempDir("skillopt-report-");
    cpSync(join(root, "finished"), dir.path, { recursive: true });
    const { path } = writeRunReport(dir.path);
    const page = await b.context.newPage();
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("request", (r) => {
      if (!r.url().startsWith("file:") && !r.url().startsWith("data:")) errors.push(`network request: ${r.url()}`);
    });
    await page.goto(`file://${path}`);
    const steps = history(dir.path).length;
    expect(await page.locator('svg#score-chart [data-series="decision"]').count()).toBe(steps);
    expect(await page.locator("svg#cost-chart g.bar").count()).toBe(steps);
    const box = await page.locator("svg#score-chart").boundingBox();
    expect(box!.width).toBeGreaterThan(500);
    await page.click("#step-2 > summary");
    expect(await page.locator("#step-2 table.diff-unified").isVisible()).toBe(true);
    await page.click('label[for="dm-split"]');
    expect(await page.locator("#step-2 table.diff-split").isVisible()).toBe(true);
    expect(await page.locator("#step-2 table.diff-unified").isVisible()).toBe(false);
    await b.screenshot(page, "report-file");
    await page.close();
    expect(errors).toEqual([]);
  });
});
