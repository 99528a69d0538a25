import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SLEEP_SENTINEL } from "../../src/lib/index.ts";
import { TASKS_FORMAT } from "../../src/sleep/mine/index.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const RULE = "Use `bun test` instead of `npm test`.";

/** What an interactive agent would answer to one pending prompt. */
function answer(prompt: string): string {
  if (prompt.includes("Propose at most"))
    return JSON.stringify([{ op: "add", content: RULE, rationale: "recurring correction" }]);
  return prompt.includes(RULE) ? "Ran bun test." : "Ran npm test.";
}

describe("sleep review --backend handoff", () => {
  test("rounds exit 3 with PROMPTS.md until every answer is in, then stage the night and archive the round data", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "proj");
    const home = join(tmp.path, "home");
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    const tasks = [
      "slugify tests",
      "login regression",
      "config loader refactor",
      "retry tests",
      "yaml upgrade",
      "date parser port",
    ].map((intent, i) => ({
      id: `task_h${i}`,
      intent: `Handle the ${intent}`,
      reference_kind: "rule",
      judge: {
        kind: "rule",
        checks: [
          { op: "contains", arg: "bun test" },
          { op: "not_contains", arg: "npm test" },
        ],
      },
      tags: ["correction"],
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, reviewed: true, tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const handoff = join(project, ".skillopt-sleep", "handoff");
    let last: Awaited<ReturnType<typeof runCli>> | undefined;
    let rounds = 0;
    for (; rounds < 8; rounds++) {
      last = await runCli(
        ["sleep", "review", "--backend", "handoff", "--project", project, "--tasks-file", file, "--json"],
        { env },
      );
      if (last.code !== 3) break;
      const doc = JSON.parse(last.stdout);
      expect(doc.prompts).toBe(join(handoff, "PROMPTS.md"));
      const pending = JSON.parse(readFileSync(join(handoff, "pending.json"), "utf8"));
      expect(pending.format).toBe("skillopt_sleep.handoff.v1");
      expect(pending.pending).toHaveLength(doc.handoff_pending);
      for (const p of pending.pending as Array<{ prompt: string; answer_file: string }>) {
        expect(p.prompt.startsWith(SLEEP_SENTINEL)).toBe(true);
        writeFileSync(p.answer_file, answer(p.prompt));
      }
      // A pending round leaves no staging folder behind.
      const staging = join(project, ".skillopt-sleep", "staging");
      expect(existsSync(staging) ? readdirSync(staging).filter((n) => !n.startsWith(".")) : []).toEqual([]);
    }
    expect(rounds).toBeGreaterThan(0);
    expect(last!.code).toBe(0);
    const out = JSON.parse(last!.stdout);
    expect(out).toMatchObject({ night: 1, accepted: true, gate_action: "accept_new_best", tasks_source: "tasks_file" });
    expect(readFileSync(join(out.staging_dir, "proposed_SKILL.md"), "utf8")).toContain(RULE);
    expect(existsSync(handoff)).toBe(false);
    expect(existsSync(`${handoff}.night1.done`)).toBe(true);
  });
});

describe("a handoff night that found no task", () => {
  test("pins nothing, so the next night harvests the sessions again instead of replaying an empty pin", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "proj");
    const home = join(tmp.path, "home");
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(["sleep", "review", "--backend", "handoff", "--project", project, "--json"], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ n_tasks: 0, tasks_source: "mined", staging_dir: null });
    const handoff = join(project, ".skillopt-sleep", "handoff");
    expect(existsSync(join(handoff, "round.json"))).toBe(true);
    expect(existsSync(join(handoff, "tasks.json"))).toBe(false);
  });
});
