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

describe("a handoff verdict with no score (rule 4)", () => {
  test("is no verdict: the night fails naming the answer file, stages nothing; a rewritten answer lets the next review go on", async () => {
    using tmp = tempDir();
    const project = join(tmp.path, "proj");
    const home = join(tmp.path, "home");
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    const rule = { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] };
    const tasks = ["slugify tests", "login regression", "config loader refactor", "retry tests"].map((intent, i) => ({
      id: `task_v${i}`,
      intent: `Handle the ${intent}`,
      // One held-out task is graded by the judge against a rubric; the others are rule-checked.
      ...(i === 1
        ? { reference_kind: "rubric", reference: "Runs bun test, never npm test" }
        : { reference_kind: "rule", judge: rule }),
      tags: ["correction"],
      split: i % 2 ? "val" : "train",
    }));
    const file = join(project, "tasks.json");
    writeFileSync(file, JSON.stringify({ format: TASKS_FORMAT, reviewed: true, tasks }));
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const handoff = join(project, ".skillopt-sleep", "handoff");
    const isVerdict = (prompt: string) => prompt.includes("Grade a response against a rubric");
    const rounds = async (verdict: string) => {
      for (let n = 0; n < 8; n++) {
        const r = await runCli(
          ["sleep", "review", "--backend", "handoff", "--project", project, "--tasks-file", file],
          { env },
        );
        if (r.code !== 3) return r;
        const pending = JSON.parse(readFileSync(join(handoff, "pending.json"), "utf8"));
        for (const p of pending.pending as Array<{ prompt: string; answer_file: string }>)
          writeFileSync(p.answer_file, isVerdict(p.prompt) ? verdict : answer(p.prompt));
      }
      throw new Error("the night kept asking");
    };
    const failed = await rounds("Looks right to me.");
    expect(failed.code, failed.stderr).toBe(1);
    const errors = failed.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^error: optimizer gave no judge verdict for 1 of 2 replay\(s\) of the baseline_val phase, so nothing was decided on them; last error: judge verdict did not parse: \S+\.md holds no \{"score": <0\.\.1>\} object$/,
    );
    expect(failed.stderr).toContain("rewrite the answer file named above and run the same command again");
    const staging = join(project, ".skillopt-sleep", "staging");
    expect(existsSync(staging) ? readdirSync(staging).filter((n) => !n.startsWith(".")) : []).toEqual([]);
    const status = JSON.parse((await runCli(["sleep", "status", "--project", project, "--json"], { env })).stdout);
    expect(status).toMatchObject({ night: 0, failed_nights: 1 });

    // The agent rewrites the verdict it gave; the same round goes on from its answers.
    const bad = /(\S+\.md) holds no/.exec(errors[0]!)![1]!;
    writeFileSync(bad, JSON.stringify({ score: 0.2, reason: "runs npm test" }));
    const ok = await rounds(JSON.stringify({ score: 0.9, reason: "runs bun test" }));
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/held-out \d\.\d{3} -> \d\.\d{3} => /);
  });
});
