import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { getRules } from "../../src/sleep/learned-block.ts";
import {
  announcedChange,
  instructionsOf,
  polarityOf,
  settingChanged,
  settingsOf,
} from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";

// Our own sessions, from a lending library's app: a local mail catcher, a dev proxy, a package
// tool given up, a test database moved, and a release tool that shares its name with the linter.
const book = emptyBook;
const session = sessionMaker("fs", "claude-code", "2026-10");
const plan = plannerFor("CLAUDE.md");
forgetLearnedTopicsAfterEach();

const LATER = "$ npm run build · ok";

/** Two sessions teach `old`; the lesson is proposed and adopted; `said` is then said once on night 2. */
const flipOnce = (old: [string, string], said: string) => {
  const b = book();
  observe(
    b,
    [
      session(1, ["Add the overdue reminders", old[0]], ["", LATER], ["", LATER]),
      session(4, ["List the holds per branch", old[1]], ["", LATER], ["", LATER]),
    ],
    1,
  );
  const first = plan(b);
  expect(first.cards.map((c) => c.op)).toEqual(["add"]);
  observe(b, [session(12, ["Export the loans to csv", said], ["", LATER], ["", LATER])], 2);
  return { next: plan(b, 2, first.memory), memory: first.memory };
};

describe("a change of practice said in other words", () => {
  test("a setting given a value: env-style, 'should be', 'set … to'; not a sentence about an acronym", () => {
    expect([...settingsOf("SMTP_HOST=maildev now")]).toEqual([["smtp_host", "maildev"]]);
    expect([...settingsOf("SMTP_HOST should be mailcatcher locally, that's what the stack runs")]).toEqual([
      ["smtp_host", "mailcatcher"],
    ]);
    expect([...settingsOf("set cache.driver to redis please")]).toEqual([["cache.driver", "redis"]]);
    expect(settingsOf("the API is REST").size).toBe(0);
    expect(settingsOf("x == y is false there").size).toBe(0);
    expect(settingChanged(settingsOf("SMTP_HOST=maildev"), settingsOf("SMTP_HOST should be mailcatcher"))).toBe(true);
    expect(settingChanged(settingsOf("SMTP_HOST=maildev"), settingsOf("smtp_host is maildev"))).toBe(false);
  });

  test("'X got replaced by Y', 'we swapped X out for Y', 'X is unmaintained / retired', 'off X now, Y all the way'", () => {
    const replaced = announcedChange("traefik got replaced by caddy in the dev stack");
    expect([...(replaced?.off ?? [])]).toEqual(["traefik"]);
    expect([...(replaced?.up ?? [])]).toEqual(["caddy"]);
    expect([...(announcedChange("we swapped celery beat out for apscheduler")?.up ?? [])]).toEqual(["apscheduler"]);
    expect(announcedChange("the old scheduler is unmaintained so we switched")?.off).toContain("scheduler");
    expect(announcedChange("the paper-slip printer flow is retired")?.off).toContain("paper-slip");
    const off = announcedChange("we're off bower now, npm workspaces all the way");
    expect([...(off?.off ?? [])]).toEqual(["bower"]);
    expect(off?.up).toContain("npm");
    // An order to swap one thing at hand is no announcement ("replace the loop with a map").
    expect(announcedChange("replace the loop with a map")).toBeUndefined();
  });

  test("a practice being given up this sprint is standing; work planned for this sprint is a task", () => {
    expect(
      instructionsOf("heads up, we're ripping bower out of the repo this sprint, so nothing new from it", true),
    ).toHaveLength(1);
    expect(instructionsOf("we're dropping the fax export this week", true)).toHaveLength(1);
    expect(instructionsOf("the printer flow is retired", true)).toHaveLength(1);
    expect(instructionsOf("we're migrating the loans table this sprint", true)).toEqual([]);
    expect(instructionsOf("we're off to lunch, carry on", true)).toEqual([]);
  });
});

describe("an adopted lesson is replaced when its practice changes, said once", () => {
  const MAIL: [string, string] = [
    "SMTP_HOST should be mailcatcher locally, always",
    "always check the mail in mailcatcher, SMTP_HOST should be mailcatcher",
  ];
  /** The one card proposed is the replacement of the adopted rule, and names `what`. */
  const replacedBy = (r: ReturnType<typeof flipOnce>, what: string) => {
    expect(r.next.cards).toHaveLength(1);
    expect(r.next.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(r.memory)[0] });
    expect(r.next.cards[0]!.rule.toLowerCase()).toContain(what);
  };

  test("a setting given another value ('SMTP_HOST=maildev now')", () => {
    replacedBy(flipOnce(MAIL, "SMTP_HOST=maildev now"), "maildev");
  });

  test("the same setting with the same value is no change", () => {
    const { next } = flipOnce(MAIL, "SMTP_HOST=mailcatcher, as always");
    expect(next.cards.filter((c) => c.op === "replace")).toEqual([]);
  });

  test("'X got replaced by Y' said as a passing remark", () => {
    const proxy: [string, string] = [
      "the local https goes through traefik, use that please",
      "traefik for the dev proxy please, not a hand-made nginx",
    ];
    replacedBy(flipOnce(proxy, "fyi traefik got replaced by caddy in the dev stack"), "caddy");
  });
});

