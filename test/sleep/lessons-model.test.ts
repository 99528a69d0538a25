import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { simRules, simStanding } from "../../src/backends/sim/lessons.ts";
import { parseRules, parseStanding } from "../../src/sleep/backend/rules.ts";
import { rulesPrompt } from "../../src/sleep/backend/prompts.ts";
import { checkStanding } from "../../src/sleep/lesson-verify.ts";
import { type LessonBook, type ModelRules, observe, planLessons } from "../../src/sleep/lessons.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { writeClaudeSession } from "./support/fake-home.ts";

forgetLearnedTopicsAfterEach();

// The model path of lessons (issue 29 §3): a model reads each session's standing rules, the
// normalised forms are clustered, and "standing rule or one-off?" is asked before any replay.
// The simulator answers both requests offline; handoff writes them to its prompts file.

const sessions = [
  {
    id: "m1",
    day: 1,
    turns: [
      { agent: "", user: "Add a currency formatter to the invoices module" },
      { agent: "$ npm install date-fns · Installed date-fns.", user: "hm, we're a pnpm shop. redo that with pnpm add" },
      { agent: "$ pnpm add date-fns", user: "review PR #41 and leave comments" },
      { agent: "$ gh pr view 41", user: "pin typescript to 5.4.5" },
    ],
  },
  {
    id: "m2",
    day: 4,
    turns: [
      { agent: "", user: "Speed up the CSV export" },
      { agent: "$ npm install fast-csv · Added fast-csv.", user: "pnpm please" },
      { agent: "$ pnpm add fast-csv", user: "review PR #41 and leave comments" },
      { agent: "$ gh pr view 41", user: "pin typescript to 5.4.5" },
    ],
  },
];

