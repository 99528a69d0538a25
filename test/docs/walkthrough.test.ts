import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCHMARKS, getBenchmark } from "../../src/benchmarks/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { benchContext, FIXTURES, rollAll } from "../benchmarks/support/context.ts";
import { trainOnSim } from "../engine/support.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { readDoc } from "./markdown.ts";
import capitals from "./walkthrough/capitals.ts";

/**
 * docs/tasks.md walks through adding a built-in benchmark. Its code is this directory's
 * capitals.ts (shown with the import paths it has under src/benchmarks/capitals/), its data is
 * fixtures/benchmarks/capitals/, and this test registers it and runs it.
 */
const FILE = join(import.meta.dir, "walkthrough", "capitals.ts");

function asInSrc(code: string): string {
  return code.replaceAll("../../../src/benchmarks/", "../").replaceAll("../../../src/", "../../");
}

afterAll(() => {
  delete BENCHMARKS.capitals;
});

describe("the benchmark walk-through in docs/tasks.md", () => {
  test("the page shows the walk-through's code exactly", () => {
    const blocks = [...readDoc("docs/tasks.md").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toContain(asInSrc(readFileSync(FILE, "utf8")));
  });

  test("registered with one line, it loads its splits and scores rollouts through a real HTTP endpoint", async () => {
    BENCHMARKS.capitals = async () => capitals;
    expect(await getBenchmark("capitals")).toBe(capitals);
    await using server = await startFakeOpenAI();
    server.match((r) => r.lastUserText.includes("Chile"), "Santiago is the capital. <answer>Santiago</answer>");
    server.match((r) => r.lastUserText.includes("Vietnam"), "<answer>Ho Chi Minh City</answer>");
    server.match((r) => r.lastUserText.includes("Morocco"), "<answer>rabat</answer>");
    server.match((r) => r.lastUserText.includes("Turkey"), { fault: "status", status: 400, message: "bad request" });
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_dir: join(FIXTURES, "capitals") }, dir.path);
    const rows = await rollAll(capitals, ctx, "val");
    expect(rows.map((r) => [r.id, r.hard, r.agent_ok])).toEqual([
      ["cap-val-1", 1, true],
      ["cap-val-2", 0, true],
      ["cap-val-3", 1, true],
      ["cap-val-4", 0, false],
    ]);
    expect(rows[1]!.fail_reason).toBe("predicted 'Ho Chi Minh City', expected 'Hanoi'");
    expect(server.requests[0]!.systemText).toContain("## Skill\n# Skill\n- be precise");
  });

  test("a whole training run goes through it on the simulator", async () => {
    BENCHMARKS.capitals = async () => capitals;
    const config = loadConfig({
      config: "quickstart",
      cwd: REPO_ROOT,
      set: [
        "env.name=capitals",
        "env.split_mode=split_dir",
        `env.split_dir=${join(FIXTURES, "capitals")}`,
        "train.num_epochs=1",
        "train.batch_size=4",
      ],
    }).config;
    const run = await trainOnSim(config);
    expect(run.result.summary.status).toBe("finished");
    expect(run.recorder.records().length).toBe(2);
  });
});
