import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { correctedAction } from "../../src/sleep/lesson-learned.ts";
import { instructionsOf, polarityOf } from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";

// Our own sessions, from a bike-repair shop's booking service: rules said as how things are, a
// step the owner keeps for themselves, and a squash rule the team turned around.
const book = emptyBook;
const session = sessionMaker("sf", "claude-code", "2026-11");
const plan = plannerFor("CLAUDE.md");
forgetLearnedTopicsAfterEach();

describe("a rule said as how things are", () => {
  test("'one X per Y', 'every X gets Y' and 'X goes in a/path/' are rules in a follow-up", () => {
    for (const s of [
      "one migration per pull request",
      "every handler that touches the till gets an audit line",
      "the stripe call goes in payments/",
    ])
      expect(instructionsOf(s, true).map((i) => i.quote)).toEqual([s]);
    // Opening a session it is the task; "every time" is still a standing marker of its own.
    expect(instructionsOf("one migration per pull request", false)).toEqual([]);
    expect(instructionsOf("every time I ask, the wheel sizes come back wrong?", true)).toEqual([]);
    // A place named without a path is not a rule's placement ("the new button goes in the header").
    expect(instructionsOf("the new button goes in the header", true)).toEqual([]);
  });

  test("said right before the agent redid its action, it is a correction; with nothing redone, a preference", () => {
    const PAGE = "edit docs/shop/repairs/tubeless.md: # Tubeless setup";
    const INDEX = "edit docs/shop/SUMMARY.md: - [Tubeless](repairs/tubeless.md)";
    const b = book();
    observe(
      b,
      [
        session(
          2,
          [
            "Write up the tubeless setup",
            "every new page needs a line in the contents file, or the site never shows it",
          ],
          ["", PAGE],
          ["", INDEX],
        ),
        session(
          6,
          ["Document the brake bleed", "the site won't render it unless it's listed in SUMMARY.md"],
          ["", "edit docs/shop/repairs/brakes.md: # Bleeding brakes"],
          ["", INDEX],
        ),
      ],
      1,
    );
    expect(b.observations.map((o) => o.kind)).toEqual(["correction", "correction"]);
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
    const still = book();
    observe(still, [session(8, ["Price the service tiers", "one quote per customer"], ["", "$ ls · ok"], ["", ""])], 1);
    expect(still.observations.map((o) => o.kind)).toEqual(["preference"]);
  });
});

