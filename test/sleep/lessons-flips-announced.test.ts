import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { getRules } from "../../src/sleep/learned-block.ts";
import { announcedChange, instructionsOf } from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";

// Our own sessions, from a veterinary clinic's booking app: a local mail catcher replaced, the
// specs' database moved, a front-end helper library given up, and a component style learned.
const book = emptyBook;
const session = sessionMaker("fa", "claude-code", "2026-09");
const plan = plannerFor("CLAUDE.md");
forgetLearnedTopicsAfterEach();

describe("how a change of practice is announced", () => {
  test("'we moved X onto Y' takes Y up", () => {
    const moved = announcedChange("we moved the specs onto mariadb, the in-memory db kept masking collation bugs");
    expect(moved?.up).toContain("mariadb");
    expect(announcedChange("the jobs were moved on to rabbitmq last sprint")?.up).toContain("rabbitmq");
  });

  test("a practice declared gone, then what replaced it in the next sentence, is one change", () => {
    const said = instructionsOf(
      "jquery is gone as of last week. the htmx helpers in static/js/swap.js from now on",
      true,
    );
    expect(said).toHaveLength(1);
    expect(said[0]!.quote).toContain("jquery");
    expect(said[0]!.quote).toContain("static/js/swap.js");
    const change = announcedChange(said[0]!.quote);
    expect(change?.off).toContain("jquery");
    expect(change?.up).toContain("htmx");
    // A state said to hold now is no practice taken up: the sentence before stays on its own.
    expect(instructionsOf("the paper intake form is retired. it renders fine now.", true).map((x) => x.quote)).toEqual([
      "the paper intake form is retired.",
    ]);
  });
});

describe("the new side of a flip, said in other words", () => {
  const POLL_OLD = "$ curl -s http://localhost:1080/email · []";
  const POLL_NEW = "$ curl -s http://localhost:5000/api/v2/inbox/messages · [{}]";

  // Two announcements of the mail catcher's change; the second said after `second`, the agent's action before it.
  const announced = (second: string) => {
    const b = book();
    observe(
      b,
      [
        session(
          4,
          ["Send the vaccination reminder", "maildev got replaced by smtp4dev in the stack"],
          ["", POLL_OLD],
          ["", POLL_NEW],
        ),
        session(
          9,
          ["Send the invoice mail", "the old catcher is abandoned so we switched, read the new one's v2 inbox"],
          ["", second],
          ["", POLL_NEW],
        ),
      ],
      1,
    );
    return plan(b).cards;
  };

  test("two announcements after the same action, each followed by the same corrected action, are one lesson", () => {
    const cards = announced(POLL_OLD);
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });

  test("the same two remarks after different actions stay apart (the action is the evidence)", () => {
    expect(announced("$ npm run build · ok")).toEqual([]);
  });

  test("'we moved the specs onto Y' after the lesson's action, then moved elsewhere, replaces the lesson", () => {
    const BEFORE = 'edit phpunit.xml: <env name="DB_CONNECTION" value="mysql"/>';
    const MEMORY =
      'edit phpunit.xml: <env name="DB_CONNECTION" value="sqlite"/> <env name="DB_DATABASE" value=":memory:"/>';
    const MARIA =
      'edit phpunit.xml: <env name="DB_CONNECTION" value="mariadb"/> <env name="DB_DATABASE" value="clinic_specs"/>';
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add the kennel table", "specs run against sqlite in memory, no db container needed"],
          ["", BEFORE],
          ["", MEMORY],
        ),
        session(
          5,
          ["Test the refunds", "no database container for the specs, in-memory sqlite is plenty"],
          ["", BEFORE],
          ["", MEMORY],
        ),
      ],
      1,
    );
    const first = plan(b);
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    observe(
      b,
      [
        session(
          12,
          ["Test the boarding fees", "we moved the specs onto mariadb, sqlite kept masking collation bugs"],
          ["", BEFORE],
          ["", MARIA],
        ),
      ],
      2,
    );
    const next = plan(b, 2, first.memory);
    expect(next.cards).toHaveLength(1);
    expect(next.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(first.memory)[0] });
    expect(next.cards[0]!.rule).toContain("mariadb");
    expect(next.notes.filter((x) => x.startsWith("lesson not working"))).toEqual([]);
  });
});

