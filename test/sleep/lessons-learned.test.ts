import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { getRules } from "../../src/sleep/learned-block.ts";
import { actionPair, contrastPairs, correctedAction, learnedTopics } from "../../src/sleep/lesson-learned.ts";
import { instructionsOf } from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { hashTree, writeClaudeSession } from "./support/fake-home.ts";

forgetLearnedTopicsAfterEach();

// Our own sentences, about tools the fixed lexicon does not know (helmfile / kubectl, mise / asdf,
// a race-checking flag): what is learned here comes from the sessions themselves.
const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent?: string[]) => ({
  session_id: `l${++n}`,
  source: "claude",
  ended_at: `2026-10-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  user_prompts: prompts,
  ...(agent ? { agent_before: agent } : {}),
});
const plan = (b: LessonBook, night: number, memory = "") =>
  planLessons(b, night, memory, { target: "AGENTS.md", retireAfterNights: 0 });

describe("pairs learned from the user's own words and the agent's commands", () => {
  test("contrast forms give (preferred, avoided) pairs: the word at the marker, and up to two after it", () => {
    const df = { ship: 9, chart: 6, raw: 5, helmfile: 1, kubectl: 1, mise: 1, asdf: 1, version: 3 };
    expect(contrastPairs("we ship charts through helmfile rather than raw kubectl", df)).toEqual([
      ["helmfile", "raw"],
      ["helmfile", "kubectl"],
    ]);
    expect(contrastPairs("Last month we moved from asdf to mise.", df)).toEqual([["mise", "asdf"]]);
    expect(contrastPairs("not asdf — mise handles the versions", df)).toEqual([["mise", "asdf"]]);
    expect(contrastPairs("asdf -> mise", df)).toEqual([["mise", "asdf"]]);
    expect(contrastPairs("the build is slow on my laptop", df)).toEqual([]);
  });
  test("the agent's changed command around a short turn naming it gives a pair; a turn naming neither gives none", () => {
    expect(actionPair("bazelisk, please", "$ bazel build //svc:all", "$ bazelisk build //svc:all")).toEqual([
      "bazelisk",
      "bazel",
    ]);
    expect(actionPair("looks good, thanks", "$ bazel build //svc:all", "$ bazelisk build //svc:all")).toBeUndefined();
    expect(correctedAction("$ go test ./...", "$ go test -race ./...")).toEqual(["-race"]);
    expect(correctedAction("$ go test ./...", undefined)).toEqual([]);
    // Not a redo (the agent went on to another thing): the turn is not made a correction by it.
    const alone = instructionsOf("pin the base image to node:20-alpine", true, { agentBefore: "$ go test ./..." });
    expect(
      instructionsOf("pin the base image to node:20-alpine", true, {
        agentBefore: "$ go test ./...",
        agentAfter: "edit Dockerfile: FROM node:20-alpine",
      }),
    ).toEqual(alone);
    expect(alone.some((i) => i.kind === "correction")).toBe(false);
  });
  test("a noisy pair never glues everything into one topic", () => {
    const pairs: Record<string, number> = {};
    for (let i = 0; i < 20; i++) pairs[`t${i}|hub`] = 1;
    const topics = learnedTopics(pairs);
    const hubTopic = topics.get("hub");
    expect([...topics.values()].filter((t) => t === hubTopic).length).toBeLessThanOrEqual(8);
  });
});

describe("a learned contrast pair joins sayings that share no content word", () => {
  const sayings = ["helmfile please", "no more kubectl apply by hand"];
  test("without the pair they stay apart; with it they are one lesson", () => {
    const without = book();
    observe(
      without,
      sayings.map((s, i) => session(1 + i, ["Roll out the search service", s])),
      1,
    );
    expect(plan(without, 1).cards).toEqual([]);

    const b = book();
    observe(
      b,
      [
        session(1, ["Draft the release notes", "ok. we ship charts through helmfile rather than raw kubectl"]),
        ...sayings.map((s, i) => session(3 + i, ["Roll out the search service", s])),
      ],
      1,
    );
    const cards = plan(b, 1).cards;
    expect(cards).toHaveLength(1);
    const quotes = cards[0]!.sources.map((s) => s.quote);
    for (const s of sayings) expect(quotes).toContain(s);
  });
});

describe("a pair learned from one changed command is not yet a topic", () => {
  // The agent ran bazelisk after bazel once, right after "bazelisk, please": a hint, not proof that
  // the two are rivals (the agent's next command may be the task going on). A contrast the user
  // states once is proof.
  const hinted = () =>
    session(
      1,
      ["Build the search service", "bazelisk, please", "thanks"],
      ["", "$ bazel build //svc:all", "$ bazelisk build //svc:all"],
    );
  const other = () => session(4, ["Add the ranking target", "no more plain bazel invocations"]);
  test("one sighting leaves two sayings that share no word apart; a stated contrast joins them", () => {
    const b = book();
    observe(b, [hinted(), other()], 1);
    expect(b.learned).toEqual({ "bazelisk|bazel": 1 });
    expect(plan(b, 1).cards).toEqual([]);

    const c = book();
    observe(c, [hinted(), other(), session(6, ["Draft the notes", "we build with bazelisk rather than bazel"])], 1);
    expect(c.learned?.["bazelisk|bazel"]).toBe(3);
    const cards = plan(c, 1).cards;
    expect(cards).toHaveLength(1);
    const quotes = cards[0]!.sources.map((x) => x.quote);
    expect(quotes).toContain("bazelisk, please");
    expect(quotes).toContain("no more plain bazel invocations");
  });
});

describe("the agent's corrected action after a turn is evidence", () => {
  // The agent ran the tests, the user spoke, and the agent re-ran them with -race: that change is
  // what both turns asked for, though they share no word.
  const turnA = ["Add the ingest worker", "turn on race checking"];
  const turnB = ["Fix the flush loop", "again you forgot the detector flag"];
  const agentA = ["", "$ go test ./...", "$ go test -race ./..."];
  const agentB = ["", "$ go test ./internal/...", "$ go test -race ./internal/..."];
  test("two sayings followed by the same changed command are one lesson", () => {
    const b = book();
    observe(b, [session(1, [...turnA, "thanks"], agentA), session(2, [...turnB, "thanks"], agentB)], 1);
    expect(b.observations.map((o) => o.fix)).toEqual([["-race"], ["-race"]]);
    expect(b.observations[0]!.kind).toBe("correction");
    const cards = plan(b, 1).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });
  test("the same sayings with no action after them stay apart", () => {
    const b = book();
    observe(b, [session(1, turnA, agentA.slice(0, 2)), session(2, turnB, agentB.slice(0, 2))], 1);
    expect(plan(b, 1).cards).toEqual([]);
  });
  test("a short turn is a correction when the agent then changed what it names", () => {
    expect(instructionsOf("race checking", true, { agentBefore: "$ go test ./..." })).toEqual([]);
    expect(
      instructionsOf("race checking", true, { agentBefore: "$ go test ./...", agentAfter: "$ go test -race ./..." }),
    ).toEqual([{ quote: "race checking", kind: "correction" }]);
  });
});

describe("a flip on a topic the lexicon does not know", () => {
  test("'asdf please' adopted, then 'we moved from asdf to mise' and 'mise only' propose a replacement", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Bootstrap the dev shell", "pin tool versions with asdf, not mise"]),
        session(2, ["Add node to the toolchain", "asdf please"]),
      ],
      1,
    );
    const first = plan(b, 1);
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    expect(first.cards[0]!.rule.toLowerCase()).toContain("asdf");
    observe(
      b,
      [
        session(12, ["Upgrade python in the toolchain", "heads up: we moved from asdf to mise"]),
        session(13, ["Add terraform to the toolchain", "mise only from now on"]),
      ],
      2,
    );
    const second = plan(b, 2, first.memory);
    expect(second.cards).toHaveLength(1);
    expect(second.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(first.memory)[0] });
    expect(second.cards[0]!.rule.toLowerCase()).toContain("mise");
  });
});

describe("one-offs stay out, even when the agent then acted on them", () => {
  test("'use … for now', '#41', 'for this change' are task requests whatever the action after them", () => {
    const cases: Array<[string, string, string]> = [
      ["use the staging DB for now", "$ psql staging", "$ psql -h staging-db.internal"],
      ["review PR #41 and leave comments", "$ git status", "$ gh pr view 41"],
      ["Please use the new retry helper in fetchUser for this change", "$ ls", "edit src/user.ts: retryHelper()"],
      ["call it search_v3", "$ ls", "edit src/search_v3.ts: export const searchV3 = 1"],
    ];
    for (const [turn, before, after] of cases)
      expect(instructionsOf(turn, true, { agentBefore: before, agentAfter: after })).toEqual([]);
    const b = book();
    observe(
      b,
      cases.flatMap(([turn, before, after], i) => [
        session(1 + i, ["Start", turn, "ok"], ["", before, after]),
        session(10 + i, ["Start", turn, "ok"], ["", before, after]),
      ]),
      1,
    );
    expect(plan(b, 1).cards).toEqual([]);
  });
});

describe("a credential sentence is never staged, even in a contrast form", () => {
  const SECRET = "ghp_Q7vR2mX9kLp4TzW8nY3bC6dF1hJ5sA0eGuK";
  test("observe keeps neither the sentence nor a pair holding it", () => {
    const b = book();
    const r = observe(
      b,
      [
        session(1, ["Set up CI", `use the token ${SECRET} instead of the old one`]),
        session(2, ["Fix CI", `again: use ${SECRET}, not the old token`]),
      ],
      1,
    );
    expect(r.credentialSentences).toBe(2);
    expect(plan(b, 1).cards).toEqual([]);
    expect(JSON.stringify(b)).not.toContain(SECRET);
  });
});

describe("end to end: a pair learned from the sessions, through sleep review", () => {
  test("two sayings with no shared word, after the agent's commands, are staged as one lesson; no secret is written", async () => {
    using tmp = tempDir("sleep-learned-pair-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "work", "svc");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "AGENTS.md"), "# Svc\n");
    writeFileSync(join(project, "CLAUDE.md"), "# Svc\n");
    const pw = "the registry password is Hx7-kQ2m-Zp91, use that";
    const start = Date.parse("2026-10-20T09:00:00Z");
    const sessions = [
      [
        { user: "Deploy the search service to the dev cluster", assistant: "Applying.", tool: "kubectl apply -f k8s/" },
        { user: "helmfile please", assistant: "Switched.", tool: "helmfile apply" },
        { user: pw, assistant: "Ok." },
      ],
      [
        { user: "Roll out the billing worker", assistant: "Applying.", tool: "kubectl apply -f deploy/" },
        { user: "no more kubectl apply by hand", assistant: "Right.", tool: "helmfile sync" },
      ],
    ];
    sessions.forEach((turns, i) => {
      writeClaudeSession(
        home,
        project,
        { id: `1ea2ed00-aaaa-4bbb-8ccc-00000000000${i}`, turns },
        start + i * 86_400_000,
      );
    });
    const stateDir = join(home, ".skillopt-sleep");
    const r = await runCli(
      [
        "sleep",
        "review",
        "--backend",
        "mock",
        "--source",
        "claude",
        "--lookback-hours",
        "0",
        "--project",
        project,
        "--json",
      ],
      { env: { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir }, cwd: project },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const report = JSON.parse(readFileSync(join(out.staging_dir, "report.json"), "utf8"));
    expect(report.lessons).toHaveLength(1);
    const quotes = report.lessons[0].sources.map((s: { quote: string }) => s.quote);
    expect(quotes).toEqual(expect.arrayContaining(["helmfile please", "no more kubectl apply by hand"]));
    for (const f of hashTree([join(project, ".skillopt-sleep"), stateDir]).keys())
      expect([f, readFileSync(f).includes("Hx7-kQ2m-Zp91")]).toEqual([f, false]);
    expect(r.stdout + r.stderr).not.toContain("Hx7-kQ2m-Zp91");
  });
});