describe("the simulator reads standing rules as a model would state them", () => {
  test("corrections after the agent's action become normalised rules naming that action; task requests and secrets none", () => {
    const rules = simRules({
      turns: [
        ...sessions[0]!.turns,
        { agent: "$ psql", user: "the db password is Hunter2-local, use it" },
        { agent: "", user: "use the staging DB for now" },
      ],
    });
    expect(rules).toEqual([
      { rule: "We're a pnpm shop (not: npm install).", quote: "hm, we're a pnpm shop." },
      { rule: "Redo that with pnpm add (not: npm install).", quote: "redo that with pnpm add" },
    ]);
    expect(simStanding({ rule: "Review PR #41 and leave comments", quotes: [] }).standing).toBe(false);
    expect(simStanding({ rule: "Use pnpm, not npm.", quotes: ["pnpm please"] }).standing).toBe(true);
  });

  test("a command run from a folder is named as the command; a version names a tool, not a moment", () => {
    const rules = simRules({
      turns: [
        { agent: "", user: "Add the export endpoint" },
        { agent: "$ cd services/api && pip install requests · ok", user: "we use poetry in here" },
      ],
    });
    expect(rules).toEqual([{ rule: "We use poetry in here (not: pip install).", quote: "we use poetry in here" }]);
    const quotes = ["run artisan in the container", "my laptop has php 7.4, that can't work"];
    expect(simStanding({ rule: "Run artisan in the container.", quotes }).standing).toBe(true);
    expect(simStanding({ rule: "Branch off release/2025.11 for it.", quotes: [] }).standing).toBe(false);
  });

  test("a weak model's rules read from chatter or moving on are left out; its real rule is kept", () => {
    const book: LessonBook = { version: 1, project: "/p", observations: [], lessons: [] };
    const prompts = ["Add the export", "ok", "sorry, hit enter too early", "cool, push it", "pnpm please"];
    const junk = [
      ...["ok", "sorry, hit enter too early", "cool, push it"].map((q) => ({ rule: q, quote: q })),
      // A rule that only acknowledges, whatever it quotes.
      { rule: "Hmm ok (not: npm install).", quote: "pnpm please" },
    ];
    const rules = new Map<string, ModelRules>([
      ["w1", { rules: [...junk, { rule: "Use pnpm, not npm.", quote: "pnpm please" }] } as ModelRules],
    ]);
    observe(
      book,
      [{ session_id: "w1", source: "claude", ended_at: "2026-10-02T10:00:00Z", user_prompts: prompts }],
      1,
      rules,
    );
    expect(book.observations.map((o) => o.norm ?? o.quote)).toEqual(["Use pnpm, not npm."]);
  });

  test("answers parse; other shapes are left out", () => {
    expect(parseRules('[{"rule":"Use pnpm, not npm.","quote":"pnpm please"},{"rule":3},"x"]')).toEqual([
      { rule: "Use pnpm, not npm.", quote: "pnpm please" },
    ]);
    expect(parseStanding('{"standing": false, "reason": "one PR"}')).toBe(false);
    expect(parseStanding("maybe")).toBeUndefined();
    expect(rulesPrompt({ sessionId: "m1", turns: sessions[0]!.turns })).toContain('"stage":"sleep_rules"');
  });

  test("the model's rules of two sessions cluster into one lesson in its normalised words; a one-off is asked about and left out", async () => {
    const book: LessonBook = { version: 1, project: "/p", observations: [], lessons: [] };
    const digests = sessions.map((s) => ({
      session_id: s.id,
      source: "claude",
      ended_at: `2026-11-0${s.day}T10:00:00.000Z`,
      user_prompts: s.turns.map((t) => t.user),
      agent_before: s.turns.map((t) => t.agent),
    }));
    const model = new Map<string, ModelRules>(
      sessions.map((s) => [
        s.id,
        {
          session_id: s.id,
          rules: [
            ...simRules({ turns: s.turns }),
            // A model that mistakes repeated task requests for rules: one about a PR is never a rule
            // (the product's own reading), a version pin is caught by the standing question.
            { rule: "Review PR #41 and leave comments.", quote: "review PR #41 and leave comments" },
            { rule: "Pin typescript to 5.4.5.", quote: "pin typescript to 5.4.5" },
            // Words that are not the user's (a stack line the model took for a rule) are never a rule.
            {
              rule: "At computeTotals (src/lib/totals.ts:18:23).",
              quote: "at computeTotals (src/lib/totals.ts:18:23)",
            },
          ],
        },
      ]),
    );
    observe(book, digests, 1, model);
    const plan = planLessons(book, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    const rules = plan.cards.map((c) => c.rule);
    expect(rules).toHaveLength(2);
    expect(rules).toContain("Pin typescript to 5.4.5.");
    expect(rules.join()).not.toContain("PR #41");
    expect(rules.join()).not.toContain("computeTotals");
    // The rule is for every session: without the restatement of one session's action.
    expect(rules.some((r) => r.toLowerCase().includes("pnpm") && !r.includes("(not:"))).toBe(true);
    const asked: string[] = [];
    const st = await checkStanding(
      {
        async standing(rule, quotes) {
          asked.push(rule);
          return simStanding({ rule, quotes }).standing;
        },
      },
      plan.cards,
      { baseMemory: "", proposedMemory: plan.memory },
    );
    expect(asked).toHaveLength(2);
    expect(plan.cards).toHaveLength(1);
    expect(plan.cards[0]!.rule.toLowerCase()).toContain("pnpm");
    expect(st.memory).toContain(plan.cards[0]!.rule);
    expect(st.memory).not.toContain("5.4.5");
    expect(st.notes.join()).toContain("one-off");
  });
});

describe("handoff writes the same requests to its file", () => {
  test("a review with --backend handoff waits (exit 3) on one standing-rules request per session with follow-ups", async () => {
    using tmp = tempDir("sleep-rules-handoff-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "work", "app");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "CLAUDE.md"), "# App\n");
    sessions.forEach((s, i) => {
      const turns = s.turns.map((t) => ({ user: t.user, assistant: "Done." }));
      writeClaudeSession(
        home,
        project,
        { id: `8e551000-aaaa-4bbb-8ccc-00000000000${i}`, turns },
        Date.parse(`2026-11-0${s.day}T09:00:00Z`),
      );
    });
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep") };
    const r = await runCli(
      [
        "sleep",
        "review",
        "--backend",
        "handoff",
        "--source",
        "claude",
        "--lookback-hours",
        "0",
        "--project",
        project,
        "--json",
      ],
      { env, cwd: project },
    );
    expect(r.code).toBe(3);
    const prompts = readFileSync(join(project, ".skillopt-sleep", "handoff", "PROMPTS.md"), "utf8");
    expect(prompts.match(/"stage":"sleep_rules"/g)).toHaveLength(2);
    expect(prompts).toContain("STANDING RULES");
  });
});