describe("a learned topic and an announced change", () => {
  test("an announcement naming a learned term in passing does not join the lesson that taught the term", () => {
    const VUE_BEFORE = 'edit src/components/PetCard.vue: <script lang="ts"> export default { data() {} }';
    const VUE_AFTER = 'edit src/components/PetCard.vue: <script setup lang="ts"> const props = defineProps()';
    const POLL_OLD = "$ curl -s http://localhost:1080/email · []";
    const POLL_NEW = "$ curl -s http://localhost:5000/api/v2/inbox/messages · [{}]";
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add the pet card", "composition api please, not the options object"],
          ["", VUE_BEFORE],
          ["", VUE_AFTER],
        ),
        session(
          3,
          ["Add the owner card", "composition api, not the options object"],
          ["", VUE_BEFORE],
          ["", VUE_AFTER],
        ),
      ],
      1,
    );
    const first = plan(b);
    expect(first.cards).toHaveLength(1);
    observe(
      b,
      [
        session(
          6,
          ["Send the reminder", "maildev got replaced by smtp4dev in the stack"],
          ["", POLL_OLD],
          ["", POLL_NEW],
        ),
        session(
          9,
          ["Send the invoice", "the old catcher is abandoned so we switched, read the new one's v2 api"],
          ["", POLL_OLD],
          ["", POLL_NEW],
        ),
      ],
      2,
    );
    const cards = plan(b, 2, first.memory).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.sources.map((s) => s.quote).join(" ")).toContain("smtp4dev");
    expect(cards[0]!.sources.every((s) => !/composition/.test(s.quote))).toBe(true);
  });
});

describe("what the agent changed after a change announced", () => {
  test("making a folder is no evidence: two corrections each followed by a `mkdir -p` of another place stay apart", () => {
    const b = book();
    observe(
      b,
      [
        session(
          2,
          ["Add the clinic fixture", "no, sample payloads live in spec/data, not beside the source"],
          ["", 'edit src/clinic.json: {"id": 1}'],
          ["", "$ mkdir -p spec/data && git mv src/clinic.json spec/data/ · ok"],
        ),
        session(
          7,
          ["Add the promo module", "no, we switched to rebase merges, keep the individual commits"],
          ["", "edit app/build.gradle.kts: plugins {}"],
          ["", "$ mkdir -p feature/promo/src && touch feature/promo/build.gradle.kts · ok"],
        ),
      ],
      1,
    );
    plan(b);
    const [fixture, merges] = b.observations;
    expect(fixture?.kind).toBe("correction");
    expect(merges?.kind).toBe("correction");
    expect(fixture?.cluster).not.toBe(merges?.cluster);
  });
});

describe("a tool given up by its manifest", () => {
  test("'the Brewfile' given up is also 'brew'; a profile is no manifest", () => {
    expect(announcedChange("we dropped the Brewfile last month")?.off).toContain("brew");
    expect(announcedChange("the old profile is retired")?.off).not.toContain("pro");
  });

  test("'we dropped the Brewfile' and 'no brew bundle anymore', after the same action, are one lesson", () => {
    const CD = "$ cd infra · ok";
    const b = book();
    observe(
      b,
      [
        session(
          3,
          ["Set up the x-ray viewer", "we dropped the Brewfile last month, the tools come from mise"],
          ["", CD],
          ["", CD],
        ),
        session(8, ["Install the dicom tools", "no brew bundle anymore"], ["", CD], ["", CD]),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });
});

describe("a change announced in other words", () => {
  test("'as of this week' dates a change of practice, where 'this week' alone bounds a task", () => {
    const dated = instructionsOf("we're on pnpm as of this week", true);
    expect(dated).toHaveLength(1);
    expect(announcedChange(dated[0]!.quote)?.up).toContain("pnpm");
    expect(announcedChange("we're on vitest as of last week")?.up).toContain("vitest");
    expect(instructionsOf("freeze the schema this week", true)).toEqual([]);
  });

  test("prose that ends by naming a call is a sentence; the call alone is code", () => {
    const said = instructionsOf("we use the router package, navigate with context.go('/home')", true);
    expect(said).toHaveLength(1);
    expect(instructionsOf("context.go('/home')", true)).toEqual([]);
  });

  test("a tool said to be ripped out or removed from the project is given up", () => {
    expect(announcedChange("moment got ripped out of the project")?.off).toContain("moment");
    expect(instructionsOf("moment got ripped out of the project, dates go through luxon", true)).toHaveLength(1);
    expect(announcedChange("yarn has been removed from the repo")?.off).toContain("yarn");
    // Something taken out of one file is an edit, not a practice given up.
    expect(announcedChange("the stray console.log was removed from the handler")).toBeUndefined();
  });

  test("a statement with a question tag ('…, remember?') is no question", () => {
    expect(instructionsOf("we switched to ruff, remember?", true)).toHaveLength(1);
    expect(instructionsOf("did we switch to ruff?", true)).toEqual([]);
  });
});
