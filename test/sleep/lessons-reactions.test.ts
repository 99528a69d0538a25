import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { actionKey, instructionsOf, reactionOf, undoesOnly } from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Our own sessions: the agent, with no memory between sessions, makes the same move again and the
// user pushes back each time in other words; some of those turns state no rule at all.
const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent: string[]) => ({
  session_id: `r${++n}`,
  source: "codex",
  ended_at: `2026-10-${String(day).padStart(2, "0")}T09:30:00.000Z`,
  user_prompts: prompts,
  agent_before: agent,
});
const MAVEN = "$ mvn -q package -DskipTests · Build succeeded.";
const MAVEN_FIXED = "$ mvn -q verify · All 212 tests pass.";
const plan = (b: LessonBook) => planLessons(b, 1, "", { target: "AGENTS.md", retireAfterNights: 0 });

describe("reactions: a short push-back right after the agent's repeated action", () => {
  test("the action key is the command's first words with paths cut to their last name, or the edited file", () => {
    expect(actionKey("$ go vet ./cmd/server/... · ok")).toBe("run:go vet server");
    expect(actionKey("$ FOO=1 sudo make -C build/linux dist · done")).toBe("run:make -c linux dist");
    expect(actionKey("edit /home/me/app/src/Billing.kt: class Billing { · Added the class.")).toBe("edit:billing.kt");
    expect(actionKey("I think the tests pass.")).toBeUndefined();
    expect(actionKey("$ ls")).toBeUndefined();
    // A command run from a folder is the command, not the change of folder.
    expect(actionKey("$ cd services/billing && pip install httpx · ok")).toBe("run:pip install httpx");
    expect(actionKey("$ cd web; cd app && npm i left-pad · ok")).toBe("run:npm i left-pad");
  });

  test("two sayings after the same command run from a folder join, whatever the folder's other commands", () => {
    const b = book();
    const PIP = "$ cd svc && pip install httpx · Installed.";
    const POETRY = "$ cd svc && poetry add httpx · Added.";
    const LINT = "$ cd svc && flake8 . · clean";
    observe(
      b,
      [
        session(2, ["Add retries to the client", "deps live in pyproject.toml", "ok commit"], ["", PIP, POETRY]),
        session(4, ["Tidy the imports", "sort them with isort before you lint"], ["", LINT]),
        session(7, ["Add a timeout option", "the lock file is missing httpx again", "ok"], ["", PIP, POETRY]),
      ],
      1,
    );
    const cards = plan(b).cards;
    const of = (q: string) => b.observations.find((o) => o.quote.startsWith(q))!;
    expect(of("deps live").cluster).toBeDefined();
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
    expect(of("deps live").key).toBe("run:pip install httpx");
    expect(of("deps live").cluster).toBe(of("the lock file").cluster!);
    expect(of("sort them").cluster).not.toBe(of("deps live").cluster!);
  });

  test("a bare term or a push-back is a reaction; chatter, a new request or a question about it is not", () => {
    expect(reactionOf("again!!", MAVEN)).toBe("again!!");
    expect(reactionOf("`verify`", MAVEN)).toBe("`verify`");
    expect(reactionOf("you skipped the tests, that doesn't count as green", MAVEN)).toBeDefined();
    expect(reactionOf("thanks, looks good", MAVEN)).toBeUndefined();
    expect(reactionOf("ok where were we", MAVEN)).toBeUndefined();
    expect(reactionOf("cool, push it", MAVEN)).toBeUndefined();
    expect(reactionOf("wrong window, continue", MAVEN)).toBeUndefined();
    expect(reactionOf("can you also bump the version in the changelog", MAVEN)).toBeUndefined();
    expect(reactionOf("why is the jar twice as big as last week", MAVEN)).toBeUndefined();
    expect(reactionOf("again!!", "Done, the build is green.")).toBeUndefined();
    expect(reactionOf("skip the tests for now, the db is down", MAVEN)).toBeUndefined();
  });

  test("a sentence naming a dated snapshot is about that moment: neither a rule nor a reaction", () => {
    const said = "read from the 2025-04 dump, not the live replica";
    expect(instructionsOf(said, true, { agentBefore: MAVEN })).toEqual([]);
    expect(reactionOf(said, MAVEN)).toBeUndefined();
    expect(instructionsOf("read from the dump, not the live replica", true).length).toBe(1);
  });

  test("sayings with no word in common join through the action they followed, in other sessions", () => {
    const b = book();
    observe(
      b,
      [
        session(
          3,
          ["Wire the invoice export", "don't skip the test phase, we only ship what verify passed"],
          ["", MAVEN],
        ),
        session(6, ["Add the VAT column", "again!!", "ok commit"], ["", MAVEN, MAVEN_FIXED]),
        session(9, ["Fix the rounding bug", "`verify`"], ["", MAVEN]),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    // The rule is the stated saying, the reactions are its evidence from two more sessions.
    expect(cards[0]!.rule).toBe("Don't skip the test phase, we only ship what verify passed");
    expect(cards[0]!.n_sessions).toBe(3);
    expect(cards[0]!.sources.map((s) => s.quote).sort()).toEqual(
      ["`verify`", "again!!", "don't skip the test phase, we only ship what verify passed"].sort(),
    );
  });

  test("reactions alone state no rule: never a lesson, however often", () => {
    const b = book();
    observe(
      b,
      [1, 2, 3, 4].map((d) => session(d, ["Ship the report page", "again!!"], ["", MAVEN])),
      1,
    );
    expect(plan(b).cards).toEqual([]);
  });

  test("a reaction after an action that drew both sides of a flip joins the side said last", () => {
    const b = book();
    const EDIT = "edit src/Main.kt: import foo.* · Updated the imports.";
    observe(
      b,
      [
        session(1, ["Port the settings screen", "Use wildcard imports in Kotlin files."], ["", EDIT]),
        session(2, ["Port the login screen", "we use wildcard imports, like the rest"], ["", EDIT]),
        session(
          10,
          ["Port the profile screen", "we switched: no wildcard imports anymore, ktlint flags them"],
          ["", EDIT],
        ),
        session(11, ["Port the about screen", "No wildcard imports."], ["", EDIT]),
        session(12, ["Port the help screen", "again!!"], ["", EDIT]),
      ],
      1,
    );
    const cards = plan(b).cards;
    const reaction = b.observations.find((o) => o.quote === "again!!")!;
    const newer = b.observations.find((o) => o.quote.startsWith("No wildcard"))!;
    const older = b.observations.find((o) => o.quote.startsWith("Use wildcard"))!;
    expect(reaction.cluster).toBe(newer.cluster!);
    expect(older.cluster).not.toBe(newer.cluster!);
    // The side said last is the one proposed; the old one is not.
    expect(cards.map((c) => c.rule.toLowerCase()).some((r) => r.includes("no wildcard"))).toBe(true);
    expect(cards.some((c) => /^(?:we )?use wildcard/i.test(c.rule))).toBe(false);
  });

  test("a bare request to undo the last edit is a reaction: it joins what was said after that edit elsewhere", () => {
    expect(undoesOnly("undo that please")).toBe(true);
    expect(undoesOnly("roll it back.")).toBe(true);
    expect(undoesOnly("revert it, that file is generated")).toBe(false);
    expect(undoesOnly("revert the schema migration")).toBe(false);
    const b = book();
    const EDIT = 'edit /srv/shop/config/psalm-baseline.xml: <file src="Cart.php"> · Added the new warnings.';
    const NEXT = "$ vendor/bin/psalm · 3 errors";
    observe(
      b,
      [
        session(3, ["Get the static analysis passing", "nah, undo that", "ok go on"], ["", EDIT, NEXT]),
        session(
          6,
          [
            "Static analysis is red on the cart",
            "don't pad the psalm baseline to get a green run, fix what it reports",
          ],
          ["", EDIT],
        ),
      ],
      1,
    );
    const of = (q: string) => b.observations.find((o) => o.quote.startsWith(q))!;
    expect(of("undo that").kind).toBe("reaction");
    const cards = plan(b).cards;
    expect(of("undo that").cluster).toBeDefined();
    expect(of("undo that").cluster).toBe(of("don't pad").cluster!);
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
    expect(cards[0]!.rule.toLowerCase()).toContain("psalm");
  });

  test("bare requests to undo state no rule: the same one after the same edit twice is no lesson", () => {
    const b = book();
    const EDIT = 'edit /srv/shop/config/psalm-baseline.xml: <file src="Cart.php"> · Added the new warnings.';
    observe(
      b,
      [
        session(3, ["Get the static analysis passing", "no, revert that"], ["", EDIT]),
        session(6, ["Static analysis is red again", "no, revert that"], ["", EDIT]),
      ],
      1,
    );
    expect(plan(b).cards).toHaveLength(0);
  });

  test("a saying that names a file joins the correction after which the agent edited that file, in another session", () => {
    const b = book();
    const PAGE = "edit /site/docs/guide/caching.md: ## Cache keys · Wrote the page.";
    const NAV = "edit /site/mkdocs.yml: nav: - Caching: guide/caching.md · Linked the page.";
    observe(
      b,
      [
        session(2, ["Write a guide page on cache keys", "you left the sidebar out again", "ok"], ["", PAGE, NAV]),
        session(
          5,
          ["Bump the theme version", "a page only shows up once mkdocs.yml lists it under nav"],
          ["", "$ pip install -U mkdocs-material · ok"],
        ),
      ],
      1,
    );
    const of = (q: string) => b.observations.find((o) => o.quote.startsWith(q))!;
    expect(of("you left").fix).toContain("file:mkdocs.yml");
    expect(plan(b).cards).toHaveLength(1);
    expect(of("you left").cluster).toBeDefined();
    expect(of("you left").cluster).toBe(of("a page only").cluster!);
  });
});