describe("a step the user keeps for themselves", () => {
  test("'X is my job, not yours', 'leave X to me', 'I'll run X myself' avoid X", () => {
    expect([...polarityOf("deploying is my job, not yours").avoid]).toEqual(["deploy"]);
    expect([...polarityOf("deploying is my job, not yours").prefer]).toEqual([]);
    expect([...polarityOf("leave the migrations to me").avoid]).toContain("migration");
    expect([...polarityOf("I'll run the seeds myself").avoid]).toContain("seed");
    expect(instructionsOf("deploying is my job, not yours", true)).toEqual([
      { quote: "deploying is my job, not yours", kind: "correction" },
    ]);
  });

  test("two such objections after the same command, in other words, are one lesson", () => {
    const APPLY = "$ terraform apply -auto-approve · Apply complete!";
    const PLAN = "$ terraform plan -out=shop.tfplan · Plan: 2 to add";
    const b = book();
    observe(
      b,
      [
        session(3, ["Add a queue for repair tickets", "applying is my job, not yours"], ["", APPLY], ["", PLAN]),
        session(9, ["Give the parts bucket a lifecycle rule", "whoa, don't apply."], ["", APPLY], ["", PLAN]),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });
});

describe("reading what a sentence wants", () => {
  test("'X, no Y' avoids Y; 'no worries' after a comma is an idiom", () => {
    expect([...polarityOf("Path objects, no os.path.join soup").avoid]).toEqual(["os.path.join"]);
    expect(instructionsOf("Path objects, no os.path.join soup", true)).toHaveLength(1);
    expect(instructionsOf("ok, no worries", true)).toEqual([]);
  });

  test("a dotted call stays whole, and what goes wrong 'otherwise' is no stance", () => {
    const p = polarityOf(
      "hand the request's ctx down instead of context.Background(), otherwise a cancel never reaches the db",
    );
    expect([...p.avoid]).toEqual(["context.background"]);
  });
});

describe("a flip that objects to what the old rule made the agent do", () => {
  test("'we keep commits separate now', right after the squash an adopted rule brought, replaces it", () => {
    const LOG = "$ git log --oneline -5 · 4 commits";
    const SQUASH = "$ git reset --soft origin/main && git commit -m 'booking: add waitlist' · 1 file changed";
    const UNDO = "$ git reset --hard HEAD@{1} && git log --oneline · 4 commits";
    const b = book();
    observe(
      b,
      [
        session(1, ["Add the waitlist", "one commit per branch"], ["", LOG], ["", SQUASH]),
        session(
          4,
          ["Add SMS reminders", "squash these into one commit per branch before you push"],
          ["", LOG],
          ["", SQUASH],
        ),
      ],
      1,
    );
    const first = plan(b);
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    const SQUASHED = "$ git reset --soft origin/main · ok";
    observe(
      b,
      [
        session(
          12,
          ["Show loaner bikes on the calendar", "stop squashing my branches, we review commit by commit now"],
          ["", SQUASHED],
          ["", UNDO],
        ),
      ],
      2,
    );
    const next = plan(b, 2, first.memory);
    expect(next.cards.map((c) => c.op)).toEqual(["replace"]);
    expect(next.cards[0]!.rule.toLowerCase()).toContain("squash");
    expect(next.cards[0]!.previous_rule?.toLowerCase()).toContain("one commit per branch");
  });
});

describe("what an edit changed", () => {
  test("the program a package runner ran is the tool, not what changed: naming it joins nothing", () => {
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add the tyre stock page", "strings get single quotes here, not double"],
          ["", "$ git add -A · ok"],
          ["", "$ pnpm biome format --write src · Formatted 3 files"],
        ),
        session(
          3,
          ["Show tyres by size", "biome check shows errors on the file you just touched"],
          ["", "$ git status · clean"],
          ["", "$ pnpm lint · 2 errors"],
        ),
      ],
      1,
    );
    plan(b);
    // "biome" is what ran the formatter after the quotes correction; the lint saying names the tool, not the quotes.
    expect(b.observations[0]!.fix).toContain("biome");
    expect(new Set(b.observations.map((o) => o.cluster)).size).toBe(2);
  });

  test("the project's own subject, named in many prompts, joins no two corrections through their edits", () => {
    const FETCH = "edit web/src/BicycleCard.vue: const rows = await fetch(url)";
    const CLIENT = "edit web/src/BicycleCard.vue: const rows = await http.get(url) // bicycle";
    const IGNORE = "edit app/Repairs/Queue.php: // @phpstan-ignore-next-line";
    const TYPED = "edit app/Repairs/Queue.php: /** @return Collection<int, Bicycle> */";
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Show each bicycle's last service", "components shouldn't call fetch directly"],
          ["", FETCH],
          ["", CLIENT],
        ),
        session(
          2,
          ["Sort the bicycle queue by date", "don't silence the analyser, fix the type"],
          ["", IGNORE],
          ["", TYPED],
        ),
        session(3, ["List bicycle parts on order"], [""], [""]),
        session(4, ["Flag a bicycle as collected"], [""], [""]),
        session(5, ["Email the owner when a bicycle is ready"], [""], [""]),
      ],
      1,
    );
    plan(b);
    // Both edits wrote `bicycle`; it is what the shop's work is about, not what either correction changed.
    expect(b.observations.map((o) => o.fix?.includes("bicycle"))).toEqual([true, true]);
    expect(new Set(b.observations.map((o) => o.cluster)).size).toBe(2);
  });

  test("the object the edit before worked on is no term of what changed", () => {
    const before = "edit app/src/Bike.java: var row = bikes.findByCode(code);";
    const after = "edit app/src/Bike.java: public Optional<Bike> findByCode(String code) {";
    const fix = correctedAction(before, after);
    expect(fix).toContain("optional");
    expect(fix).not.toContain("bike");
  });
});

describe("the agent's claims of done", () => {
  test("'you keep saying X' denies the agent's claim; a check before 'it works' is a standing gate", () => {
    expect(instructionsOf("you keep saying it's fixed without running a thing", true)).toEqual([
      { quote: "you keep saying it's fixed without running a thing", kind: "correction" },
    ]);
    expect(instructionsOf("before you tell me it works, run the spoke tension tests", true)).toHaveLength(1);
    // Opening a session, the same words are the task.
    expect(instructionsOf("you keep saying it's fixed without running a thing", false)).toEqual([]);
  });
});
