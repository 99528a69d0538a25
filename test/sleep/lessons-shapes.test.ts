import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { instructionsOf, lessonTokens, opposite, polarityOf } from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Our own sentences for the general shapes of a correction the lesson reader learned to read:
// an example name holding a ticket key, a check made the condition of "done", the agent's claim
// denied, a layout order, "X is back", "swap X for Y", and short forms of one term.

const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent?: string[]) => ({
  session_id: `shape${++n}`,
  source: "claude",
  ended_at: `2026-10-${String(day).padStart(2, "0")}T09:00:00.000Z`,
  user_prompts: prompts,
  ...(agent ? { agent_before: agent } : {}),
});

describe("shapes of a standing rule", () => {
  test("a ticket key inside an example name is part of the example; a ticket key on its own is still a task", () => {
    expect(instructionsOf("follow our naming: chore/API-31-drop-cache style", true)).toHaveLength(1);
    expect(instructionsOf("no, look at OPS-12 first", true)).toEqual([]);
    expect(instructionsOf("we always squash OPS-12 into one commit", true)).toEqual([]);
  });
  test("'no idea', 'no worries' are turns of speech, not 'no X'", () => {
    expect(instructionsOf("no idea why the snapshot differs on CI", true)).toEqual([]);
    expect(instructionsOf("no worries, take the slower route", true)).toEqual([]);
    expect(instructionsOf("no lodash, we have our own helpers", true)).toHaveLength(1);
  });
  test("naming the one thing at hand is a task; a naming style is a rule", () => {
    expect(instructionsOf("wrap that in a toggle, call it search_v3", true)).toEqual([]);
    expect(instructionsOf("put it in a new env var, name it `retry_budget`", true)).toEqual([]);
    expect(instructionsOf("always name things in snake_case", true)).toHaveLength(1);
  });
  test("a check made the condition of calling work done is a rule", () => {
    expect(instructionsOf("don't call a task complete until the type check passes", true)).toHaveLength(1);
    expect(instructionsOf("before saying you're done, run the test suite", true)).toHaveLength(1);
    // Finishing is not a gate by itself.
    expect(instructionsOf("Finish the CSV export before lunch", true)).toEqual([]);
  });
  test("denying what the agent claimed is a correction", () => {
    expect(instructionsOf("you claimed it was finished and the build is broken", true)[0]?.kind).toBe("correction");
    expect(instructionsOf("you said it works but the page is still blank", true)[0]?.kind).toBe("correction");
    // Recalling what the agent said is not denying it.
    expect(instructionsOf("you said you'd add the endpoint and then you stopped", true)).toEqual([]);
  });
  test("a layout order of code elements is a rule; steps of a task are not", () => {
    expect(instructionsOf("constants first, then helpers, then the exported functions", true)).toHaveLength(1);
    expect(instructionsOf("keep hooks above components in every file", true)).toHaveLength(1);
    expect(instructionsOf("Fix the date parsing first, then the CSV export", true)).toEqual([]);
    expect(instructionsOf("the migration first, then the seed script", true)).toEqual([]);
  });
  test("each item of a list said in one turn is its own instruction, never glued to the next one", () => {
    const items = instructionsOf("3 things: 1) pnpm, not npm 2) bump the timeout to 30s 3. named exports only", true);
    expect(items.map((i) => i.quote)).toEqual(["pnpm, not npm", "named exports only"]);
    // A number inside a sentence is not an item.
    expect(instructionsOf("use pnpm for the 2 apps, not npm", true).map((i) => i.quote)).toEqual([
      "use pnpm for the 2 apps, not npm",
    ]);
  });
});

describe("polarity", () => {
  test("'X is back' and 'put X back' prefer X, against the rule that avoided it", () => {
    expect([...polarityOf("tabs are back, the editorconfig changed").prefer]).toContain("tab");
    expect([...polarityOf("put the ; back at the end of statements").prefer]).toContain("semicolon");
    expect(opposite(polarityOf("semicolons are back"), polarityOf("we never end lines with semis"))).toBe(true);
  });
  test("a negation avoids the topic member it names, not the adjective before it", () => {
    expect([...polarityOf("keep it tidy, no trailing semis").avoid]).toContain("semicolon");
  });
  test("'swap X for Y' and 'rip out X' avoid X and prefer Y; another word for an avoided choice is not preferred", () => {
    const p = polarityOf("replace those prints with the logger");
    expect([...p.avoid]).toContain("print");
    expect([...p.prefer]).toContain("logger");
    expect([...polarityOf("rip out the console calls").avoid]).toContain("console");
    expect([...polarityOf("quit writing to stdout, stop printing").prefer]).not.toContain("stdout");
  });
  test("short forms read as one term", () => {
    expect(lessonTokens("no semis")).toEqual(new Set(["semicolon"]));
    expect(lessonTokens("drop the ; please")).toContain("semicolon");
    expect(lessonTokens("the linter")).toEqual(lessonTokens("lint"));
    expect(lessonTokens("finished")).toEqual(lessonTokens("complete"));
    expect(lessonTokens("branches passes")).toEqual(new Set(["branch", "pass"]));
  });
});

describe("clustering", () => {
  test("the same words after different agent actions still make one lesson", () => {
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add the refund route", "ok. before you call it finished, run the type check"],
          ["", "$ git status"],
        ),
        session(
          4,
          ["Tidy the webhook module", "you claimed it was done and the type check fails"],
          ["", "$ pnpm test"],
        ),
      ],
      1,
    );
    const plan = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(1);
    expect(plan.cards[0]!.sources).toHaveLength(2);
  });
  test("console, print and stdout are one logging choice: sayings against them in other words join", () => {
    const b = book();
    observe(
      b,
      [
        session(2, ["Port the mailer", "swap the console calls for our logger"]),
        session(6, ["Speed up the importer", "stop printing to stdout, the logger is already set up"]),
      ],
      1,
    );
    const plan = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(1);
  });
});

describe("the corrected action", () => {
  const sayings = ["keep the import lines sorted alphabetically", "externals above ours in every import block"];
  const plan = (acts: [string, string]) => {
    const b = book();
    const pad = ["Add the invoices page", "Speed up the list view", "Port the mailer", "Tidy the webhook module"];
    observe(
      b,
      [
        session(3, ["Add the refund route", sayings[0]!], ["", acts[0]]),
        session(8, ["Wire the billing webhook", sayings[1]!], ["", acts[1]]),
        // Other prompts of the same user, so that "import" is rare among them but not unique.
        ...pad.map((p, i) => session(10 + i, [p, i ? "rerun the suite" : "import the helper from lib and rerun"])),
      ],
      1,
    );
    return planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 }).cards;
  };
  test("two sayings after the same edit that share a rare word are one lesson", () => {
    const edit = 'edit src/routes/refund.ts: import { findOrder } from "../store"';
    expect(plan([edit, edit])).toHaveLength(1);
  });
  test("the same two sayings after different actions share too little to be one", () => {
    expect(plan(['edit src/routes/refund.ts: import { findOrder } from "../store"', "$ pnpm test"])).toHaveLength(0);
  });
});
