import { describe, expect, test } from "bun:test";
import {
  APPENDIX_END,
  APPENDIX_START,
  applyEdits,
  applyRuleEdits,
  formatViolation,
  mergeAppendix,
  parseFrontmatter,
  SLOW_END,
  SLOW_START,
  setSlowUpdate,
} from "../../src/engine/index.ts";
import { formatViolationText } from "../../src/report/index.ts";

const SKILL = `---
name: house-style
description: How to answer.
---
# House style

## Conventions
- Dates: write them long.

${SLOW_START}
- Guidance: keep dates long.
${SLOW_END}

${APPENDIX_START}
## Execution Notes Appendix
- Remember the date rule.
${APPENDIX_END}
`;

describe("edits on the skill document (spec §2.7.1)", () => {
  test("edits targeting protected regions or the frontmatter are skipped and the regions stay byte-identical", () => {
    const r = applyEdits(SKILL, [
      { op: "replace", target: "- Guidance: keep dates long.", content: "- Guidance: hacked" },
      { op: "delete", target: "- Remember the date rule." },
      { op: "replace", target: "name: house-style", content: "name: other" },
      { op: "insert_after", target: "description: How to answer.", content: "oops" },
    ]);
    expect(r.report.map((x) => x.status)).toEqual([
      "skipped_protected_region",
      "skipped_protected_region",
      "skipped_protected_region",
      "skipped_protected_region",
    ]);
    expect(r.skill).toBe(SKILL);
    expect(r.summary).toEqual({ total: 4, applied: 0, skipped: 4, errors: 0 });
  });

  test("append lands before the earliest protected region", () => {
    const r = applyEdits(SKILL, [{ op: "append", content: "- Numbers: two decimals." }]);
    expect(r.report[0]!.status).toBe("applied_append_before_protected_region");
    expect(r.skill.indexOf("- Numbers: two decimals.")).toBeLessThan(r.skill.indexOf(SLOW_START));
    expect(r.skill.slice(r.skill.indexOf(SLOW_START))).toBe(SKILL.slice(SKILL.indexOf(SLOW_START)));
  });

  test("insert_after puts the content on a new line after the anchor's line", () => {
    const r = applyEdits("# A\n## Conventions\n- x\n", [
      { op: "insert_after", target: "## Conventions", content: "- y" },
    ]);
    expect(r.skill).toBe("# A\n## Conventions\n\n- y\n- x\n");
  });

  test("a failed edit is reported with its reason, and later edits see the evolving text", () => {
    const r = applyEdits("# A\n- one\n", [
      { op: "replace", target: "- one", content: "- two" },
      { op: "delete", target: "- one" },
      { op: "replace", target: "- two", content: "- three" },
      { op: "frobnicate", content: "x" },
      { op: "insert_after", target: "## Missing heading", content: "- four" },
    ]);
    expect(r.report.map((x) => x.status)).toEqual([
      "applied_replace",
      "skipped_delete_target_not_found",
      "applied_replace",
      "skipped_unknown_op",
      "applied_insert_after_fallback_append",
    ]);
    expect(r.report[1]!.reason).toContain("does not occur");
    expect(r.skill).toBe("# A\n- three\n\n- four\n");
  });

  test("an anchor that differs only in case and spacing matches once (fuzzy), an ambiguous one does not", () => {
    const r = applyEdits("# A\n## Conventions   \n- x\n", [
      { op: "replace", target: "## conventions", content: "## Rules" },
    ]);
    expect(r.report[0]!.status).toBe("applied_replace_fuzzy");
    expect(r.skill).toBe("# A\n## Rules   \n- x\n");
    const amb = applyEdits("- Item one\n- ITEM ONE\n", [{ op: "delete", target: "- item one" }]);
    expect(amb.report[0]!.status).toBe("skipped_delete_target_not_found");
  });

  test("protected markers are stripped from edit content", () => {
    const r = applyEdits("# A\n", [{ op: "append", content: `${SLOW_START} sneaky` }]);
    expect(r.skill).toBe("# A\n\nsneaky\n");
  });
});

