import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { harvest } from "../../src/sleep/harvest/index.ts";
import { contrastPairs, correctedAction } from "../../src/sleep/lesson-learned.ts";
import { followUpOf, instructionsOf, polarityOf } from "../../src/sleep/lesson-rule.ts";
import { getRules } from "../../src/sleep/learned-block.ts";
import { observe } from "../../src/sleep/lessons.ts";
import { tempDir } from "../support/tmp.ts";
import { type ScriptedSession, writeClaudeSession } from "./support/fake-home.ts";

// Our own sessions. After a correction the agent redoes what it just did, another way (the
// corrected action), and only then goes on with the task: its first command or edit after the
// turn is the evidence, whatever words the user chose.
const book = emptyBook;
const session = sessionMaker("ca", "claude", "2026-10", "09:30:00.000");
const plan = plannerFor("CLAUDE.md");
forgetLearnedTopicsAfterEach();

/** Write one scripted Claude Code session under a fresh home and harvest it: its digest. */
async function harvestOne(dir: string, s: ScriptedSession, startIso: string) {
  const home = join(dir, "home");
  const project = join(dir, "work", "svc");
  mkdirSync(project, { recursive: true });
  writeClaudeSession(home, project, s, Date.parse(startIso));
  const r = await harvest({
    sources: ["claude"],
    scope: "all",
    invokedProject: "",
    locations: { claudeHome: join(home, ".claude") },
  });
  return r.digests[0]!;
}
const COMPOSE = "$ docker compose up -d redis · Started.";
const MAKE = "$ make dev-up · redis, queue and seed data are up.";
// What the agent did last in the turn after the correction: the task going on.
const LATER = "$ go test ./internal/queue/... · ok";
const GO_TEST = "$ go test ./internal/ingest/... · ok";
const RACE = "$ go test -race ./internal/ingest/... · ok";

