import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { familiesOf } from "../../src/sleep/lesson-family.ts";
import { instructionsOf, lessonTokens } from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, type ModelRules, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Issue 29 §1–2, our own sentences: two sayings of one wish that share no word meet through the
// family of practice they are about and the agent's action they followed; the action alone never
// joins two different wishes; a bare phrase counts only beside an action of its family.

const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent?: string[]) => ({
  session_id: `f${++n}`,
  source: "claude",
  ended_at: `2026-10-${String(day).padStart(2, "0")}T09:00:00.000Z`,
  user_prompts: prompts,
  ...(agent ? { agent_before: agent } : {}),
});
const THROW_EDIT = 'edit src/services/orders.ts: if (!order) throw new NotFound("order") · Edited the file.';
const FS_EDIT = 'edit src/cache.ts: import { readFile } from "fs" · Edited the file.';
const COMMIT = '$ git commit -m "stuff" · [main 1a2b3c4] stuff';

describe("context: the agent's action is evidence", () => {
  test("another practice of the family the agent's edit belongs to is a correction; without the edit it is a plain remark", () => {
    const said = "our services hand failures back as values";
    expect(instructionsOf(said, true, { agentBefore: THROW_EDIT })).toEqual([{ quote: said, kind: "correction" }]);
    expect(instructionsOf(said, true)).toEqual([]);
  });
  test("a bare phrase with no cue is a rule only right after an action of its family", () => {
    expect(instructionsOf("protocol form for builtins", true, { agentBefore: FS_EDIT })).toHaveLength(1);
    expect(instructionsOf("protocol form for builtins", true)).toEqual([]);
    // A task that happens to name a family word stays a task.
    expect(instructionsOf("Finish the CSV export before lunch", true)).toEqual([]);
  });
  test("tokenizer: 'node:' is a term, and so is the object of a bare 'no any'", () => {
    expect(lessonTokens("node: scheme on builtins").has("node:")).toBe(true);
    expect([...lessonTokens("no any")]).toEqual(["any"]);
    // An approval closing the sentence ("otherwise" and "good" are stop words) leaves the prohibition its object.
    expect([...lessonTokens("never any, otherwise good")]).toEqual(["any"]);
    const cast = { agentBefore: "edit src/orders.ts: const input = payload as any;" };
    expect(instructionsOf("never any, otherwise good", true, cast)).toEqual([
      { quote: "never any, otherwise good", kind: "correction" },
    ]);
    expect(familiesOf("no any")).toEqual(new Set(["type escape"]));
    expect(familiesOf("Lint will grumble about that default", ["export", "default", "function"])).toEqual(
      new Set(["lint", "exports"]),
    );
  });
});

