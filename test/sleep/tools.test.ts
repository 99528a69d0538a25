import { describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

describe.skipIf(process.platform === "win32")("tool-aware replay through the codex exec harness", () => {
  test("tool_called is judged from shims the agent really ran, and a rule that makes it search is accepted", async () => {
    using tmp = tempDir();
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    const bunDir = join(tmp.path, "bun-bin");
    mkdirSync(project, { recursive: true });
    mkdirSync(bunDir);
    symlinkSync(process.execPath, join(bunDir, "bun"));
    const tasks = Array.from({ length: 4 }, (_, i) => ({
      id: `task_t${i}`,
      intent: `Look up fact ${i}`,
      reference_kind: "rule",
      judge: { kind: "rule", checks: [{ op: "tool_called", arg: "search" }] },
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, reviewed: true, tasks }));
    const env = {
      HOME: home,
      PATH: [bunDir, "/usr/bin", "/bin"].join(delimiter),
      SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
      SKILLOPT_CACHE_DIR: join(tmp.path, "cache"),
    };
    const fake = join(import.meta.dir, "support", "bin", "codex");
    const r = await runCli(
      [
        "sleep",
        "review",
        "--backend",
        "codex",
        "--codex-path",
        fake,
        "--project",
        project,
        "--tasks-file",
        file,
        "--json",
      ],
      { env, cwd: project },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ accepted: true, gate_action: "accept_new_best", baseline: 0, candidate: 1 });
    expect(out.edits.map((e: { content: string }) => e.content)).toEqual([
      "Always search first: run the search tool before answering.",
    ]);
    expect(out.budget.stages.map((s: { stage: string }) => s.stage)).toContain("attempt_tools");
  });
});
