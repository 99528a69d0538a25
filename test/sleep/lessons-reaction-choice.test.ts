import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { followUpOf, opposite, polarityOf } from "../../src/sleep/lesson-rule.ts";
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

test("two new files named alike but for their numbers are one corrected action, not a disagreement", () => {
  const b = book();
  const EDIT = "edit db/changes/V7__create_orders.sql: ALTER TABLE orders ADD note text; · Edited.";
  observe(
    b,
    [
      session(
        2,
        ["Add a note to orders", "that one shipped months ago, a fresh V12 on top"],
        ["", EDIT],
        ["", "edit db/changes/V12__orders_note.sql: ALTER TABLE orders ADD note text; · Added."],
      ),
      session(
        7,
        ["Add a flag to orders", "never edit V7, production already ran it"],
        ["", EDIT],
        ["", "edit db/changes/V15__orders_note.sql: ALTER TABLE orders ADD note text; · Added."],
      ),
    ],
    1,
  );
  plan(b);
  expect(of(b, "never edit V7").cluster).toBeDefined();
  expect(of(b, "that one shipped").cluster).toBe(of(b, "never edit V7").cluster!);
});

describe("what a complaint that the agent did it again names is avoided", () => {
  test("a tool or a call named before a closing 'again' is avoided, not wanted", () => {
    expect([...polarityOf("yarn add again?").avoid]).toContain("yarn");
    expect(polarityOf("yarn add again?").prefer.has("yarn")).toBe(false);
    expect([...polarityOf("Date.now() in the scheduler again").avoid]).toContain("date.now");
    // So it agrees with the rule it complains about, and contradicts the old side.
    expect(opposite(polarityOf("yarn add again?"), polarityOf("pnpm only in this repo"))).toBe(false);
    expect(opposite(polarityOf("yarn add again?"), polarityOf("we use yarn here"))).toBe(true);
    // A number named so is no choice given up: "the changelog got wrapped at 72 again" is not "under 72" avoided.
    expect(polarityOf("the changelog got wrapped at 72 again").avoid.size).toBe(0);
    // A wish said with it is its own: "use pnpm again" wants pnpm.
    expect(polarityOf("use pnpm again").prefer.has("pnpm")).toBe(true);
  });

  test("two rules after one command that share only 'otherwise' stay apart", () => {
    const b = book();
    const RUN = "$ cargo test -p ledger · 41 passed.";
    observe(
      b,
      [
        session(2, ["Add the refund path", "always close the reader yourself, otherwise the pool runs dry"], ["", RUN]),
        session(6, ["Add the fee path", "always pin the fuzz seed, otherwise reruns differ"], ["", RUN]),
      ],
      1,
    );
    plan(b);
    expect(of(b, "always close").cluster).toBeDefined();
    expect(of(b, "always close").cluster).not.toBe(of(b, "always pin").cluster!);
  });
});

test("telling the agent to pick up where it was is chatter, not a follow-up, whatever it ran next", () => {
  expect(followUpOf("carry on from where we were", ["--release"])).toBeUndefined();
  expect(followUpOf("ok, pick up where you stopped.", ["--release"])).toBeUndefined();
});