describe("clustering paraphrases through families", () => {
  test("two wishes in words that share nothing each become one lesson; the task requests between them never do", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Add the refund endpoint", "our services hand failures back as values"], ["", THROW_EDIT]),
        session(2, ["Port the invoice lookup", "don't let exceptions escape the domain layer"], ["", THROW_EDIT]),
        session(3, ["Tighten the request types", "never reach for ts-ignore to quiet the compiler"]),
        session(5, ["Type the webhook payload", "no any"]),
        session(6, ["Review PR #57 and leave comments", "use the staging DB for now"]),
        session(7, ["Review PR #57 and leave comments", "use the staging DB for now"]),
      ],
      1,
    );
    const plan = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(2);
    const quotes = plan.cards.map((c) => c.sources.map((s) => s.quote).sort());
    expect(quotes).toContainEqual(
      ["don't let exceptions escape the domain layer", "our services hand failures back as values"].sort(),
    );
    expect(quotes).toContainEqual(["never reach for ts-ignore to quiet the compiler", "no any"].sort());
    expect(JSON.stringify(plan.cards)).not.toMatch(/PR #57|staging DB/);
  });
  test("migrations, log messages, assertions, forced unwrapping, test databases, the ORM and response shaping are families of their own", () => {
    // Our sentences, from several ecosystems.
    expect(familiesOf("an applied alembic revision is never edited, add a new one")).toEqual(new Set(["migrations"]));
    expect(familiesOf("don't touch V12, the checksum is already in prod")).toEqual(new Set(["migrations"]));
    expect(familiesOf("no string concat in the logger call, use the template")).toEqual(new Set(["log messages"]));
    expect(familiesOf("assertThat everywhere, not assertEquals")).toEqual(new Set(["assertions"]));
    expect(familiesOf("use a guard let here, that `!` crashes on nil")).toEqual(new Set(["force unwrap"]));
    expect(familiesOf("repository tests run on testcontainers, not h2")).toEqual(new Set(["test database"]));
    expect(familiesOf("stop silencing phpstan, fix the generics")).toEqual(new Set(["type escape"]));
    expect(familiesOf("no raw sql in controllers, eloquent does that")).toEqual(new Set(["orm"]));
    expect(familiesOf("the response goes through the OrderResource class")).toEqual(new Set(["response shaping"]));
    // Not a family: a sentence about none of them.
    expect(familiesOf("rename the cancel button")).toEqual(new Set());
  });
  test("Go's panic and log.Fatal are error handling: two sayings about them after the same edit are one lesson", () => {
    expect(familiesOf("dont log.Fatal from a package, the caller decides whether it's fatal")).toContain(
      "error handling",
    );
    expect(familiesOf("that `panic(err)` will crash the pod. error out instead")).toContain("error handling");
    const PANIC_EDIT = "edit internal/ingest/parse.go: if err != nil { panic(err) } · Edited the file.";
    const b = book();
    observe(
      b,
      [
        session(
          2,
          ["Parse the meter rows", "panic is for main() and impossible states, not for validation"],
          ["", PANIC_EDIT],
        ),
        session(
          6,
          ["Add the CSV reader", "dont log.Fatal from a package, the caller decides whether it's fatal"],
          ["", PANIC_EDIT],
        ),
      ],
      1,
    );
    const cards = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 }).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });

  test("the same action alone never joins two different wishes", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Ship the fix", "Amend that"], ["", COMMIT]),
        session(2, ["Ship the docs", "we moved to vitest, import from vitest"], ["", COMMIT]),
      ],
      1,
    );
    expect(planLessons(b, 1, "", { target: "t", retireAfterNights: 0 }).cards).toEqual([]);
    expect(b.observations).toHaveLength(2);
    expect(new Set(b.observations.map((o) => o.cluster)).size).toBe(2);
  });
  test("a model's normalised form is clustered and proposed without its restatement of one session's action", () => {
    const b = book();
    const digests = [
      session(1, ["Add a cache", "we prefix core modules"], ["", FS_EDIT]),
      session(
        4,
        ["Add a reader", "scheme on builtins, always", "rebase onto main and settle the conflict in cache.ts"],
        ["", FS_EDIT, "$ git status"],
      ),
    ];
    const model = new Map<string, ModelRules>([
      [
        digests[0]!.session_id,
        {
          session_id: digests[0]!.session_id,
          rules: [
            {
              rule: "Import Node built-ins with the node: prefix (not: import { readFile } from).",
              quote: "we prefix core modules",
            },
          ],
        },
      ],
      [
        digests[1]!.session_id,
        {
          session_id: digests[1]!.session_id,
          rules: [
            {
              rule: "Import Node built-ins with the node: prefix (not: import { readFile } from).",
              quote: "scheme on builtins, always",
            },
            // Not the user's words: pasted output the model took for a rule.
            { rule: "Exit code 1.", quote: "exit code 1 from the build step" },
            // A task request that corrects nothing, whatever the model called it.
            {
              rule: "Rebase onto main and settle conflicts.",
              quote: "rebase onto main and settle the conflict in cache.ts",
            },
          ],
        },
      ],
    ]);
    observe(b, digests, 1, model);
    const plan = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    expect(plan.cards.map((c) => c.rule)).toEqual(["Import Node built-ins with the node: prefix"]);
    expect(b.observations.some((o) => o.quote.includes("exit code") || o.quote.includes("rebase"))).toBe(false);
  });
});

describe("never a secret", () => {
  test("a rule-shaped sentence holding a one-case random key is not a rule, and its value is not kept", () => {
    const b = book();
    const said = "always deploy with the key kq3v9x2m7p4t8w1r6y5z0b3n, never ask me";
    const r = observe(b, [session(1, ["Deploy it", said]), session(2, ["Deploy again", said])], 1);
    expect(r.credentialSentences).toBe(2);
    expect(JSON.stringify(b)).not.toContain("kq3v9x2m7p4t8w1r6y5z0b3n");
    expect(planLessons(b, 1, "", { target: "t", retireAfterNights: 0 }).cards).toEqual([]);
  });
});
