import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";
import { startUi, type UiServer } from "../../src/ui/index.ts";
import { runCli } from "../support/cli.ts";
import { refusedUrl } from "../support/net.ts";
import { tempDir } from "../support/tmp.ts";
import { signIn } from "./support.ts";

const tmp = tempDir("skillopt-ui-failed-");
const root = join(tmp.path, "outputs");
let ui: UiServer;
let auth: { cookie: string; origin: string };

beforeAll(async () => {
  // A real run that failed: its target endpoint refuses every connection.
  const url = await refusedUrl();
  const r = await runCli(
    [
      "train",
      "--config",
      "searchqa",
      "--set",
      `env.split_dir=${join(FIXTURES, "searchqa")}`,
      "--no-cache",
      ...compatFlags(url),
      "--out",
      join(root, "down"),
    ],
    { env: KEY_ENV },
  );
  if (r.code !== 1) throw new Error(`expected the run to fail: ${r.stderr}`);
  ui = startUi({ root, port: 0, command: ["/bin/false"] });
  auth = await signIn(ui);
}, 60_000);

afterAll(async () => {
  await ui.stop();
  tmp[Symbol.dispose]();
});

describe("the dashboard shows a run that stopped on errors as failed, with the reason", () => {
  test("runs list and API: failed (red badge) and why, never finished", async () => {
    const rows = (await (await fetch(`${ui.url}/api/runs`, { headers: auth })).json()) as {
      id: string;
      status: string;
      reason: string | null;
    }[];
    expect(rows).toEqual([
      expect.objectContaining({
        id: "down",
        status: "failed",
        reason: expect.stringContaining("gave no answer for 2 of 2 items of the baseline selection pass"),
      }),
    ]);
    const html = await (await fetch(`${ui.url}/`, { headers: auth })).text();
    expect(html).toMatch(
      /<span class="badge b-failed">failed<\/span><div class="row-error run-failure">target \(openai_compatible, model target-model, endpoint 127\.0\.0\.1:\d+\) gave no answer/,
    );
    expect(html.includes('class="badge b-finished"')).toBe(false);
  });

  test("the run's page: failed badge and the reason", async () => {
    const html = await (await fetch(`${ui.url}/runs/down`, { headers: auth })).text();
    expect(html).toContain('<span class="badge b-failed">failed</span>');
    expect(html).toMatch(
      /<div class="failed-reason"><b>failed:<\/b> target \(openai_compatible.*gave no answer for 2 of 2 items/,
    );
  });
});