describe("protected regions and format checks", () => {
  test("the slow-update region is replaced in place before the appendix", () => {
    const next = setSlowUpdate(SKILL, "- New guidance");
    expect(next.match(new RegExp(SLOW_START, "g"))!.length).toBe(1);
    expect(next).toContain(`${SLOW_START}\n- New guidance\n${SLOW_END}`);
    expect(next.indexOf(SLOW_START)).toBeLessThan(next.indexOf(APPENDIX_START));
  });

  test("appendix notes merge with case- and whitespace-insensitive dedup", () => {
    const r = mergeAppendix(SKILL, ["remember the   DATE rule.", "Check units."]);
    expect(r.added).toBe(1);
    expect(r.total).toBe(2);
    expect(r.skill.match(new RegExp(APPENDIX_START, "g"))!.length).toBe(1);
  });

  test("frontmatter is parsed and a candidate that breaks it is rejected before any rollout", () => {
    expect(parseFrontmatter(SKILL)).toEqual({ name: "house-style", description: "How to answer." });
    expect(formatViolation(SKILL, SKILL, null)).toBeUndefined();
    // Typed reasons, worded by the report (the console's REJECT (format) line, the eval and preflight messages).
    const cases = [
      [SKILL.replace("name: house-style\n", ""), null, { kind: "no_name" }, "the frontmatter has no `name`"],
      [
        SKILL.replace("How to answer.", "x".repeat(1025)),
        null,
        { kind: "description_too_long", chars: 1025, max: 1024 },
        "the frontmatter description is 1025 characters (max 1024)",
      ],
      [
        SKILL.replace(/^---\n/, ""),
        null,
        { kind: "frontmatter_missing" },
        "the YAML frontmatter of the skill is missing or no longer closed",
      ],
    ] as const;
    for (const [candidate, max, kind, words] of cases) {
      const v = formatViolation(candidate, SKILL, max);
      expect(v).toEqual(kind);
      expect(formatViolationText(v!)).toBe(words);
    }
    const long = formatViolation(SKILL, SKILL, 5);
    expect(long).toMatchObject({ kind: "too_many_tokens", max: 5 });
    expect(formatViolationText(long!)).toMatch(
      /^the skill body is about \d+ tokens, over optimizer\.max_skill_tokens=5$/,
    );
  });
});

describe("optimizer output schemas", () => {
  test("accept null for absent fields and a single change_summary string", async () => {
    const v = await import("valibot");
    const { analystSchema, RewriteSchema } = await import("../../src/engine/schemas.ts");
    const a = v.safeParse(analystSchema("patch"), {
      batch_size: 4,
      patch: { reasoning: null, edits: [{ op: "append", target: null, content: "- x" }] },
    });
    expect(a.success).toBe(true);
    const r = v.parse(RewriteSchema, { reasoning: "r", change_summary: "one change", new_skill: "# S\n" });
    expect(r.change_summary).toEqual(["one change"]);
    expect(
      v.safeParse(analystSchema("patch"), { patch: { edits: [{ op: "insert_before", content: "x" }] } }).success,
    ).toBe(false);
  });
});

describe("trajectories for the optimizer", () => {
  test("fit the prompt budget by clipping long entries in the middle", async () => {
    const { trajectoriesWithinBudget } = await import("../../src/engine/messages.ts");
    const bench = {
      name: "b",
      initialSkill: "",
      loadSplits: async () => ({ train: [], val: [], test: [] }),
      rollout: async () => {
        throw new Error("unused");
      },
    };
    const long = "x".repeat(50_000);
    const results = Array.from({ length: 8 }, (_, i) => ({
      id: `t${i}`,
      hard: 0,
      soft: 0,
      question: "Q",
      trajectory: Array.from({ length: 10 }, () => ({ role: "assistant", content: long })),
    }));
    const out = trajectoriesWithinBudget(results, bench, 100_000);
    expect(JSON.stringify(out).length).toBeLessThanOrEqual(100_000);
    const first = (out[0]!.trajectory as { content: string }[])[0]!.content;
    expect(first).toContain("characters omitted");
    expect(first.startsWith("xxx")).toBe(true);
  });
});

describe("applyRuleEdits: the same applier on Sleep's learned-block rules", () => {
  const rules = ["Run bun test before pushing.", "Prefer small commits.", "Use   tabs in Makefiles."];
  test("add appends a rule and refuses one that is already there, compared without case or spacing", () => {
    const r = applyRuleEdits(rules, [
      { op: "add", content: "Name  branches after the issue." },
      { op: "add", content: "prefer SMALL commits." },
    ]);
    expect(r.rules).toEqual([...rules, "Name branches after the issue."]);
    expect(r.report.map((x) => x.status)).toEqual(["applied_add", "skipped_duplicate"]);
    expect(r.summary).toEqual({ total: 2, applied: 1, skipped: 1, errors: 0 });
  });
  test("replace rewrites every rule containing the target; delete falls back to the content as its target", () => {
    const r = applyRuleEdits(rules, [
      { op: "replace", target: "use tabs", content: "Use tabs in Makefiles and .gitmodules." },
      { op: "delete", content: "small commits" },
    ]);
    expect(r.rules).toEqual(["Run bun test before pushing.", "Use tabs in Makefiles and .gitmodules."]);
  });
  test("a target no rule contains, a replace that changes nothing and an engine-only op are reported, not applied", () => {
    const r = applyRuleEdits(rules, [
      { op: "delete", target: "never mentioned" },
      { op: "replace", target: "small commits", content: "Prefer small commits." },
      { op: "insert_after", target: "bun test", content: "x" },
    ]);
    expect(r.rules).toEqual(rules);
    expect(r.report.map((x) => [x.status, x.reason])).toEqual([
      ["skipped_delete_target_not_found", "no rule contains the target"],
      ["skipped_replace_unchanged", "the rule already reads so"],
      ["skipped_unknown_op", 'unknown op "insert_after" (use add, delete or replace)'],
    ]);
  });
  test("the skill-text unit names its own ops for an unknown one", () => {
    expect(applyEdits("# S\n", [{ op: "add", content: "x" }]).report[0]?.reason).toBe(
      'unknown op "add" (use append, insert_after, replace or delete)',
    );
  });
});