describe("what the agent did after a change of practice", () => {
  const BEFORE = 'edit phpunit.xml: <env name="DB_CONNECTION" value="mysql"/>';
  const SQLITE =
    'edit phpunit.xml: <env name="DB_CONNECTION" value="sqlite"/> <env name="DB_DATABASE" value=":memory:"/>';
  const PG =
    'edit phpunit.xml: <env name="DB_CONNECTION" value="pgsql"/> <env name="DB_DATABASE" value="shelves_test"/>';

  test("said after the same action as the lesson, then moved elsewhere: not the lesson again, its replacement", () => {
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add the fines table", "the suite runs on sqlite in memory, leave phpunit.xml like that"],
          ["", BEFORE],
          ["", SQLITE],
        ),
        session(
          5,
          ["Test the renewals", "no database container for the tests, in-memory sqlite in phpunit.xml is enough"],
          ["", BEFORE],
          ["", SQLITE],
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
          11,
          ["Test the branch transfers", "point phpunit.xml at shelves_test from now on"],
          ["", BEFORE],
          ["", PG],
        ),
      ],
      2,
    );
    const next = plan(b, 2, first.memory);
    expect(next.cards).toHaveLength(1);
    expect(next.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(first.memory)[0] });
    expect(next.cards[0]!.rule).toContain("shelves_test");
    // Not read as the adopted correction said again.
    expect(next.notes.filter((x) => x.startsWith("lesson not working"))).toEqual([]);
  });

  test("two announcements of one change, each followed by other settings, are one lesson", () => {
    const b = book();
    observe(
      b,
      [
        session(
          3,
          ["Log the checkout latency", "structured output everywhere from now on, the pretty mode is gone"],
          ["", "edit src/main.rs: .pretty()"],
          ["", "edit src/main.rs: tracing_subscriber::fmt().json()"],
        ),
        session(
          9,
          ["Log the cache misses", "moved off .pretty(), the collector has to parse what we emit, even locally"],
          ["", "edit src/main.rs: tracing_subscriber::fmt().pretty()"],
          ["", "edit src/main.rs: with_env_filter(filter).json().flatten_event(true)"],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });

  test("a rule about another practice of the tool the agent turned to is another lesson", () => {
    const LS = "$ ls crates · api cli";
    const CLIPPY = "$ cargo clippy --workspace --all-targets -- -D warnings · ok";
    const b = book();
    observe(
      b,
      [
        session(2, ["Add the barcode parser", "clippy please"], ["", LS], ["", CLIPPY]),
        session(6, ["Add the isbn check", "you skipped clippy again"], ["", "$ cargo build · ok"], ["", CLIPPY]),
        session(
          9,
          ["Cut the next version", "releases are made with cargo release going forward"],
          ["", "$ git tag v1.4.0 · ok"],
          ["", "$ cargo release minor --no-publish · ok"],
        ),
        session(
          13,
          ["Ship the fix", "we moved releases over to cargo release, no hand-made tags"],
          ["", "$ git tag v1.4.1 · ok"],
          ["", "$ cargo release patch --no-publish · ok"],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    const clippy = cards.filter((c) => c.sources.some((s) => /clippy/.test(s.quote)));
    expect(clippy).toHaveLength(1);
    expect(clippy[0]!.sources.every((s) => !/release/.test(s.quote))).toBe(true);
  });
});

describe("a practice given up, said twice in other words", () => {
  test("'we're ripping X out this sprint' and later 'no X.' are one new lesson", () => {
    const b = book();
    observe(
      b,
      [
        session(
          3,
          [
            "Add the branch opening hours",
            "heads up, we're ripping bower out of the repo this sprint, so nothing new from it",
          ],
          ["", LATER],
          ["", LATER],
        ),
        session(
          8,
          ["Add the calendar widget", "no bower."],
          ["", "$ bower install fullcalendar · ok"],
          ["", "$ npm install @fullcalendar/core · ok"],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });
});

describe("a line length raised, with what follows from it", () => {
  test("'the max is 120 now so don't split short calls' wants 120; the 'don't' is about splitting", () => {
    expect([...polarityOf("the LineLength cop's max is 120 now so dont split short calls").prefer]).toContain(
      "len:120",
    );
    expect([...polarityOf("the LineLength cop's max is 120 now so dont split short calls").avoid]).not.toContain(
      "len:120",
    );
    // A negation in the number's own clause still avoids it.
    expect([...polarityOf("don't stop at 80 cols").avoid]).toContain("len:80");
  });
});
