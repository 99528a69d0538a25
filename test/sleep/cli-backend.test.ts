import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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

describe.skipIf(process.platform === "win32")("a replayed agent that prints a credential in prose", () => {
  test("no file the night writes holds it (replay evidence, the night's record, its notes)", async () => {
    const said = "Hunt3r-xy9q";
    using fake = fakeBinEnv({ reply: `I ran npm test. The admin password is ${said} per the README. []` });
    const project = join(fake.home, "proj");
    mkdirSync(project, { recursive: true });
    const tasks = Array.from({ length: 4 }, (_, i) => ({
      id: `task_p${i}`,
      intent: `Run the suite after change ${i}`,
      reference_kind: "rule",
      judge: { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] },
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, reviewed: true, tasks }));
    const state = join(fake.home, ".skillopt-sleep");
    const env = { ...fake.vars, SKILLOPT_SLEEP_STATE_DIR: state, SKILLOPT_CACHE_DIR: join(fake.home, "cache") };
    const r = await runCli(
      ["sleep", "dry-run", "--backend", "claude", "--project", project, "--tasks-file", file, "--json"],
      { env, cwd: project },
    );
    expect(r.code).toBe(0);
    expect(fake.calls().some((c) => c.name === "claude")).toBe(true);
    // The call cache keeps every answer as it came (docs/trust-model.md, "File modes": private, 0600);
    // everything else the night writes is checked.
    const written = [...filesUnder(state), ...filesUnder(project)].filter((f) => !f.startsWith(join(state, "cache")));
    expect(written.length).toBeGreaterThan(2);
    expect(written.filter((f) => readFileSync(f).includes(said))).toEqual([]);
    // The replies themselves were written (masked), so the check above read them.
    expect(written.some((f) => readFileSync(f).includes("The admin password is [REDACTED]"))).toBe(true);
    expect(r.stdout).not.toContain(said);
  });
});

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}