describe("the corrected action: the agent's first move after a turn", () => {
  test("a command redone another way, or an edit moved to another file of the same folder, names what changed", () => {
    expect(correctedAction(COMPOSE, MAKE)).toEqual(["tool:make", "make", "dev-up"]);
    expect(
      correctedAction(
        'edit pkg/billing/invoice.go: return fmt.Errorf("no rate")',
        'edit pkg/billing/errors.go: var ErrNoRate = errors.New("no rate")',
      ),
    ).toEqual(["file:errors.go"]);
    // A command whose tool changed names the new tool, past a `cd … &&`.
    expect(correctedAction("$ cd web && ./gradlew :app:assembleDebug · ok", "$ just android-debug · ok")).toEqual([
      "tool:just",
      "just",
      "android-debug",
    ]);
    // An edit in another folder is the task going on, not a correction.
    expect(correctedAction("edit pkg/billing/invoice.go: x", "edit cmd/api/main.go: y")).toEqual([]);
    // A command that only reads is the agent looking before it acts: it corrected nothing.
    expect(correctedAction(COMPOSE, "$ sed -n 1,200p src/billing/invoice.ts · ok")).toEqual([]);
    expect(correctedAction(COMPOSE, "$ cd api && git diff --stat · ok")).toEqual([]);
    expect(correctedAction(COMPOSE, "$ grep -rn TODO src · ok")).toEqual([]);
    expect(correctedAction(COMPOSE, "$ sed -i s/foo/bar/ src/a.ts · ok")).not.toEqual([]);
    // `git branch -m` renames: it acts.
    expect(correctedAction("$ git checkout -b quick-fix · ok", "$ git branch -m fix/PAY-7-totals · ok")).not.toEqual(
      [],
    );
  });

  test("a turn stating no rule is kept as support when the agent then changed course; a new request or chatter is not", () => {
    const fix = correctedAction(COMPOSE, "$ ./tools/stack up · up");
    expect(followUpOf("the local stack comes up through our helper in tools/", fix)).toBeDefined();
    expect(followUpOf("rename it to match the others", ["git", "mv", "tools/old.sh", "tools/stack.sh"])).toBeDefined();
    expect(followUpOf("add retries to the uploader next", fix)).toBeUndefined();
    expect(followUpOf("thanks, looks good", fix)).toBeUndefined();
    // Approval or moving on, with the next step: neither support nor a rule.
    expect(followUpOf("lgtm, open a draft pr", fix)).toBeUndefined();
    expect(followUpOf("sorry, hit enter too early. go on", fix)).toBeUndefined();
    expect(instructionsOf("cool, push it", true)).toEqual([]);
    expect(followUpOf("ok the stack comes up through our helper in tools/, not compose", fix)).toBeDefined();
    expect(followUpOf("the local stack comes up through our helper in tools/", [])).toBeUndefined();
    expect(followUpOf("use the staging stack for now", fix)).toBeUndefined();
    // Quoted up to the sentence that turns to another task; "split it out like every other X does" follows a convention.
    expect(followUpOf("stack comes up via tools/. Also bump the chart to 1.4 until the fix lands", fix)).toBe(
      "stack comes up via tools/.",
    );
    expect(followUpOf("looks mostly fine. split it out like every other service does", fix)).toBe(
      "looks mostly fine. split it out like every other service does",
    );
  });

  test("sayings sharing no word join a stated correction through the same corrected action, after different moves", () => {
    const b = book();
    // Three different wrong moves (so the action before joins nothing), one corrected action.
    observe(
      b,
      [
        session(2, ["Add the retry queue", "use make dev-up, not raw docker compose"], ["", COMPOSE], ["", MAKE]),
        session(
          5,
          ["Wire the dead-letter topic", "there's a target for that, it seeds the queue too"],
          ["", "$ docker run -d -p 6379:6379 redis:7 · ok"],
          ["", MAKE],
        ),
        session(
          8,
          ["Fix the flaky consumer test", "bring up the local deps the usual way"],
          ["", "$ redis-server --daemonize yes · ok"],
          ["", MAKE],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.rule).toBe("Use make dev-up, not raw docker compose");
    expect(cards[0]!.n_sessions).toBe(3);
  });

  test("reactions alone are a lesson when the agent changed the same thing after the same action in two sessions", () => {
    const b = book();
    observe(
      b,
      [
        session(3, ["Add the retry queue", "the ingest buffer is touched by 3 goroutines"], ["", GO_TEST], ["", RACE]),
        session(6, ["Wire the dead-letter topic", "again."], ["", GO_TEST], ["", RACE]),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    // The words alone do not say what to do; the change the agent made after them does.
    expect(cards[0]!.rule).toBe("The ingest buffer is touched by 3 goroutines (then: -race)");
    expect(cards[0]!.n_sessions).toBe(2);
    // Another tool afterwards that does nothing distinctive (`just ci`, then `git push origin main`)
    // is the task going on: support, never a lesson alone.
    const c = book();
    observe(
      c,
      [3, 6, 9].map((d) =>
        session(
          d,
          ["Add the retry queue", "hmm, the queue consumer looks wrong there"],
          ["", "$ just ci · ok"],
          ["", "$ git push origin main · ok"],
        ),
      ),
      1,
    );
    expect(plan(c).cards).toEqual([]);
    // One that does (docker compose, then `make dev-up`, after each objection) is what changed.
    const d = book();
    observe(
      d,
      [3, 6, 9].map((day) =>
        session(day, ["Add the retry queue", "bring up the local deps the usual way"], ["", COMPOSE], ["", MAKE]),
      ),
      1,
    );
    expect(plan(d).cards.map((x) => x.rule)).toEqual(["Bring up the local deps the usual way (then: dev-up)"]);
  });

  test("a practice's change of date is not a task's bound, and one saying names what the agent changed to after the other", () => {
    const BEFORE = "edit internal/batch/batch_test.go: require.Equal(t, want, got)";
    const AFTER = 'edit internal/batch/batch_test.go: if d := cmp.Diff(want, got); d != "" { t.Errorf(d) }';
    const REMOVED = "we removed testify from go.mod this week, stdlib comparisons + cmp.Diff from now on";
    expect(instructionsOf(REMOVED, true).length).toBe(1);
    expect(instructionsOf("use the staging DB this week", true)).toEqual([]);
    // A change of practice said as a verb, or "going forward", states the practice now.
    for (const said of [
      "we ditched changesets.",
      "moved releases over to cargo-release last week",
      "versions are cut with `cargo release minor` going forward",
    ])
      expect(instructionsOf(said, true), said).toHaveLength(1);
    // "no more X" forbids X wherever it stands in the sentence.
    expect(instructionsOf("switched DI last sprint, no more @Inject constructors", true)).toHaveLength(1);
    expect([...polarityOf(REMOVED).avoid]).toContain("testify");
    const b = book();
    observe(
      b,
      [
        session(4, ["Add the batch tests", REMOVED], ["", BEFORE], ["", AFTER]),
        session(9, ["Cover the empty batch", "no more require.Equal."], ["", BEFORE], ["", AFTER]),
      ],
      1,
    );
    // Not the same words, nor a correction on both sides: the agent's change (cmp.Diff), named by one of them, joins them.
    expect(b.observations.map((o) => o.fix?.includes("cmp.diff"))).toEqual([true, true]);
    expect(new Set(b.observations.map((o) => o.kind))).toEqual(new Set(["preference", "correction"]));
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(cards[0]!.n_sessions).toBe(2);
  });

  test("reactions that only ask, or after which the agent only looked around, are never a lesson", () => {
    const STATUS = "$ git status --short · M queue.go";
    const b = book();
    observe(
      b,
      [1, 3, 5, 7].map((d) =>
        session(d, ["Add the retry queue", "hmm, does this handle the empty queue case?"], ["", COMPOSE], ["", MAKE]),
      ),
      1,
    );
    observe(
      b,
      [9, 11, 13].map((d) =>
        session(d, ["Add the retry queue", "great, now the same for the admin consumer"], ["", LATER], ["", STATUS]),
      ),
      2,
    );
    expect(plan(b).cards).toEqual([]);
  });

  test("the corrected action is the agent's first move after the turn, not its last one in that turn", () => {
    const b = book();
    observe(
      b,
      [
        session(
          2,
          ["Add the retry queue", "use make dev-up, not raw docker compose", "ok"],
          ["", COMPOSE, LATER],
          ["", MAKE, ""],
        ),
      ],
      1,
    );
    const said = b.observations.find((o) => o.quote.includes("make dev-up"))!;
    expect(said.fix).toContain("dev-up");
    expect(said.fix).not.toContain("./internal/queue/...");
    expect(said.fix).not.toContain("tool:go");
  });

  test("the harvest keeps the agent's first command after each prompt, beside its last", async () => {
    using tmp = tempDir();
    const d = await harvestOne(
      tmp.path,
      {
        id: "8e551000-dddd-4eee-8fff-000000000001",
        turns: [
          { user: "Add the retry queue", tool: "docker compose up -d redis", assistant: "Started." },
          {
            user: "there's a target for that, it seeds the queue too",
            tool: ["make dev-up", "go test ./internal/queue/..."],
            assistant: "Done.",
          },
          { user: "ok, commit", assistant: "Committed." },
        ],
      },
      "2026-10-02T09:00:00Z",
    );
    expect(d.user_prompts).toHaveLength(3);
    expect(d.agent_first[1]).toContain("make dev-up");
    expect(d.agent_before[2]).toContain("go test");
  });

  test("an edit is described by what it changed (a Write by the lines the session's last Write of that file lacked, an Edit by its new lines); a Read is no action", async () => {
    using dir = tempDir();
    const file = join(dir.path, "work", "svc", "tests", "test_export.py");
    const head = "import os\n\nfrom meter.export import dump_csv\n\n\n";
    const d = await harvestOne(
      dir.path,
      {
        id: "8e551000-dddd-4eee-8fff-000000000002",
        turns: [
          {
            user: "Add a test for the csv dump",
            tool: {
              name: "Write",
              input: {
                file_path: file,
                content: `${head}def test_dump(rows):\n    os.makedirs("/tmp/meter_out", exist_ok=True)\n    dump_csv(rows, "/tmp/meter_out/a.csv")\n`,
              },
            },
            assistant: "Added the test.",
          },
          {
            user: "per-test dirs come from pytest",
            // Reading the file first is no action: the corrected action is the rewrite.
            tool: [
              { name: "Read", input: { file_path: file } },
              {
                name: "Write",
                input: {
                  file_path: file,
                  content: `${head}def test_dump(rows, tmp_path):\n    dump_csv(rows, tmp_path / "a.csv")\n`,
                },
              },
            ],
            assistant: "Switched to tmp_path.",
          },
          {
            user: "and quote every field",
            tool: {
              name: "Edit",
              input: {
                file_path: file,
                old_string: '    dump_csv(rows, tmp_path / "a.csv")',
                new_string: '    dump_csv(rows, tmp_path / "a.csv", quoting=csv.QUOTE_ALL)',
              },
            },
            assistant: "Done.",
          },
        ],
      },
      "2026-10-03T09:00:00Z",
    );
    // The imports both versions hold say nothing; what the rewrite changed does.
    expect(d.agent_first[1]).toContain("tmp_path");
    expect(d.agent_first[1]).not.toContain("import os");
    expect(d.agent_before[1]).toContain("/tmp/meter_out");
    expect(d.agent_first[2]).toContain("quoting=csv.QUOTE_ALL");
    // The corrected action of the second turn names what the rewrite brought in.
    expect(correctedAction(d.agent_before[1], d.agent_first[1])).toContain("tmp_path");
  });

  test("a rule bound in time is a task about that moment, said once or twice alike", () => {
    expect(instructionsOf("don't deploy anything until the 3.1 cutover is done", true)).toEqual([]);
    expect(instructionsOf("leave the billing cron alone this week", true)).toEqual([]);
    expect(followUpOf("hold the merge until the release ships", ["--rebase"])).toBeUndefined();
    expect(instructionsOf("never deploy on fridays", true)).toHaveLength(1);
  });

  test("a change of practice said as a verb: what was given up is avoided, and with what took its place it is a rival pair", () => {
    expect([...polarityOf("we retired webpack last month").avoid]).toContain("webpack");
    expect([...polarityOf("we ditched the mocks, real containers in tests").avoid]).toContain("mock");
    // Giving up an override goes back to the default: it avoids nothing the sentence names.
    expect([...polarityOf("we dropped the tab override, spaces from now on").avoid]).not.toContain("tab");
    expect(contrastPairs("we got rid of poetry. uv handles the lockfile now", {})).toEqual([["uv", "poetry"]]);
    expect(contrastPairs("stopped using moment; it's luxon now", {})).toEqual([["luxon", "moment"]]);
    expect(contrastPairs("we retired webpack last month", {})).toEqual([]);
  });

  test("a rarer plain word of the corrected command joins two sayings; a command's common verbs do not", () => {
    const b = book();
    const TEST = "$ cargo test --workspace · 212 passed";
    observe(
      b,
      [
        session(
          2,
          ["Add the fare cache", "go through our runner, not the builtin harness"],
          ["", TEST],
          ["", "$ cargo nextest run --workspace · ok"],
        ),
        session(
          6,
          ["Fix the surge bug", "the plain output is useless in CI logs, switch it"],
          ["", "$ cargo test -p core · ok"],
          ["", "$ cargo nextest run -p core · ok"],
        ),
      ],
      1,
    );
    expect(plan(b).cards.map((c) => c.n_sessions)).toEqual([2]);
    const c = book();
    observe(
      c,
      [
        session(
          2,
          ["Add the fare cache", "go through our runner, not the builtin harness"],
          ["", TEST],
          ["", "$ cargo check --workspace · ok"],
        ),
        session(
          6,
          ["Fix the surge bug", "the plain output is useless in CI logs, switch it"],
          ["", "$ cargo test -p core · ok"],
          ["", "$ cargo check -p core · ok"],
        ),
      ],
      1,
    );
    expect(plan(c).cards.every((x) => x.n_sessions < 2)).toBe(true);
  });
});

describe("a change announced once replaces the adopted lesson it goes against", () => {
  // Our own sessions: the lesson was learned from two corrections after which the agent set the dev
  // config's log format from json to text; later the user says once, in words that share nothing
  // with the lesson's, that the team moved to json.
  const JSON_CFG = "edit config/dev.yaml: log_format: json";
  const TEXT_CFG = "edit config/dev.yaml: log_format: text";
  const adopt = () => {
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Add request ids to the logs", "plain text log lines in dev please"],
          [JSON_CFG, JSON_CFG],
          [JSON_CFG, TEXT_CFG],
        ),
        session(
          2,
          ["Log the retry count", "keep dev logs as plain text, I read them in a terminal"],
          [JSON_CFG, JSON_CFG],
          [JSON_CFG, TEXT_CFG],
        ),
      ],
      1,
    );
    const first = plan(b);
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    return { b, memory: first.memory };
  };

  test("one saying that takes up what the lesson's corrections moved away from is proposed as its replacement", () => {
    const { b, memory } = adopt();
    observe(
      b,
      [
        session(
          9,
          ["Bump the worker image", "we moved dev logging over to json last sprint"],
          [LATER, LATER],
          [LATER, LATER],
        ),
      ],
      2,
    );
    const next = plan(b, 2, memory);
    expect(next.cards).toHaveLength(1);
    expect(next.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(memory)[0] });
    expect(next.cards[0]!.rule.toLowerCase()).toContain("json");
  });

  test("one saying that agrees with the lesson, or announces nothing, proposes nothing alone", () => {
    const { b, memory } = adopt();
    observe(
      b,
      [
        session(
          9,
          ["Bump the worker image", "we switched every service to text output last sprint"],
          [LATER, LATER],
          [LATER, LATER],
        ),
        session(10, ["Add a healthcheck", "json logs would be nice someday"], [LATER, LATER], [LATER, LATER]),
      ],
      2,
    );
    expect(plan(b, 2, memory).cards).toEqual([]);
  });
});

