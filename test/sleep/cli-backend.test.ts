import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SLEEP_SENTINEL } from "../../src/lib/index.ts";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { fakeBinEnv } from "../support/fake-bins/index.ts";
import { runCli } from "../support/cli.ts";

describe.skipIf(process.platform === "win32")("sleep through an agent CLI (fake `claude` on PATH)", () => {
  test("every replay is a real claude process fed the sentinel-tagged prompt on stdin", async () => {
    // The one reply serves replays (it fails the rule) and reflection (an empty list of edits: a usable
    // answer proposing nothing; prose there would stop the night as an unusable optimizer).
    using fake = fakeBinEnv({ reply: "I ran npm test. []" });
    const project = join(fake.home, "proj");
    mkdirSync(project, { recursive: true });
    const tasks = Array.from({ length: 4 }, (_, i) => ({
      id: `task_c${i}`,
      intent: `Run the suite after change ${i}`,
      reference_kind: "rule",
      judge: { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] },
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, reviewed: true, tasks }));
    const env = {
      ...fake.vars,
      SKILLOPT_SLEEP_STATE_DIR: join(fake.home, ".skillopt-sleep"),
      SKILLOPT_CACHE_DIR: join(fake.home, "cache"),
    };
    const r = await runCli(
      ["sleep", "dry-run", "--backend", "claude", "--project", project, "--tasks-file", file, "--json"],
      { env, cwd: project },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ accepted: false, staging_dir: null });
    const calls = fake.calls().filter((c) => c.name === "claude");
    expect(calls.length).toBeGreaterThanOrEqual(4);
    expect(
      calls.every((c) => c.stdin.startsWith(SLEEP_SENTINEL) || c.argv.some((a) => a.startsWith(SLEEP_SENTINEL))),
    ).toBe(true);
    expect(out.budget.calls).toBe(calls.length);
  });
});
