import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { instructionsOf } from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, observe } from "../../src/sleep/lessons.ts";

// Our own sentences. A rule the user states in a session's opening message, beside the task and
// before the agent did anything, is the same correction as the one said elsewhere after the
// agent did what it forbids; a request scoped to throwaway work is a task, not a rule.
const book = emptyBook;
const session = sessionMaker("op", "claude", "2026-10");
const plan = plannerFor("CLAUDE.md");
forgetLearnedTopicsAfterEach();
const clusterOf = (b: LessonBook, quote: string) => b.observations.find((o) => o.quote === quote)?.cluster;
const quotes = (prompt: string, followUp = false) => instructionsOf(prompt, followUp, {}).map((x) => x.quote);

describe("a rule said beside the task in the opening message", () => {
  test("is read when it sets a practice apart from the task", () => {
    // What a thing is, then a "don't": how to work in it.
    expect(quotes("Add the export page\n\nthe web folder is a pnpm workspace, don't install inside each app")).toEqual([
      "the web folder is a pnpm workspace, don't install inside each app",
    ]);
    // After "one thing up front:", with no "no" in it.
    expect(
      quotes("Add the export page. one thing up front: when a snapshot test breaks ask me before touching it"),
    ).toEqual(["when a snapshot test breaks ask me before touching it"]);
    // What holds for any new thing of a kind.
    expect(quotes("Add the export page\n\nany new route: validate the body with the shared schema")).toEqual([
      "any new route: validate the body with the shared schema",
    ]);
    expect(quotes("Add the export page\n\nevery table change: a numbered sql script")).toEqual([
      "every table change: a numbered sql script",
    ]);
    // What kind of project a folder is.
    expect(quotes("Add the export page. the tools folder is a cargo workspace")).toEqual([
      "the tools folder is a cargo workspace",
    ]);
  });
  test("the task itself, and a plain aside about the task, stay unread", () => {
    expect(quotes("Add the export page. The layout is in the design doc.")).toEqual([]);
    expect(quotes("Add the export page\n\nthe page is a small one, nothing fancy")).toEqual([]);
  });
});

describe("work said to be throwaway is a task", () => {
  test("how to do it is not a standing rule, in the opening message or later", () => {
    expect(quotes("Sketch the import flow. this is only a rough prototype, skip the docs")).toEqual([]);
    expect(quotes("also it's a quick experiment, no docs needed", true)).toEqual([]);
    expect(quotes("Sketch the import flow. it's just a spike. no docs for it")).toEqual([]);
    // A standing rule that mentions a spike is still one.
    expect(quotes("Sketch the import flow. we never skip tests, even in a spike")).toEqual([
      "we never skip tests, even in a spike",
    ]);
  });
});

describe("an opening rule joins the correction said after the agent's action elsewhere", () => {
  const opening = "the web folder is a pnpm workspace, don't install inside each app";
  const later = "stop installing inside every app folder";
  const NPM = "$ cd web/apps/site && npm install · added 12 packages";
  const PNPM = "$ cd web && pnpm install · done";
  // Other prompts of the project: its rarity weights.
  const filler = () =>
    [2, 3, 4, 5].map((d) =>
      session(d, ["Write the release notes", "add a changelog entry", "update the readme"], ["", "", ""], ["", "", ""]),
    );
  test("through a rare word that the agent's redo names", () => {
    const b = book();
    observe(
      b,
      [
        session(1, [`Add the export page\n\n${opening}`, "thanks"], ["", "$ ls"], ["", ""]),
        session(6, ["Add the invoice page", later, "thanks"], ["", NPM, PNPM], ["", PNPM, ""]),
        ...filler(),
      ],
      1,
    );
    const cards = plan(b).cards;
    const a = clusterOf(b, opening);
    expect(a).toBeDefined();
    expect(clusterOf(b, later)).toBe(a);
    expect(cards.length).toBe(1);
  });
  test("through a rare word that the corrected action names, in other words than the rule's", () => {
    const b = book();
    const upFront = "the release line is a shared one, don't amend or force push there";
    const objection = "no, others already pulled those commits";
    const AMEND = "$ git commit --amend --no-edit · ok";
    const NEW = '$ git commit -m "fix: review notes" · ok';
    observe(
      b,
      [
        session(1, [`Add the export page\n\n${upFront}`, "thanks"], ["", "$ ls"], ["", ""]),
        session(6, ["Add the invoice page", objection, "thanks"], ["", AMEND, NEW], ["", NEW, ""]),
        ...filler(),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(clusterOf(b, objection.replace("no, ", ""))).toBe(clusterOf(b, upFront));
    expect(cards.length).toBe(1);
  });
  test("never through an action that merely names the rule's word: the agent may have followed it there", () => {
    const b = book();
    const other = "leave the stored snapshots alone";
    const UPDATE = "$ pnpm vitest -u · 3 snapshots updated";
    const RESTORE = "$ git checkout -- web/__snapshots__ · ok";
    observe(
      b,
      [
        session(1, [`Add the export page\n\n${opening}`, "thanks"], ["", "$ ls"], ["", ""]),
        session(6, ["Add the invoice page", `no, ${other}`, "thanks"], ["", UPDATE, RESTORE], ["", RESTORE, ""]),
        ...filler(),
      ],
      1,
    );
    plan(b);
    expect(clusterOf(b, other)).toBeDefined();
    expect(clusterOf(b, other)).not.toBe(clusterOf(b, opening));
  });
  test("a tool's own file names the tool its redo turned to", () => {
    const b = book();
    const upFront = "the repo root has a Rakefile, go through its tasks";
    const objection = "the task passes the right flags, use it";
    const SPEC = "$ bundle exec rspec spec/models · ok";
    const RAKE = "$ rake spec · ok";
    observe(
      b,
      [
        session(1, [`Add the export page\n\none thing up front: ${upFront}`, "thanks"], ["", "$ ls"], ["", ""]),
        session(6, ["Add the invoice page", `no, ${objection}`, "thanks"], ["", SPEC, RAKE], ["", RAKE, ""]),
        ...filler(),
      ],
      1,
    );
    plan(b);
    expect(clusterOf(b, upFront)).toBeDefined();
    expect(clusterOf(b, objection)).toBe(clusterOf(b, upFront));
  });
  test("never through a word common in this user's prompts", () => {
    const b = book();
    const common = "the readme is a generated file, don't edit it by hand";
    observe(
      b,
      [
        session(1, [`Add the export page\n\n${common}`, "thanks"], ["", "$ ls"], ["", ""]),
        session(
          6,
          ["Add the invoice page", "stop writing long sentences in the readme", "thanks"],
          ["", "edit README.md: x", ""],
          ["", "edit README.md: y", ""],
        ),
        ...filler(),
      ],
      1,
    );
    plan(b);
    expect(clusterOf(b, common)).toBeDefined();
    expect(clusterOf(b, "stop writing long sentences in the readme")).not.toBe(clusterOf(b, common));
  });
});

describe("a standing marker of a few words qualifies the sentence before it", () => {
  test("it is folded into that sentence, not read as a rule of its own", () => {
    expect(quotes("the queue workers here are written in go. same as the other day, as always.", true)).toEqual([
      "the queue workers here are written in go, same as the other day, as always.",
    ]);
    // Without "always" or "every" it marks nothing standing.
    expect(quotes("the queue workers here are written in go. same as last time.", true)).not.toContain(
      "the queue workers here are written in go, same as last time.",
    );
  });
});
