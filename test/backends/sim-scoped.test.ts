import { describe, expect, test } from "bun:test";
import { simAnalyst } from "../../src/backends/sim/analyst.ts";
import { rulesInSkill, scopeOfLine, scopeOfTask, type TaskValue } from "../../src/backends/sim/conventions.ts";
import { makeDraw } from "../../src/backends/sim/draw.ts";
import { simAnswer } from "../../src/backends/sim/index.ts";
import { simMerge, simShorten, simSlowUpdate } from "../../src/backends/sim/stages.ts";
import { ruleLine, setRule } from "../../src/backends/sim/skill-text.ts";
import { SCOPE_SLIP, successProbability } from "../../src/backends/sim/stochastic.ts";
import { taskPrompt } from "../../src/benchmarks/conventions/generator.ts";
import { targetSystemPrompt } from "../../src/benchmarks/conventions/index.ts";

// Scoped rules: a rule line naming an office applies to tasks naming that office (docs/search.md).
const DATE: TaskValue = { kind: "date", year: 2024, month: 3, day: 7 };
const ISO = "- **Dates:** Write dates as YYYY-MM-DD (ISO 8601).";
const LISBON_LONG = "- **Dates, Lisbon office only:** Write dates with the month name spelled out: Month D, YYYY.";
const head = (v: TaskValue) => taskPrompt("For the head office: When is the invoice due?", v);
const lisbon = (v: TaskValue) => taskPrompt("For the Lisbon office: When is the invoice due?", v);
const O = { seed: 7, lapseRate: 0, noiseRate: 0.3, latencyMs: 0 };
const ask = (skill: string, task: string, sample = 0) =>
  simAnswer(
    [
      { role: "system", content: targetSystemPrompt(skill) },
      { role: "user", content: task },
    ],
    sample,
    O,
  );

describe("scoped rules in the simulator's target", () => {
  test("a line naming an office is a rule for that office's tasks only, whatever its place", () => {
    expect(scopeOfLine(LISBON_LONG)).toBe("lisbon");
    expect(scopeOfLine(ISO)).toBeUndefined();
    expect(scopeOfTask(lisbon(DATE))).toBe("lisbon");
    expect(scopeOfTask(taskPrompt("When is it due?", DATE))).toBeUndefined();
    for (const skill of [`${ISO}\n${LISBON_LONG}`, `${LISBON_LONG}\n${ISO}`]) {
      expect(rulesInSkill(skill, lisbon(DATE)).get("date")?.convention.id).toBe("date_long");
      expect(rulesInSkill(skill, head(DATE)).get("date")?.convention.id).toBe("date_iso");
      // Without a task (or a task naming no office) the scoped line is not read.
      expect(rulesInSkill(skill).get("date")?.convention.id).toBe("date_iso");
    }
    // A scoped line alone leaves every other task to the default.
    expect(rulesInSkill(LISBON_LONG, head(DATE)).get("date")).toBeUndefined();
  });

  test("the stochastic target's exact probabilities: the office's rule, confused at SCOPE_SLIP", () => {
    const skill = `${ISO}\n${LISBON_LONG}`;
    // Temperature 0: no lapse, only the scope confusion is left.
    expect(successProbability(skill, DATE, "March 7, 2024", 0, 7, lisbon(DATE))).toBeCloseTo(1 - SCOPE_SLIP, 12);
    expect(successProbability(skill, DATE, "2024-03-07", 0, 7, lisbon(DATE))).toBeCloseTo(SCOPE_SLIP, 12);
    expect(successProbability(skill, DATE, "2024-03-07", 0, 7, head(DATE))).toBeCloseTo(1 - SCOPE_SLIP, 12);
    // No scoped line: no confusion, as before scoped rules existed.
    expect(successProbability(ISO, DATE, "2024-03-07", 0, 7, lisbon(DATE))).toBe(1);
  });

  test("the deterministic target follows the office's rule and slips at about SCOPE_SLIP", () => {
    const skill = `${ISO}\n${LISBON_LONG}`;
    const answers = Array.from({ length: 400 }, (_, i) => ask(skill, lisbon(DATE), i));
    const slips = answers.filter((a) => a === "2024-03-07").length;
    expect(answers.filter((a) => a === "March 7, 2024").length + slips).toBe(400);
    // Binomial(400, 0.1): mean 40, sd 6; 5 sd either side.
    expect(slips).toBeGreaterThan(10);
    expect(slips).toBeLessThan(70);
    expect(ask(ISO, lisbon(DATE))).toBe("2024-03-07");
  });

  test("skill edits keep an office's rule apart from the family's general rule", () => {
    const skill = `# S\n\n## Conventions\n${ISO}\n${LISBON_LONG}\n`;
    expect(ruleLine(skill, "date")).toBe(ISO);
    expect(ruleLine(skill, "date", "lisbon")).toBe(LISBON_LONG);
    const us = "- **Dates:** Write dates as MM/DD/YYYY (month first).";
    const next = setRule(skill, "date", us);
    expect(ruleLine(next, "date")).toBe(us);
    expect(ruleLine(next, "date", "lisbon")).toBe(LISBON_LONG);
    // The merge keeps one proposal per family and office, not one per family.
    const merged = simMerge({
      stage: "merge",
      update_mode: "patch",
      patches: [{ edits: [{ op: "append", content: us }] }, { edits: [{ op: "append", content: LISBON_LONG }] }],
    }) as { edits: { content: string }[] };
    expect(merged.edits.map((e) => e.content).sort()).toEqual([LISBON_LONG, us].sort());
  });
});