describe("what a correction changed, read more widely", () => {
  test("two fixes in one namespace (`metrics::counter`, `metrics::gauge`) join sayings that share no word", () => {
    const b = book();
    observe(
      b,
      [
        session(
          1,
          ["Count the failed uploads", "no hand-rolled AtomicU64 counters in handlers please"],
          ["$ cargo check · ok", "edit src/upload.rs: static FAILED: AtomicU64 = AtomicU64::new(0);"],
          ["$ cargo check · ok", 'edit src/upload.rs: metrics::counter!("upload_failed").increment(1);'],
        ),
        session(
          4,
          ["Track the queue depth", "don't keep your own numbers in a Mutex, report them like the rest of the service"],
          ["$ cargo check · ok", "edit src/queue.rs: let depth = Mutex::new(0usize);"],
          ["$ cargo check · ok", 'edit src/queue.rs: metrics::gauge!("queue_depth").set(len as f64);'],
        ),
      ],
      1,
    );
    expect(plan(b).cards.map((c) => c.op)).toEqual(["add"]);
    expect(contrastPairs("samples get loaded with the fixture macro, not next to the source", {}, 0)).toEqual([]);
  });
});

describe("a place named in other words", () => {
  test("a folder the user names and the one the agent moved a file into are one place; a preamble does not hide 'no,'", () => {
    expect(instructionsOf("before you go on: no, sample payloads go under tests/data", true)).toEqual([
      { quote: "sample payloads go under tests/data", kind: "correction" },
    ]);
    const b = book();
    observe(
      b,
      [
        session(
          2,
          ["Add a quote fixture", "wrong folder for that json, we keep them all in one spot for the snapshot tool"],
          ["$ ls backend · src tests", "$ cp /tmp/q.json backend/src/quote.json · ok"],
          ["$ ls backend · src tests", "$ git mv backend/src/quote.json backend/tests/data/quote.json · ok"],
        ),
        session(
          6,
          ["Add a zone fixture", "before you go on: no, sample payloads go under tests/data"],
          ["$ ls backend · src tests", "$ cp /tmp/z.json backend/zone.json · ok"],
          ["$ ls backend · src tests", "$ git mv backend/zone.json backend/tests/data/zone.json · ok"],
        ),
      ],
      1,
    );
    expect(plan(b).cards.map((c) => c.op)).toEqual(["add"]);
  });
});

describe("two corrections of one edited file, each naming it in its own words", () => {
  const EDIT = 'edit config/lint/eslint-baseline.json: "src/api/orders.ts": ["no-explicit-any"]';
  const said = (day: number, words: string) =>
    session(day, ["Fix the lint job", words], ["$ pnpm lint · 12 problems", EDIT], ["$ pnpm lint · 12 problems", ""]);
  test("join ('don't grow the eslint baseline' / 'that json is frozen')", () => {
    const b = book();
    observe(
      b,
      [
        said(1, "don't grow the eslint baseline to get it green"),
        said(5, "no, that json is frozen, it only ever shrinks"),
      ],
      1,
    );
    expect(plan(b).cards.map((c) => c.op)).toEqual(["add"]);
  });
  test("do not join when one of them names something else", () => {
    const b = book();
    observe(b, [said(1, "don't grow the eslint baseline to get it green"), said(5, "no, run the formatter first")], 1);
    expect(plan(b).cards).toEqual([]);
  });
});
