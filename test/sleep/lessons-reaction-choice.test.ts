import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Our own sessions: one agent action draws two different rules in two sessions, and later a short
// push-back after that same action. Its words, not the order the rules were said in, pick its rule.
const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent: string[], first?: string[]) => ({
  session_id: `q${++n}`,
  source: "codex",
  ended_at: `2026-09-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  user_prompts: prompts,
  agent_before: agent,
  ...(first ? { agent_first: first } : {}),
});
const of = (b: LessonBook, q: string) => b.observations.find((o) => o.quote.startsWith(q))!;
// Clusters are given when the night plans its lessons.
const plan = (b: LessonBook) => planLessons(b, 1, "", { target: "AGENTS.md", retireAfterNights: 0 });

describe("a reaction after an action that drew several rules joins the one its words share", () => {
  test("a format verb it names picks the earlier rule over the one said last", () => {
    const b = book();
    const BUILD = "$ go build ./... · Build ok.";
    observe(
      b,
      [
        session(2, ["Add the quota endpoint", "always wrap errors from the store package with %w"], ["", BUILD]),
        session(5, ["Add the audit log", "never glue log fields into the message, key-value pairs only"], ["", BUILD]),
        session(8, ["Add the export job", "%w there, not %v"], ["", BUILD]),
      ],
      1,
    );
    plan(b);
    const reaction = of(b, "%w there");
    expect(reaction.kind).toBe("reaction");
    expect(of(b, "always wrap errors").cluster).not.toBe(of(b, "never glue log").cluster!);
    expect(reaction.cluster).toBe(of(b, "always wrap errors").cluster!);
  });

  test("the action alone joins nothing when the words and what the agent did next disagree", () => {
    const b = book();
    const EDIT = "edit tests/InvoiceTests.cs: Assert.Equal(3, lines.Count); · Added the test.";
    observe(
      b,
      [
        session(
          3,
          ["Cover the invoice totals", "use the fluent assertion helpers, not Assert.Equal"],
          ["", EDIT],
          ["", "edit tests/InvoiceTests.cs: lines.Should().HaveCount(3); · Switched to fluent assertions."],
        ),
        session(
          6,
          ["Cover the credit notes", "did the type checker even run? the pipeline fails on typing"],
          ["", EDIT],
          ["", "$ poetry run mypy --strict billing_jobs · Found 4 errors."],
        ),
      ],
      1,
    );
    plan(b);
    const reaction = of(b, "did the type checker");
    expect(reaction.kind).toBe("reaction");
    expect(of(b, "use the fluent").cluster).toBeDefined();
    expect(reaction.cluster).not.toBe(of(b, "use the fluent").cluster!);
  });

  test("a bare push-back with no words of its own still joins through the action", () => {
    const b = book();
    const EDIT = "edit tests/InvoiceTests.cs: Assert.Equal(3, lines.Count); · Added the test.";
    const FLUENT = "edit tests/InvoiceTests.cs: lines.Should().HaveCount(3); · Switched to fluent assertions.";
    observe(
      b,
      [
        session(
          3,
          ["Cover the invoice totals", "use the fluent assertion helpers, not Assert.Equal"],
          ["", EDIT],
          ["", FLUENT],
        ),
        session(6, ["Cover the credit notes", "again!!"], ["", EDIT], ["", FLUENT]),
      ],
      1,
    );
    plan(b);
    expect(of(b, "use the fluent").cluster).toBeDefined();
    expect(of(b, "again!!").cluster).toBe(of(b, "use the fluent").cluster!);
  });
});
