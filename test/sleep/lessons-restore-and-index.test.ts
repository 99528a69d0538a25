import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { correctedAction } from "../../src/sleep/lesson-learned.ts";
import {
  announcedChange,
  distinctiveFix,
  followUpOf,
  instructionsOf,
  polarityOf,
  reactionOf,
} from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";

// Our own sessions, from a bakery's ordering app: a docs site whose pages must be listed in an
// index one folder up, a lint baseline the agent keeps regenerating, and a date library given up.
const book = emptyBook;
const session = sessionMaker("ri", "codex", "2026-11", "10:00:00.000");
const plan = plannerFor("AGENTS.md");
forgetLearnedTopicsAfterEach();

const LATER = "$ cargo test -p orders · ok";

describe("what the agent put right after a turn", () => {
  test("an index one or two folders above the file just added is the correction; the repository's root is not", () => {
    expect(
      correctedAction(
        "edit docs/book/ops/proofing.md: # Proofing times",
        "edit docs/book/INDEX.md: - [Proofing](ops/proofing.md)",
      ),
    ).toEqual(["file:index.md"]);
    expect(correctedAction("edit docs/book/ops/ovens/deck.md: # Deck ovens", "edit docs/book/TOC.md: - deck")).toEqual([
      "file:toc.md",
    ]);
    // Three folders up, or the root's README, is the task going on elsewhere.
    expect(correctedAction("edit docs/book/ops/ovens/deck.md: # Deck ovens", "edit docs/TOC.md: - deck")).toEqual([]);
    expect(correctedAction("edit docs/book/ops/proofing.md: # Proofing", "edit README.md: see docs")).toEqual([]);
  });

  test("a file put back with git is the correction, whatever runs after it", () => {
    const REGEN = "$ cd app && ./gradlew detektBaseline · BUILD SUCCESSFUL";
    expect(
      correctedAction(REGEN, "$ cd app && git checkout -- config/lint/baseline.xml && ./gradlew detekt · 1 finding"),
    ).toEqual(["file:baseline.xml"]);
    expect(correctedAction(REGEN, "$ git restore --staged app/config/lint/baseline.xml · ok")).toEqual([
      "file:baseline.xml",
    ]);
    // A branch switch is no file put back.
    expect(correctedAction(REGEN, "$ git checkout -b fix/baseline · ok")).not.toContain("file:baseline.xml");
  });

  test("two objections after the same regeneration, each followed by putting the file back, are one lesson", () => {
    const REGEN = "$ cd app && ./gradlew detektBaseline · BUILD SUCCESSFUL";
    const BACK = "$ cd app && git checkout -- config/lint/baseline.xml && ./gradlew detekt · 1 finding";
    const b = book();
    observe(
      b,
      [
        session(
          3,
          ["Add the sourdough schedule screen", "wait, don't regrow the lint baseline to get it green. rest looks ok"],
          ["", REGEN],
          ["", BACK],
        ),
        session(
          7,
          ["Show the oven rota", "wait, fix the finding itself or suppress it with a reason, then carry on"],
          ["", REGEN],
          ["", BACK],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
    expect(cards[0]!.rule.toLowerCase()).toContain("baseline");
  });

  test("sayings with no word in common join through the index the agent then edited", () => {
    const page = (name: string) => `edit docs/book/recipes/${name}.md: # ${name}`;
    const INDEX = "edit docs/book/INDEX.md: - [page](recipes/page.md)";
    const b = book();
    observe(
      b,
      [
        session(2, ["Document the rye recipe", "you left the index out again"], ["", page("rye")], ["", INDEX]),
        session(
          5,
          ["Write up the croissant lamination", "the site only builds pages that are listed in INDEX.md"],
          ["", page("croissant")],
          ["", INDEX],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });
});

describe("a change of practice said in passing", () => {
  test("'X comes out with the next release' and 'no X anymore' give X up", () => {
    expect(announcedChange("the moment dependency comes out with the next release")?.off).toContain("moment");
    expect(announcedChange("no yarn install anymore — pnpm, pinned in packageManager")?.off).toContain("yarn");
    expect([...polarityOf("Temporal not Date. the moment dependency comes out soon").avoid]).toContain("moment");
  });

  test("what the work stays on or goes in is wanted; an idiom is not", () => {
    expect([...polarityOf("Temporal not Date.").prefer]).toEqual(["temporal"]);
    expect([...polarityOf("keep it as moment objects, the whole pricing module is on moment").prefer]).toContain(
      "moment",
    );
    expect([...polarityOf("we're still on jest 29 in api/, keep the old config").prefer]).toContain("jest");
    expect([...polarityOf("put it in the Brewfile and run brew bundle").prefer]).toContain("brewfile");
    expect(polarityOf("the build is on fire").prefer.size).toBe(0);
  });

  test("'use X here' is the task at hand; how the team works 'here' is a rule", () => {
    expect(instructionsOf("use v3 of the slots endpoint here, the kiosk already calls it", true)).toEqual([]);
    expect(instructionsOf("we use pnpm here, not npm", true)).toHaveLength(1);
  });

  test("a keyword every edit writes says nothing about what was corrected; one that is a practice does", () => {
    for (const k of ["return", "class", "function"]) expect(distinctiveFix(k)).toBe(false);
    for (const k of ["final", "private", "nextest"]) expect(distinctiveFix(k)).toBe(true);
  });

  test("a preference joins a correction through the edit after both only when both name what the edit wrote", () => {
    const JODA = "edit src/main/java/bake/Slot.java: import org.joda.time.DateTime;";
    const JAVA_TIME = "edit src/main/java/bake/Slot.java: import java.time.Instant; import java.time.Duration;";
    const b = book();
    observe(
      b,
      [
        session(2, ["Add the pickup slots", "we're off joda now, java.time all the way"], ["", JODA], ["", JAVA_TIME]),
        session(6, ["Model the oven shifts", "Instant not DateTime."], ["", JODA], ["", JAVA_TIME]),
      ],
      1,
    );
    expect(plan(b).cards).toHaveLength(1);
    // A wish that names none of it, followed by the same edit (the task going on in that file), joins nothing.
    const c = book();
    observe(
      c,
      [
        session(
          2,
          ["Add the pickup slots", "keep the slot labels short, the kiosk screen is narrow"],
          ["", JODA],
          ["", JAVA_TIME],
        ),
        session(6, ["Model the oven shifts", "Instant not DateTime."], ["", JODA], ["", JAVA_TIME]),
        session(9, ["Price the catering orders", LATER.slice(2)], ["", LATER], ["", LATER]),
      ],
      1,
    );
    expect(plan(c).cards).toEqual([]);
  });
});

describe("one-word asides and passing moments", () => {
  test("'always.' said alone makes the sentence before it standing; a 'no' after a question answers it", () => {
    expect(instructionsOf("glaze after proofing. always. ./bake glaze --all", true)).toEqual([
      { quote: "glaze after proofing, always.", kind: "preference" },
    ]);
    expect(instructionsOf("unwrap() in the oven driver?? no", true)).toEqual([
      { quote: "unwrap() in the oven driver", kind: "correction" },
    ]);
    // A macro's bang is no sentence's end.
    expect(instructionsOf("try! in the checkout code?? no", true)[0]!.quote).toBe("try! in the checkout code");
    expect(instructionsOf("is that the right tray? no idea", true)).toEqual([]);
  });

  test("a setting changed while something is debugged, to be put back, is the task at hand", () => {
    expect(instructionsOf("turn the oven alarms off in dev.yml while we debug this, I'll put it back", true)).toEqual(
      [],
    );
    expect(instructionsOf("keep the oven alarms off in dev.yml, always", true)).toHaveLength(1);
  });

  test("the sentence right after a password that points back at it is no rule either", () => {
    expect(instructionsOf("the till db password is Qx81-crumb-77 — always use it when you run psql", true)).toEqual([]);
    expect(instructionsOf("the till db runs on 5433 — always use it when you run psql", true)).toHaveLength(1);
  });

  test("an objection with no rule in it joins the saying whose corrected action it shares most, not one sharing only the tool", () => {
    const PUSH = "$ git push · ok";
    const WRAPPER = "$ ./gradlew test · ok";
    const FORMAT = "$ ./gradlew spotlessApply && git commit -am wip · ok";
    const b = book();
    observe(
      b,
      [
        session(2, ["Add the rye page", "system gradle again, stop"], ["", "$ gradle test · ok"], ["", WRAPPER]),
        session(
          4,
          ["Add the spelt page", "the wrapper, not the brew gradle"],
          ["", "$ gradle build · ok"],
          ["", WRAPPER],
        ),
        session(6, ["Add the oat page", "format before you push, always"], ["", PUSH], ["", FORMAT]),
        session(8, ["Add the barley page", "CI is going to go red on the format check now"], ["", PUSH], ["", FORMAT]),
      ],
      1,
    );
    const cards = plan(b).cards;
    const formatCard = cards.find((c) => c.sources.some((q) => q.quote === "format before you push, always"));
    expect(formatCard?.sources.map((q) => q.quote)).toContain("CI is going to go red on the format check now");
    const wrapperCard = cards.find((c) => c.rule.toLowerCase().includes("gradle"));
    expect(wrapperCard?.sources.map((q) => q.quote) ?? []).not.toContain(
      "CI is going to go red on the format check now",
    );
  });
});

describe("reactions that end in another task, and a formatter run after the same step", () => {
  test("a reaction is quoted up to 'and then keep going' or 'oh and …'; a pull request's base is the task", () => {
    expect(followUpOf("wrapper!! and then keep going with the rota oh and kick the deploy by hand", ["./bake"])).toBe(
      "wrapper!!",
    );
    expect(instructionsOf("open this against release/3.1 not main, it's a hotfix", true)).toEqual([]);
  });

  test("objections after the same step, each followed by the same distinctive run of another tool, are one lesson", () => {
    const ADD = "$ git add -A · ok";
    const FMT = "$ ./bake spotlessApply · formatted 3 files";
    const b = book();
    observe(
      b,
      [
        session(2, ["Add the rye page", "CI is going to go red on the format check now"], ["", ADD], ["", FMT]),
        session(5, ["Add the spelt page", "the lint job is going to fail on that"], ["", ADD], ["", FMT]),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.rule.toLowerCase()).toContain("spotlessapply");
    // Another tool run after the same step that does nothing distinctive (`git push`) is the task going on.
    const c = book();
    const PUSH = "$ git push · ok";
    observe(
      c,
      [
        session(2, ["Add the rye page", "CI is going to go red on the format check now"], ["", ADD], ["", PUSH]),
        session(5, ["Add the spelt page", "the lint job is going to fail on that"], ["", ADD], ["", PUSH]),
      ],
      1,
    );
    expect(plan(c).cards).toEqual([]);
  });
});

describe("a tool named with its version", () => {
  test("'node 20' and `node:20-alpine` want one version; 'node 22 now' wants its rival; a version said gone is avoided", () => {
    expect([...polarityOf("the oven image stays on node:20-alpine").prefer]).toEqual(["ver:node@20"]);
    expect([...polarityOf("node 22 now").prefer]).toEqual(["ver:node@22"]);
    expect([...polarityOf("junit4 imports are gone from the build").avoid]).toContain("ver:junit@4");
    expect([...polarityOf("python 3.12 only").prefer]).toContain("ver:python@3.12");
    // A number that is no version: a timeout, a share.
    expect(polarityOf("set the node timeout to 30 s").prefer.size).toBe(0);
  });

  test("an adopted 'node 20' rule is replaced when 'node 22 now' is said once", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Add the pickup slots", "keep the kiosk image on node 20, always"], ["", LATER], ["", LATER]),
        session(3, ["Model the oven shifts", "the kiosk image stays on node:20-alpine"], ["", LATER], ["", LATER]),
      ],
      1,
    );
    const first = plan(b);
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    observe(b, [session(9, ["Price the catering orders", "node 22 now"], ["", LATER], ["", LATER])], 2);
    const next = plan(b, 2, first.memory);
    expect(next.cards.map((c) => c.op)).toEqual(["replace"]);
    expect(next.cards[0]!.rule.toLowerCase()).toContain("22");
  });
});

describe("a turn's preamble", () => {
  test("is no part of a reaction's words; 'wait,' still interrupts what the agent did", () => {
    expect(reactionOf("before you go further: nope.", "$ ./bake proof --all · ok")).toBe("nope.");
    expect(instructionsOf("small thing while I remember, rye flour please", true)).toEqual([
      { quote: "rye flour please", kind: "preference" },
    ]);
    const fix = ["file:baseline.xml"];
    expect(followUpOf("wait, fix the finding or suppress it with a reason", fix)).toBe(
      "fix the finding or suppress it with a reason",
    );
    // Without the interruption, a turn that starts like a task is the task going on.
    expect(followUpOf("fix the finding or suppress it with a reason", fix)).toBeUndefined();
  });
});
