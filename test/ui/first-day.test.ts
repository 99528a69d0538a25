import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeRunReport } from "../../src/report/html/index.ts";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { launchBrowser, type Page, type TestBrowser } from "../support/browser.ts";
import { endpointSets, runCli } from "../support/cli.ts";
import { type FakeOpenAIServer, startFakeOpenAI } from "../support/fake-openai.ts";
import { missing } from "../support/prereqs.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";

// The details a new user sees in the dashboard and the report after getting-started: real runs made
// through the CLI (a simulator run, an evaluation, a capped run resumed to the end), looked at in
// Chromium, with screenshots in test-output/ for review.
setDefaultTimeout(180_000);

const noBrowser = await missing("chromium", import.meta.path);
const tmp = tempDir("skillopt-first-day-");
const root = join(tmp.path, "outputs");
const env = { SKILLOPT_CACHE_DIR: join(tmp.path, "cache"), XDG_STATE_HOME: join(tmp.path, "state") };
let server: FakeOpenAIServer;
let ui: UiServer;
let b: TestBrowser;

async function cli(args: string[]): Promise<void> {
  const r = await runCli([...args, "--quiet"], { env, cwd: tmp.path });
  if (r.code !== 0) throw new Error(`skillopt ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
}

beforeAll(async () => {
  if (noBrowser) return;
  await cli(["train", "--config", "quickstart", "--out", join(root, "sim-run")]);
  await cli([
    "eval",
    "--config",
    "quickstart",
    "--skill",
    join(root, "sim-run", "best_skill.md"),
    "--out",
    join(root, "eval-run"),
  ]);
  server = await startFakeOpenAI({ reply: simReply() });
  const capped = join(root, "capped");
  await cli(["train", "--config", "quickstart", ...endpointSets(server.url), "--max-cost", "0.05", "--out", capped]);
  await cli(["train", "--resume", capped, "--max-cost", "5"]);
  ui = startUi({ root, port: 0, sleep: null });
  b = await launchBrowser();
  await b.page.goto(ui.tokenUrl);
});

afterAll(async () => {
  await b?.close();
  await ui?.stop();
  await server?.close();
  tmp[Symbol.dispose]();
});

/** The text of one cell of the runs table, by run folder name and column header. */
async function cell(page: Page, run: string, column: string): Promise<string> {
  return page.evaluate(
    ([run, column]) => {
      const heads = Array.from(document.querySelectorAll("#runs thead th")).map((th) => th.textContent?.trim());
      const row = Array.from(document.querySelectorAll("#runs tbody tr")).find((tr) =>
        tr.querySelector("td:nth-child(2) a")?.textContent?.includes(run!),
      );
      return row?.children[heads.indexOf(column!)]?.textContent?.trim() ?? "(no such cell)";
    },
    [run, column],
  );
}

/** Bounding boxes (SVG user units) of the elements a selector finds in the page. */
async function boxes(page: Page, selector: string) {
  return page.$$eval(selector, (els) =>
    els.map((e) => {
      // A marker is a group translated to its point: its box is in its own coordinates.
      const r = (e as SVGGraphicsElement).getBBox();
      const at = /translate\(([-\d.]+),([-\d.]+)\)/.exec(e.getAttribute("transform") ?? "");
      const [dx, dy] = at ? [Number(at[1]), Number(at[2])] : [0, 0];
      return {
        x: r.x + dx,
        y: r.y + dy,
        w: r.width,
        h: r.height,
        text: e.textContent ?? "",
        title: e.querySelector("title")?.textContent ?? "",
      };
    }),
  );
}

describe.skipIf(noBrowser)("a new user's runs in the dashboard and the report", () => {
  test("the runs list: a simulator run's models read sim, an evaluation's steps read —", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/`);
    expect(await cell(page, "sim-run", "models")).toBe("sim (offline simulator)");
    expect(await cell(page, "sim-run", "models")).not.toContain("gpt");
    expect(await cell(page, "eval-run", "steps")).toBe("—");
    expect(await cell(page, "capped", "steps")).toBe("12/12");
    await b.screenshot(page, "first-day-runs");
  });

  test("a capped run resumed to the end does not open with 'stopping: cost budget reached'", async () => {
    const page = b.page;
    await page.goto(`${ui.url}/`);
    await page.click('#runs a:text-is("capped")');
    await page.waitForSelector("#run-warnings");
    const warning = await page.locator('#run-warnings li[data-code="budget_stop"]').first().textContent();
    expect(warning).toContain("an earlier attempt stopped (cost budget reached: $0.0");
    expect(warning).toContain("the run was resumed");
    expect(await page.locator("body").textContent()).not.toContain("stopping: cost budget reached");
    await b.screenshot(page, "first-day-resumed-run");
  });

  test("the report: round axis ticks, test labels that do not overlap, a candidate rejected after one item drawn on the current line", async () => {
    using dir = tempDir("skillopt-first-day-report-");
    cpSync(join(root, "capped"), dir.path, { recursive: true });
    // The final skill scoring a point under the best on test: two lines one pixel apart.
    const summaryPath = join(dir.path, "summary.json");
    const summary = JSON.parse(readFileSync(summaryPath, "utf8"));
    summary.final.test = summary.best.test - 0.01;
    writeFileSync(summaryPath, JSON.stringify(summary));
    const page = await b.context.newPage();
    await page.goto(`file://${writeRunReport(dir.path).path}`);

    // Token ticks on the cost chart's left axis: equal steps of 1, 2, 2.5 or 5 × 10^k, read back exactly.
    const left = (await boxes(page, "svg#cost-chart text.tick[text-anchor='end']")).map((t) => t.text);
    const tokens = left.map((t) => (t.endsWith("k") ? Number(t.slice(0, -1)) * 1000 : Number(t)));
    expect(tokens.every(Number.isFinite)).toBe(true);
    const step = tokens[1]! - tokens[0]!;
    expect(tokens.every((v, i) => Math.abs(v - i * step) < 1e-9)).toBe(true);
    const mantissa = step / 10 ** Math.floor(Math.log10(step));
    expect([1, 2, 2.5, 5]).toContain(Number(mantissa.toFixed(6)));
    // The cumulative cost axis: dollars with the decimals its steps need (0.025 is never "$0.03").
    const right = (await boxes(page, "svg#cost-chart text.tick[fill='#111827']")).map((t) => t.text);
    expect(right.length).toBeGreaterThanOrEqual(2);
    const dollars = right.map((t) => Number(t.replace("$", "")));
    const costStep = dollars[1]! - dollars[0]!;
    expect(dollars.every((v, i) => Math.abs(v - i * costStep) < 1e-9)).toBe(true);
    expect(new Set(right).size).toBe(right.length);

    // The best-test and final-test labels beside the score chart do not overlap.
    const labels = await boxes(page, "svg#score-chart g.hline text");
    expect(labels.map((l) => l.text.replace(/ [\d.]+$/, "")).sort()).toEqual([
      "baseline test",
      "best test",
      "final test",
    ]);
    for (const [i, a] of labels.entries())
      for (const c of labels.slice(i + 1)) expect(a.y + a.h <= c.y || c.y + c.h <= a.y).toBe(true);
    await b.screenshot(page, "first-day-report");
    await page.close();

    // In the simulator run, rejections after 1 of 24 items sit on the current line, not at 0.
    const sim = await b.context.newPage();
    await sim.goto(`file://${writeRunReport(join(root, "sim-run")).path}`);
    // The chart's scale, read from its grid lines and their tick labels.
    const grid = await sim.$$eval("svg#score-chart line.grid", (ls) => ls.map((l) => Number(l.getAttribute("y1"))));
    const ticks = (await boxes(sim, "svg#score-chart text.tick[text-anchor='end']")).map((t) => Number(t.text));
    const yOf = (v: number) =>
      grid[0]! + ((v - ticks[0]!) / (ticks[ticks.length - 1]! - ticks[0]!)) * (grid[grid.length - 1]! - grid[0]!);
    // Its header names the simulator, not the config's model names.
    const meta = await sim.locator("header p.meta").textContent();
    expect(meta).toContain("backend sim (offline simulator)");
    expect(meta).not.toContain("gpt-");
    const partial = await boxes(sim, "svg#score-chart .pt.partial");
    expect(partial.some((p) => p.title.includes("rejected after 1/24 items"))).toBe(true);
    for (const p of partial) {
      expect(p.title).toMatch(
        /after \d+\/24 items \(no full selection score; drawn on the current line\), current [\d.]+$/,
      );
      const current = Number(/current ([\d.]+)$/.exec(p.title)![1]);
      expect(Math.abs(p.y + p.h / 2 - yOf(current))).toBeLessThan(1.5);
    }
    await b.screenshot(sim, "first-day-sim-report");
    await sim.close();
  });
});
