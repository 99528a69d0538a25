import { describe, expect, test } from "bun:test";
import { createMockBackend } from "../../src/sleep/backend/index.ts";
import type { SleepBackend } from "../../src/sleep/backend/types.ts";
import { consolidate } from "../../src/sleep/consolidate.ts";
import { dreamAugment, persistentVal, recallTasks } from "../../src/sleep/dream.ts";
import { getRules } from "../../src/sleep/learned-block.ts";
import type { TaskRecord } from "../../src/sleep/types.ts";

const t = (id: string, intent: string, split: TaskRecord["split"], over: Partial<TaskRecord> = {}): TaskRecord => ({
  id,
  project: "/p",
  intent,
  context_excerpt: "",
  system: "",
  attempted_solution: "",
  outcome: "fail",
  reference_kind: "rule",
  reference: "",
  judge: { kind: "rule", checks: [{ op: "contains", arg: "bun test" }] },
  tags: [],
  source_sessions: [],
  split,
  origin: "real",
  derived_from: "",
  skill_hint: "",
  ...over,
});

describe("dreaming, recall and the persistent gate slice", () => {
  test("dream variants are train-only copies of real train tasks", () => {
    const out = dreamAugment([t("a", "run the tests", "train"), t("b", "other", "val")], 2);
    expect(out.map((x) => x.id)).toEqual(["a", "b", "a_dream0", "a_dream1"]);
    expect(out.slice(2).every((x) => x.split === "train" && x.origin === "dream" && x.derived_from === "a")).toBe(true);
  });
  test("recall brings back similar archived train tasks, never tonight's ids or val tasks", () => {
    const tonight = [t("a", "run the parser tests again", "train"), t("v", "validate", "val")];
    const archive = [
      t("a", "run the parser tests again", "train"),
      t("old1", "run the parser tests", "train"),
      t("old2", "deploy docs", "train"),
      t("oldv", "run the parser tests", "val"),
    ];
    expect(recallTasks(tonight, archive, 5).map((x) => x.id)).toEqual(["recall:old1"]);
  });
  test("archived val tasks top tonight's gate slice up to the minimum", () => {
    const tonight = [t("a", "x", "train"), t("b", "y", "val")];
    const archive = [
      t("b", "y", "val"),
      t("c", "z", "val"),
      t("d", "w", "val", { reference_kind: "none" }),
      t("e", "q", "val"),
    ];
    expect(persistentVal(tonight, archive, 3).map((x) => x.id)).toEqual(["c", "e"]);
  });
});

describe("contrastive reflection (dream_rollouts > 1)", () => {
  test("sets with a spread reach the backend's contrast; its edits are gated like any other", async () => {
    const mock = createMockBackend();
    let seen = 0;
    const backend: SleepBackend = {
      ...mock,
      name: "contrast-test",
      // Sample 1 happens to follow the preference; sample 0 does not, unless the rule is learned.
      async attempt(_task, skill, memory, sampleId, tools) {
        const learned = `${skill}\n${memory}`.includes("Always run `bun test`.");
        return {
          text: learned || sampleId === 1 ? "ran bun test" : "ran npm test",
          toolsCalled: tools.slice(0, 0),
          tokens: 0,
        };
      },
      async contrast(sets, input) {
        seen = sets.length;
        return {
          edits: [
            {
              target: input.target,
              op: "add",
              content: "Always run `bun test`.",
              anchor: "",
              rationale: "the good attempts did",
            },
          ],
          raw: "[]",
          tokens: 0,
        };
      },
    };
    const tasks = [t("a", "one", "train"), t("b", "two", "train"), t("c", "three", "val"), t("d", "four", "val")];
    const r = await consolidate(
      { backend, workers: 2 },
      {
        tasks,
        skill: "# s\n",
        memory: "",
        editBudget: 2,
        metric: { metric: "mixed", mixedWeight: 0.5 },
        noRegression: false,
        gateOn: true,
        granularity: "edit",
        evolveSkill: true,
        evolveMemory: false,
        minVal: 2,
        preferences: "",
        rejectedBefore: [],
        rolloutsK: 2,
      },
    );
    expect(seen).toBe(2);
    expect(r.accepted).toBe(true);
    expect(getRules(r.newSkill)).toEqual(["Always run `bun test`."]);
  });
});
