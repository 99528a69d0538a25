import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { TASKS_FORMAT } from "../../../src/sleep/mine/index.ts";

/** The correction the rule tasks check for: a reply that follows it passes every task. */
export const RULE = "Use `bun test` instead of `npm test`.";

/**
 * A Sleep tasks file of six rule-judged tasks (train/val alternating) that pass only when the
 * reply runs `bun test` and never `npm test`; `reviewed` marks it as checked by the user.
 */
export function ruleTasksFile(dir: string, reviewed = true): string {
  const intents = [
    "Add a unit test for slugify",
    "Find the login regression",
    "Refactor the config loader",
    "Write retry policy tests",
    "Upgrade yaml and check",
    "Port the date parser",
  ];
  const tasks = intents.map((intent, i) => ({
    id: `task_fix${i}`,
    project: dir,
    intent,
    reference_kind: "rule",
    judge: {
      kind: "rule",
      checks: [
        { op: "contains", arg: "bun test" },
        { op: "not_contains", arg: "npm test" },
      ],
    },
    tags: ["correction"],
    outcome: "fail",
    split: i % 2 ? "val" : "train",
  }));
  const path = join(dir, "tasks.json");
  writeFileSync(path, JSON.stringify({ format: TASKS_FORMAT, project: dir, reviewed, tasks }, null, 2));
  return path;
}
