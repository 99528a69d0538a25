import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

// A newcomer's first `sleep review`: what it says when it finds nothing, and where a suggested
// setting goes.
describe("sleep review for a newcomer", () => {
  test("with no sessions it names where it looked, the project filter and how to point it elsewhere", async () => {
    using tmp = tempDir("sleep-new-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    mkdirSync(project, { recursive: true });
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(["sleep", "review", "--backend", "mock", "--project", project], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    const at = lines.findIndex((l) => /night \d+: 0 sessions -> 0 tasks/.test(l));
    expect(at).toBeGreaterThan(-1);
    expect(lines[at + 1]).toBe(
      `[sleep] looked for claude (~/.claude/projects), sessions of ${project} only (--scope all for every project); point it ` +
        "elsewhere with --source, --claude-home or --codex-home (`skillopt docs sleep` lists every source)",
    );
    const codex = await runCli(
      [
        "sleep",
        "harvest",
        "--source",
        "codex",
        "--scope",
        "all",
        "--project",
        project,
        "--codex-home",
        join(tmp.path, "cx"),
      ],
      { env },
    );
    expect(codex.code).toBe(0);
    expect(codex.stdout).toContain(`looked for codex (${join(tmp.path, "cx", "sessions")}), every project;`);
  });

  test("tasks left out for want of a reference: the note says in which file the setting goes, as no flag sets it", async () => {
    using tmp = tempDir("sleep-new-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "proj");
    mkdirSync(project, { recursive: true });
    const file = join(tmp.path, "tasks.json");
    const tasks = Array.from({ length: 4 }, (_, i) => ({
      id: `t${i}`,
      intent: `Explain module ${i}`,
      reference_kind: i < 2 ? "none" : "exact",
      reference: i < 2 ? "" : `answer ${i}`,
      split: i % 2 ? "val" : "train",
    }));
    writeFileSync(file, JSON.stringify({ format: "skillopt_sleep.tasks.v1", tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(["sleep", "review", "--backend", "mock", "--project", project, "--tasks-file", file], {
      env,
    });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      "2 task(s) without a checkable reference were not replayed (to judge them against their own intent, set " +
        "replay_uncheckable: true in the Sleep config file, ~/.skillopt-sleep/config.yaml; there is no flag for it)",
    );
    const help = await runCli(["sleep", "review", "--help"]);
    expect(help.stdout).not.toContain("replay-uncheckable");
  });
});