/** A failed conventions trajectory as the engine renders it for the optimizer. */
function failed(task: string, expected: string, got: string, id: string) {
  return {
    id,
    task,
    outcome: "fail",
    hard: 0,
    predicted_answer: got,
    trajectory: [
      {
        role: "verification",
        content: `Evaluation: FAIL. Expected ${JSON.stringify(expected)}, got ${JSON.stringify(got)}.`,
      },
    ],
  };
}

const quote = (skill: string) => `<current_skill>\n${skill}\n</current_skill>`;
const analyst = (skill: string, trajectories: unknown[], seed = 1) =>
  simAnalyst(
    { draw: makeDraw(seed), noise: 0 },
    quote(skill),
    { side: "failure", update_mode: "patch", budget: 5, skill_aware: false, has_meta_skill: false, trajectories },
    `req-${seed}`,
  ) as { patch: { edits: { op: string; content: string; target?: string }[] } };

describe("the simulated optimizer proposes scoped rules from the failures it sees", () => {
  const days = [3, 9, 14, 21].map((day): TaskValue => ({ kind: "date", year: 2023, month: 5, day }));
  const skill = `# S\n\n## Conventions\n${ISO}\n`;

  test("offices that disagree in one batch: the failing office gets a rule of its own", () => {
    const trajectories = [
      ...days
        .slice(0, 3)
        .map((v, i) => failed(lisbon(v), `May ${(v as { day: number }).day}, 2023`, "2023-05-0x", `l${i}`)),
      // A head-office lapse: its expected answer follows the general rule the skill states.
      failed(head(days[3]!), "2023-05-21", "May 21, 2023", "h0"),
    ];
    const edits = analyst(skill, trajectories).patch.edits;
    expect(edits).toHaveLength(1);
    expect(scopeOfLine(edits[0]!.content)).toBe("lisbon");
    expect(rulesInSkill(edits[0]!.content, lisbon(DATE)).get("date")?.convention.id).toBe("date_long");
    expect(edits[0]!.op).not.toBe("replace"); // the general rule stays
  });

  test("one office failing against a general rule: the optimizer cannot tell, and tries both over seeds", () => {
    const trajectories = days.map((v, i) =>
      failed(lisbon(v), `May ${(v as { day: number }).day}, 2023`, "2023-05-0x", `l${i}`),
    );
    const kinds = new Set(
      Array.from({ length: 24 }, (_, s) => {
        const e = analyst(skill, trajectories, s + 1).patch.edits[0]!;
        return scopeOfLine(e.content) === "lisbon" ? "scoped" : e.op === "replace" ? "replace" : "other";
      }),
    );
    expect([...kinds].sort()).toEqual(["replace", "scoped"]);
  });

  test("with no general rule the office's convention becomes the general rule; tasks naming no office are never scoped", () => {
    const e1 = analyst("# S\n\n## Conventions\n", [failed(head(days[0]!), "2023-05-03", "May 3, 2023", "h0")]).patch
      .edits;
    expect(e1.map((e) => scopeOfLine(e.content))).toEqual([undefined]);
    for (let s = 1; s <= 12; s++) {
      const plain = days.map((v, i) =>
        failed(taskPrompt("When is it due?", v), `May ${(v as { day: number }).day}, 2023`, "2023-05-0x", `p${i}`),
      );
      for (const e of analyst(skill, plain, s).patch.edits) expect(scopeOfLine(e.content)).toBeUndefined();
    }
  });

  test("the slow update restates a rule for the failing office when the comparison shows another office differs", () => {
    const pair = (task: string, expected: string, got: string, category: string, id: string) => ({
      category,
      curr: { hard: got === expected ? 1 : 0 },
      curr_trajectory:
        got === expected
          ? { id, task, outcome: "pass", hard: 1, predicted_answer: got, trajectory: [] }
          : failed(task, expected, got, id),
    });
    const out = simSlowUpdate(
      { draw: makeDraw(3), noise: 0 },
      {
        existing_guidance: "",
        pairs: [
          pair(lisbon(days[0]!), "May 3, 2023", "2023-05-03", "persistent_fail", "l0"),
          pair(head(days[1]!), "2023-05-09", "2023-05-09", "stable_success", "h0"),
        ],
      },
      "slow",
    ) as { slow_update_content: string };
    const lines = out.slow_update_content.split("\n").slice(1);
    expect(lines).toHaveLength(1);
    expect(scopeOfLine(lines[0]!)).toBe("lisbon");
  });

  test("a shortening keeps the rule the target follows per family and office, in the fewest words it reads the same", () => {
    const skill = [
      "# House style",
      "",
      "- **Dates:** Dates use the US form month/day/year, e.g. 03/07/2024.",
      "- **Identifiers:** Identifiers are lowercase words joined by hyphens (kebab-case).",
      "- **Yes/no answers:** Be consistent with yes/no replies.",
      "- **Dates:** Dates use the ISO 8601 form YYYY-MM-DD.",
      "- **Dates, Lisbon office only:** Dates are written long form, e.g. March 7, 2024.",
    ].join("\n");
    const user = `<current_skill>\n${skill}\n</current_skill>`;
    const k = { draw: makeDraw(3), noise: 0 };
    const out = String(simShorten(k, user, "req").skill);
    expect(out.split("\n")).toEqual([
      "# House style",
      "",
      "- **Identifiers:** Name identifiers in kebab-case.",
      "- **Dates:** Write dates as YYYY-MM-DD (ISO 8601).",
      "- **Dates, Lisbon office only:** Dates are written long form, e.g. March 7, 2024.",
    ]);
    // The target reads the same rules on every office's task, with fewer tokens.
    for (const task of [head(DATE), lisbon(DATE)])
      expect(rulesInSkill(out, task).get("date")?.convention.id).toBe(
        rulesInSkill(skill, task).get("date")?.convention.id,
      );
    expect(out.length).toBeLessThan(skill.length);
    // At its noise rate it also cuts a rule it should have kept: over seeds, about noise / 3 of the answers.
    const cuts = Array.from({ length: 300 }, (_, s) =>
      simShorten({ draw: makeDraw(s), noise: 0.3 }, user, `req/${s}`),
    ).filter(
      (a) =>
        String(a.skill)
          .split("\n")
          .filter((l) => l.startsWith("- **")).length < 3,
    ).length;
    expect(cuts).toBeGreaterThan(10);
    expect(cuts).toBeLessThan(60);
  });
});
