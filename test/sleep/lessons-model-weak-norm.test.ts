import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { type LessonBook, type ModelRules, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// The model path clusters on the union of evidence: the model's normalised form of a saying AND the
// rule-based reading of the same saying (its words, its action, its fix). A model whose forms are
// poor (a vague paraphrase, or the whole sentence around a short rule) never undoes a join the
// reading without a model makes.

interface Turn {
  agent: string;
  user: string;
}

const digest = (id: string, day: number, turns: Turn[]) => ({
  session_id: id,
  source: "claude",
  ended_at: `2026-11-0${day}T10:00:00.000Z`,
  user_prompts: turns.map((t) => t.user),
  agent_before: turns.map((t) => t.agent),
});

function cards(digests: ReturnType<typeof digest>[], model?: Map<string, ModelRules>): string[] {
  const book: LessonBook = { version: 1, project: "/p", observations: [], lessons: [] };
  observe(book, digests, 1, model);
  return planLessons(book, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 }).cards.map((c) => c.rule);
}

describe("a weak model's normalised forms: what the user's words join stays joined, the words around a rule join nothing", () => {
  const first = "no, new changelog lines go under the unreleased heading";
  const second = "changelog lines belong under unreleased, never under a released version";
  const digests = [
    digest("n1", 1, [
      { agent: "", user: "Note the parser fix in the changelog" },
      { agent: "edit CHANGELOG.md: ## 2.4.0", user: first },
    ]),
    digest("n2", 3, [
      { agent: "", user: "Mention the export flag in the changelog" },
      { agent: "$ git commit -am notes", user: second },
    ]),
  ];

  test("two vague paraphrases that share no word still make one lesson, as the words alone do", () => {
    // Without a model the two sayings are one lesson.
    expect(cards(digests)).toHaveLength(1);
    const model = new Map<string, ModelRules>([
      ["n1", { session_id: "n1", rules: [{ rule: "Write release notes in the correct place.", quote: first }] }],
      [
        "n2",
        { session_id: "n2", rules: [{ rule: "Do not touch sections that were already shipped.", quote: second }] },
      ],
    ]);
    const rules = cards(digests, model);
    expect(rules).toHaveLength(1);
    // Its rule is still one of the model's forms.
    expect(["Write release notes in the correct place.", "Do not touch sections that were already shipped."]).toContain(
      rules[0]!,
    );
  });

  test("a form that is the whole sentence around a short rule joins as the rule does", () => {
    const long = (s: string) =>
      `${s.charAt(0).toUpperCase()}${s.slice(1)}, but the summary at the top reads well and the links resolve.`;
    const model = new Map<string, ModelRules>([
      ["n1", { session_id: "n1", rules: [{ rule: long("the unreleased heading takes new lines"), quote: first }] }],
      ["n2", { session_id: "n2", rules: [{ rule: long("release sections stay frozen once tagged"), quote: second }] }],
    ]);
    expect(cards(digests, model)).toHaveLength(1);
  });

  test("two one-off sayings a model reads as rules stay apart when neither reading joins them", () => {
    const model = new Map<string, ModelRules>([
      ["n1", { session_id: "n1", rules: [{ rule: "Put new entries under Unreleased.", quote: first }] }],
      [
        "n2",
        {
          session_id: "n2",
          rules: [{ rule: "Run the migrations before the seeders.", quote: "run migrations before seeders" }],
        },
      ],
    ]);
    const other = [
      digests[0]!,
      digest("n2", 3, [
        { agent: "", user: "Reset the local database" },
        { agent: "$ php artisan db:seed", user: "run migrations before seeders" },
      ]),
    ];
    expect(cards(other, model)).toEqual([]);
  });

  test("the words around the rule, which the reading without a model cut away, join nothing", () => {
    // The model's form is the whole sentence: its praise of the summary is no part of the rule.
    const said = "the release summary reads nicely, but never put changelog lines under a released version";
    const other = [
      digest("p1", 1, [
        { agent: "", user: "Note the parser fix in the changelog" },
        { agent: "edit CHANGELOG.md: ## 2.4.0", user: said },
      ]),
      digest("p2", 3, [
        { agent: "", user: "Draft the notes for the tenant export" },
        { agent: "edit docs/release.md: tenant export", user: "keep the release summary short" },
      ]),
    ];
    const model = new Map<string, ModelRules>([
      ["p1", { session_id: "p1", rules: [{ rule: `${said.charAt(0).toUpperCase()}${said.slice(1)}.`, quote: said }] }],
      [
        "p2",
        {
          session_id: "p2",
          rules: [{ rule: "Keep the release summary short.", quote: "keep the release summary short" }],
        },
      ],
    ]);
    expect(cards(other, model)).toEqual([]);
  });

  test("a dotted or called name the rule says is never taken for words around it", () => {
    const book: LessonBook = { version: 1, project: "/p", observations: [], lessons: [] };
    const said = "compare with Money.Equals, not the == operator";
    observe(
      book,
      [
        digest("q1", 1, [
          { agent: "", user: "Total the invoice lines" },
          { agent: "edit Invoice.cs: a == b", user: said },
        ]),
      ],
      1,
      new Map([
        ["q1", { session_id: "q1", rules: [{ rule: "Compare money with Money.Equals, not ==.", quote: said }] }],
      ]),
    );
    const o = book.observations.find((x) => x.norm) as { beside?: string[] } | undefined;
    expect(o).toBeDefined();
    expect(o!.beside).toBeUndefined();
  });
});
