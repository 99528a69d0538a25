import { describe, expect, test } from "bun:test";
import { createMockBackend, MOCK_RULES } from "../../src/sleep/backend/index.ts";
import { consolidate, type ConsolidateOptions } from "../../src/sleep/consolidate.ts";
import { getRules, skillScaffold } from "../../src/sleep/learned-block.ts";
import type { TaskRecord } from "../../src/sleep/types.ts";

function task(id: string, reference: string, rules: string[], split: "train" | "val"): TaskRecord {
  return {
    id,
    project: "/personas/demo",
    intent: `Give the arXiv id of paper ${id}`,
    context_excerpt: "",
    system: "",
    attempted_solution: "",
    outcome: "fail",
    reference_kind: "exact",
    reference,
    judge: {},
    tags: rules.map((r) => `rule:${r}`),
    source_sessions: [],
    split,
    origin: "real",
    derived_from: "",
    skill_hint: "",
  };
}

const researcher = (split: (i: number) => "train" | "val") =>
  ["1706.03762", "1810.04805", "2005.14165", "1512.03385", "1409.0473", "2106.09685"].map((n, i) =>
    task(`r${i}`, `arXiv:${n}`, ["wrap-answer", "arxiv-id"], split(i)),
  );

const base: Omit<ConsolidateOptions, "tasks"> = {
  skill: skillScaffold("skillopt-sleep-learned"),
  memory: "",
  editBudget: 4,
  metric: { metric: "mixed", mixedWeight: 0.5 },
  noRegression: false,
  gateOn: true,
  granularity: "edit",
  evolveSkill: true,
  evolveMemory: false,
  minVal: 2,
  preferences: "",
  rejectedBefore: [],
};
const ctx = () => ({ backend: createMockBackend(), workers: 2 });

describe("consolidation behind the gate (mock backend)", () => {
  test("complementary rules proposed together are accepted together", async () => {
    const r = await consolidate(ctx(), { ...base, tasks: researcher((i) => (i % 2 ? "val" : "train")) });
    expect(r.gateAction).toBe("accept_new_best");
    expect(r.accepted).toBe(true);
    expect(r.baseline).toBeLessThan(r.candidate);
    expect(r.candidate).toBe(1);
    expect(getRules(r.newSkill)).toEqual([MOCK_RULES["wrap-answer"], MOCK_RULES["arxiv-id"]]);
  });

  test("a harmful edit is blocked by the gate while the useful one from the same batch is kept", async () => {
    const tasks = [
      ...researcher((i) => (i % 2 ? "val" : "train")).map((t) => ({
        ...t,
        tags: ["rule:wrap-answer"],
        reference: t.reference,
      })),
      { ...task("harm", "never-produced", ["__harmful__"], "train"), intent: "Answer the harmful probe" },
    ];
    // Train order puts the harmful task last; the mock proposes both rules in one reflect batch.
    const r = await consolidate(ctx(), { ...base, tasks });
    expect(r.accepted).toBe(true);
    expect(getRules(r.newSkill)).toEqual([MOCK_RULES["wrap-answer"]]);
    expect(r.newSkill).not.toContain(MOCK_RULES.__harmful__);
    expect(r.rejected.map((e) => e.content)).toEqual([MOCK_RULES.__harmful__]);
    expect(r.gateTrials.some((t) => t.edits?.some((e) => e.content === MOCK_RULES.__harmful__) && !t.accepted)).toBe(
      true,
    );
  });

  test("upstream's all-or-nothing batch gate sinks the useful rule with the harmful one", async () => {
    const tasks = [
      ...researcher((i) => (i % 2 ? "val" : "train")).map((t) => ({ ...t, tags: ["rule:wrap-answer"] })),
      { ...task("harm", "never-produced", ["__harmful__"], "train"), intent: "Answer the harmful probe" },
    ];
    const r = await consolidate(ctx(), { ...base, tasks, granularity: "batch" });
    expect(r.accepted).toBe(false);
    expect(r.gateAction).toBe("reject");
    expect(r.rejected.map((e) => e.content).sort()).toEqual([MOCK_RULES["wrap-answer"], MOCK_RULES.__harmful__].sort());
  });

  test("a held-out set smaller than min_val_tasks yields reject_unverified", async () => {
    const tasks = researcher((i) => (i === 1 ? "val" : "train"));
    const r = await consolidate(ctx(), { ...base, tasks });
    expect(r.nVal).toBe(1);
    expect(r.gateAction).toBe("reject_unverified");
    expect(r.accepted).toBe(false);
    expect(r.newSkill).toBe(base.skill);
  });

  test("edits rejected on earlier nights are not proposed again", async () => {
    const r = await consolidate(ctx(), {
      ...base,
      tasks: researcher((i) => (i % 2 ? "val" : "train")),
      rejectedBefore: [MOCK_RULES["arxiv-id"]],
    });
    expect(r.applied.map((e) => e.content)).not.toContain(MOCK_RULES["arxiv-id"]);
    expect(r.accepted).toBe(false);
  });

  test("a call budget of zero stops the night cleanly with nothing accepted", async () => {
    const { NightLedger } = await import("../../src/sleep/budget.ts");
    const ledger = new NightLedger({ seconds: 0 });
    const r = await consolidate({ ...ctx(), ledger }, { ...base, tasks: researcher((i) => (i % 2 ? "val" : "train")) });
    expect(r.gateAction).toBe("budget_exhausted");
    expect(r.accepted).toBe(false);
    expect(r.notes.join(" ")).toContain("time budget");
  });
});

describe("gate margin", () => {
  test("an improvement not larger than gate_margin is not accepted", async () => {
    const r = await consolidate(ctx(), { ...base, tasks: researcher((i) => (i % 2 ? "val" : "train")), margin: 0.9 });
    expect(r.accepted).toBe(false);
    expect(r.gateAction).toBe("reject");
  });
});

describe("attacker: a hostile model proposes a rule that carries a credential", () => {
  // The model (or a session it read) slips a key into a proposed rule; nothing credential-shaped
  // may be applied, gated or staged, whether a pattern names it or only its randomness gives it away.
  for (const [name, leak] of [
    ["a key no pattern names", "Deploy with the staging key Xq7vR2mZ9tK4pW8nB3cY6hJ1 always."],
    ["a Vault token", `Log in with hvs.${"CAESIJk3x9Qz".repeat(8)} first.`],
    ["a key glued to a word", "Use xxxxsk-proj-AbCdEf0123456789GhIjKlMn for the API."],
  ] as const) {
    test(`${name} is withheld; the useful rule from the same batch is kept`, async () => {
      const mock = createMockBackend();
      const hostile = {
        ...mock,
        async reflect(input: Parameters<NonNullable<typeof mock.reflect>>[0]) {
          const r = await mock.reflect(input);
          const first = r.edits[0]!;
          return { ...r, edits: [...r.edits, { ...first, content: leak }] };
        },
      };
      const tasks = researcher((i) => (i % 2 ? "val" : "train"));
      for (const gateOn of [true, false]) {
        const r = await consolidate({ backend: hostile, workers: 2 }, { ...base, tasks, gateOn });
        expect(r.newSkill).not.toContain(leak);
        expect(JSON.stringify(r)).not.toContain(leak);
        expect(getRules(r.newSkill)).toContain(MOCK_RULES["wrap-answer"]);
      }
    });
  }
});
