import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256 } from "../../src/lib/index.ts";
import {
  assignSplits,
  ensureMinVal,
  findCorrection,
  heuristicTask,
  loadTasksFile,
  mine,
  sessionOutcome,
} from "../../src/sleep/mine/index.ts";
import type { TaskRecord } from "../../src/sleep/types.ts";
import { tempDir } from "../support/tmp.ts";

const digest = (prompts: string[], over: Record<string, unknown> = {}) => ({
  session_id: `s-${sha256(prompts.join("|")).slice(0, 8)}`,
  project: "/p",
  git_branch: "",
  user_prompts: prompts,
  assistant_finals: ["done"],
  tools_used: ["Bash"],
  skills_used: [],
  feedback_signals: [],
  n_user_turns: prompts.length,
  ...over,
});

describe("session outcome", () => {
  test("outcome uses follow-ups only", () => {
    expect(sessionOutcome(["thanks"], 2)).toBe("success");
    expect(sessionOutcome(["still failing"], 2)).toBe("fail");
    expect(sessionOutcome(["and also the docs", "one more"], 3)).toBe("mixed");
    expect(sessionOutcome([], 1)).toBe("unknown");
  });
});

describe("corrections", () => {
  test("'use X instead of Y' and its variants are found", () => {
    expect(findCorrection(["No, use `bun test` instead of `npm test`."])).toEqual({
      prefer: ["bun test"],
      avoid: ["npm test"],
      index: 0,
    });
    expect(findCorrection(["please don't use moment, use date-fns"])).toEqual({
      prefer: ["date-fns"],
      avoid: ["moment"],
      index: 0,
    });
    expect(findCorrection(["use pnpm, not npm"])).toEqual({ prefer: ["pnpm"], avoid: [], index: 0 });
    expect(findCorrection(["use it instead of that"])).toBeUndefined();
    expect(findCorrection(["looks fine"])).toBeUndefined();
  });
  test("a corrected session becomes a checkable rule task about the corrected request", () => {
    const t = heuristicTask(digest(["Write tests for the parser", "No, use `vitest` instead of `jest`", "ok thanks"]))!;
    expect(t).toMatchObject({
      intent: "Write tests for the parser",
      outcome: "fail",
      reference_kind: "rule",
      judge: {
        kind: "rule",
        checks: [
          { op: "contains", arg: "vitest" },
          { op: "not_contains", arg: "jest" },
        ],
      },
    });
    expect(t.tags[0]).toBe("correction");
    expect(t.id).toBe(`task_${sha256("/p::Write tests for the parser").slice(0, 12)}`);
  });
});

describe("mine()", () => {
  test("near-duplicate requests cluster into one recurring task that sorts first", async () => {
    const tasks = await mine(
      [
        digest(["Explain the build pipeline of this repository"]),
        digest(["Fix the flaky login test in the auth module"]),
        digest(["fix the flaky login test in auth module please"]),
        digest(["Fix flaky login test (auth module)"]),
      ],
      { maxTasks: 10, maxSessions: 10, val: 0.34, test: 0, seed: 42 },
    );
    expect(tasks).toHaveLength(2);
    expect(tasks[0]!.source_sessions).toHaveLength(3);
    expect(tasks[0]!.tags).toContain("recurring:3");
  });
});

describe("splits", () => {
  const t = (id: string): TaskRecord => ({
    id,
    project: "",
    intent: "x",
    context_excerpt: "",
    system: "",
    attempted_solution: "",
    outcome: "unknown",
    reference_kind: "none",
    reference: "",
    judge: {},
    tags: [],
    source_sessions: [],
    split: "train",
    origin: "real",
    derived_from: "",
    skill_hint: "",
  });
  test("split buckets are sha256(str(seed) + id) % 100, as upstream", () => {
    const ids = Array.from({ length: 40 }, (_, i) => `task_${i}`);
    const out = assignSplits(ids.map(t), 0.34, 0, 42);
    for (const x of out) {
      const bucket = Number(BigInt(`0x${sha256(`42${x.id}`)}`) % 100n);
      if (bucket < 34) expect(x.split).toBe("val");
    }
    expect(out.filter((x) => x.split === "val").length).toBeGreaterThan(0);
  });
  test("ensureMinVal tops the gate slice up deterministically and keeps a train task", () => {
    const out = ensureMinVal([t("a"), t("b"), t("c")], 5, 42);
    expect(out.filter((x) => x.split === "val")).toHaveLength(2);
    expect(out.filter((x) => x.split === "train")).toHaveLength(1);
    expect(ensureMinVal([t("a"), t("b"), t("c")], 5, 42)).toEqual(out);
  });
});

describe("tasks file (skillopt_sleep.tasks.v1)", () => {
  test("errors name every unusable task; warnings are returned", () => {
    using tmp = tempDir();
    const p = join(tmp.path, "t.json");
    writeFileSync(
      p,
      JSON.stringify({
        format: "skillopt_sleep.tasks.v1",
        tasks: [
          {
            id: "a",
            intent: "ok",
            reference_kind: "rule",
            judge: { kind: "rule", checks: [{ op: "regex", arg: "(" }] },
          },
          {
            id: "b",
            intent: "ok",
            reference_kind: "rule",
            judge: { kind: "rule", checks: [{ op: "max_chars", arg: -1 }] },
          },
        ],
      }),
    );
    expect(() => loadTasksFile(p, { holdoutFraction: 0.34, seed: 42 })).toThrow(
      /task a: checks\[0\]: regex does not compile[\s\S]*task b: checks\[0\] \(max_chars\)/,
    );
  });
  test("legacy split names are normalised and a bare array is accepted", () => {
    using tmp = tempDir();
    const p = join(tmp.path, "t.json");
    writeFileSync(
      p,
      JSON.stringify([
        { id: "a", intent: "ok", split: "replay" },
        { id: "b", intent: "ok", split: "holdout" },
      ]),
    );
    const r = loadTasksFile(p, { holdoutFraction: 0.34, seed: 42 });
    expect(r.tasks.map((x) => x.split)).toEqual(["train", "val"]);
    expect(r.meta.format).toBe("skillopt_sleep.tasks.v1");
  });
});

describe("target-skill filter", () => {
  test("tasks about the target skill are kept and ranked first; with no match the list is unchanged", async () => {
    const { filterTasksForTarget } = await import("../../src/sleep/mine/index.ts");
    const mk = (id: string, intent: string) => ({ ...heuristicTask(digest([intent]))!, id });
    const tasks = [
      mk("a", "Write the weekly newsletter"),
      mk("b", "Resolve the merge conflict in main"),
      mk("c", "Rebase onto main and fix conflicts"),
    ];
    const out = filterTasksForTarget(
      tasks,
      "# Git conflicts\n\nHow to resolve conflicts.\n",
      "/h/.claude/skills/git-conflicts/SKILL.md",
    );
    expect(out.map((t) => t.id)).toEqual(["c", "b"]);
    expect(filterTasksForTarget(tasks, "# Cooking\n", "/h/skills/cooking/SKILL.md").map((t) => t.id)).toEqual([
      "a",
      "b",
      "c",
    ]);
  });
});
