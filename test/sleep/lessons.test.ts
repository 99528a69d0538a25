import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { getRules, setLearned } from "../../src/sleep/learned-block.ts";
import {
  instructionsOf,
  type LessonBook,
  lessonTokens,
  observe,
  planLessons,
  sameInstruction,
} from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

const RECURRING = [
  "no, run the tests with bun test and keep them under test/, never jest",
  "No. Tests go under test/ and run with bun test, never jest.",
  "nope, run them with bun test (tests live under test/), never jest",
  "again: bun test, never jest, and tests go under test/",
  "Please run tests with bun test and keep them under test/, never jest.",
];
const ONE_OFFS = [
  "please use the staging bucket for this upload",
  "always log the request id in the payment handler",
  "don't touch the legacy exporter today",
];

const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
const digest = (id: string, day: number, prompts: string[]) => ({
  session_id: id,
  source: "claude",
  ended_at: `2026-11-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  user_prompts: prompts,
});

describe("the lesson rule", () => {
  test("paraphrases of one instruction are the same instruction; different instructions are not", () => {
    const toks = RECURRING.map((r) => lessonTokens(instructionsOf(r, true)[0]?.quote ?? ""));
    for (let i = 1; i < toks.length; i++)
      expect(sameInstruction(toks[0]!, toks[i]!) || sameInstruction(toks[i - 1]!, toks[i]!)).toBe(true);
    for (const o of ONE_OFFS) expect(sameInstruction(toks[0]!, lessonTokens(o))).toBe(false);
  });
  test("complaints with no instruction are not instructions; corrections and preferences are", () => {
    expect(instructionsOf("still laggy, that's wrong", true)).toEqual([]);
    expect(instructionsOf("nope", true)).toEqual([]);
    expect(instructionsOf("no, keep the old backoff constant", true)).toEqual([
      { quote: "keep the old backoff constant", kind: "correction" },
    ]);
    expect(instructionsOf("Always run the linter before committing.", false)[0]?.kind).toBe("preference");
  });
});

describe("planLessons", () => {
  test("a correction in ≥ 2 sessions becomes an unverified add with its evidence; one-offs never do", () => {
    const b = book();
    observe(
      b,
      [
        digest("s1", 1, ["fix the flaky test", RECURRING[0]!]),
        digest("s2", 2, ["add a cache", RECURRING[1]!, ONE_OFFS[0]!]),
        digest("s3", 3, [ONE_OFFS[1]!]),
      ],
      1,
    );
    const plan = planLessons(b, 1, "# Notes\n", { target: "/p/CLAUDE.md", retireAfterNights: 30 });
    expect(plan.cards).toHaveLength(1);
    const c = plan.cards[0]!;
    expect(c).toMatchObject({
      op: "add",
      verification: "unverified",
      recurrences: 2,
      n_sessions: 2,
      target: "/p/CLAUDE.md",
    });
    expect(c.sources.map((s) => s.session_id)).toEqual(["s1", "s2"]);
    expect(c.first_seen.slice(0, 10)).toBe("2026-11-01");
    expect(getRules(plan.memory)).toEqual([c.rule]);
    expect(plan.memory.startsWith("# Notes\n")).toBe(true);
  });

  test("the same instruction twice on two days of one session recurs; twice in one sitting does not", () => {
    const same = book();
    observe(
      same,
      [{ session_id: "s1", ended_at: "2026-11-01T10:00:00Z", user_prompts: [RECURRING[0]!, RECURRING[1]!] }],
      1,
    );
    expect(planLessons(same, 1, "", { target: "t", retireAfterNights: 0 }).cards).toHaveLength(0);
  });

  test("after adoption: recurring again is reported as not working; a contradicting lesson proposes a replacement; idle lessons are proposed for retirement", () => {
    const b = book();
    observe(
      b,
      [digest("s1", 1, ["x", "no, use vitest, not jest"]), digest("s2", 2, ["y", "no, use vitest, not jest please"])],
      1,
    );
    const first = planLessons(b, 1, "", { target: "t", retireAfterNights: 5 });
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    const adopted = first.memory;
    // Night 2: the user adopted it; the same correction comes back.
    observe(b, [digest("s3", 3, ["z", "no, use vitest, not jest"])], 2);
    const second = planLessons(b, 2, adopted, { target: "t", retireAfterNights: 5 });
    expect(second.cards).toEqual([]);
    expect(second.notes.join()).toContain("lesson not working");
    // Night 3: the preference changed.
    observe(
      b,
      [digest("s4", 4, ["a", "no, use jest, not vitest"]), digest("s5", 5, ["b", "no, use jest, not vitest!"])],
      3,
    );
    const third = planLessons(b, 3, adopted, { target: "t", retireAfterNights: 50 });
    expect(third.cards).toHaveLength(1);
    expect(third.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(adopted)[0] });
    expect(getRules(third.memory)).toEqual([third.cards[0]!.rule]);
    // Much later, nobody needed the adopted lesson: retirement is proposed, with a card.
    const idle = book();
    observe(
      idle,
      [
        digest("s1", 1, ["x", "always run the linter before committing"]),
        digest("s2", 2, ["y", "always run the linter before committing!"]),
      ],
      1,
    );
    const kept = planLessons(idle, 1, "", { target: "t", retireAfterNights: 5 }).memory;
    planLessons(idle, 2, kept, { target: "t", retireAfterNights: 5 });
    const late = planLessons(idle, 9, kept, { target: "t", retireAfterNights: 5 });
    expect(late.cards.map((c) => c.op)).toEqual(["retire"]);
    expect(getRules(late.memory)).toEqual([]);
  });

  test("a lesson the skill already carries is not learned twice; a rejected lesson returns only with new evidence", () => {
    const b = book();
    observe(
      b,
      [digest("s1", 1, ["x", "no, use vitest, not jest"]), digest("s2", 2, ["y", "no, use vitest, not jest please"])],
      1,
    );
    expect(
      planLessons(b, 1, "", { target: "t", retireAfterNights: 0, covered: ["Use `vitest` instead of `jest`."] }).cards,
    ).toEqual([]);
    expect(planLessons(b, 2, "", { target: "t", retireAfterNights: 0 }).cards).toEqual([]);
    observe(b, [digest("s3", 3, ["z", "no, use vitest, not jest"])], 3);
    expect(planLessons(b, 3, "", { target: "t", retireAfterNights: 0 }).cards).toHaveLength(1);
  });

  test("text outside the learned block is never touched", () => {
    const doc = setLearned("# Mine\n\nKeep this.\n", ["old rule"]);
    const b = book();
    observe(b, [digest("s1", 1, ["x", RECURRING[0]!]), digest("s2", 2, ["y", RECURRING[2]!])], 1);
    const plan = planLessons(b, 1, doc, { target: "t", retireAfterNights: 0 });
    expect(plan.memory).toContain("# Mine\n\nKeep this.\n");
    expect(getRules(plan.memory)[0]).toBe("old rule");
  });
});
