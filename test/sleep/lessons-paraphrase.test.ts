import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isCredentialShaped, maskCredentials } from "../../src/lib/index.ts";
import { harvest } from "../../src/sleep/harvest/index.ts";
import { getRules, setLearned } from "../../src/sleep/learned-block.ts";
import {
  announcedChange,
  idfWeights,
  instructionsOf,
  lessonTokens,
  notARule,
  opposite,
  polarityOf,
  swapChange,
} from "../../src/sleep/lesson-rule.ts";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";
import { runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { hashTree, writeClaudeSession } from "./support/fake-home.ts";

forgetLearnedTopicsAfterEach();

// Our own sentences, in the shapes people correct an agent with: the same wish said in different
// words in different sessions, embedded in longer turns, next to task requests that mention tools.
const SAYINGS = {
  pnpm: [
    "hm, we're a pnpm shop, so no npm commands in this repo.",
    "pnpm please",
    "again, running npm i wrecks pnpm-lock.yaml. use pnpm add for new packages",
  ],
  uv: [
    "use uv, not pip",
    "Don't pip install anything; dependencies are managed by uv.",
    "Looks fine. Add it through uv add and sync, pip isn't how we do things here.",
  ],
  exports: [
    "Named exports only.",
    "no default exports pls",
    "switch that to a named export like the rest of the codebase",
  ],
  lint: ["you forgot make lint again", "always finish with make lint before telling me it's done"],
  ruff: ["format with ruff, not black", "black is not our formatter, ruff format is."],
  tables: [
    "use a table test like the others",
    "please follow the table-driven pattern with t.Run subtests",
    "Tests in this package are table-driven; rewrite it that way.",
  ],
};
const TASKS = [
  "Refactor the logger to use consola",
  "review PR #41 and leave comments",
  "use the staging DB for now",
  "Please use the new retry helper in fetchUser for this change",
  "Add a --dry-run flag to the deploy script, it should use the same config loader",
];

const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[], agent?: string[]) => ({
  session_id: `s${++n}`,
  source: "claude",
  ended_at: `2026-11-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  user_prompts: prompts,
  ...(agent ? { agent_before: agent } : {}),
});
const openers = [
  "Implement the CSV export",
  "Fix the flaky upload test",
  "Wire the billing webhook",
  "Speed up the build",
];

describe("context detection", () => {
  test("short follow-ups, 'again', 'X please', 'X only', 'no X' and bare preferences are rules", () => {
    for (const s of [
      "pnpm please",
      "Named exports only.",
      "no default exports pls",
      "you forgot make lint again",
      "format with ruff, not black",
      "use uv, not pip",
    ])
      expect(instructionsOf(s, true).length).toBe(1);
  });
  test("opening requests and sentences about this PR, a number or 'for now' are task requests", () => {
    for (const t of TASKS) expect(instructionsOf(t, true)).toEqual([]);
    expect(instructionsOf("use pnpm, not npm", false)).toEqual([]);
    expect(instructionsOf("Always use pnpm, never npm.", false)).toHaveLength(1);
  });
  test("a bare term right after the agent used its rival is a correction, and the agent's action is the evidence", () => {
    expect(instructionsOf("yarn", true)).toEqual([{ quote: "yarn", kind: "preference" }]);
    expect(instructionsOf("yarn", true, { agentBefore: "I ran `npm install lodash`." })[0]?.kind).toBe("correction");
  });
  test("the tokenizer keeps apostrophes, file names and #refs, drops 'it' and 'pls'", () => {
    const t = lessonTokens("Don't touch it in api.ts for #41 pls, it's fine");
    expect([...t]).toEqual(["touch", "api.ts", "#41", "fine"]);
    expect(lessonTokens("exports tests")).toEqual(new Set(["export", "test"]));
  });
});

describe("clustering paraphrases", () => {
  test("each recurring wish said in different words in different sessions becomes one lesson; task requests never do", () => {
    const b = book();
    const digests = Object.values(SAYINGS).flatMap((sayings, k) =>
      sayings.map((s, i) => session(1 + i * 3 + k, [openers[(i + k) % openers.length]!, `ok. ${s}`])),
    );
    digests.push(...TASKS.map((t, i) => session(20 + i, [openers[i % openers.length]!, t])));
    observe(b, digests, 1);
    const plan = planLessons(b, 1, "", { target: "CLAUDE.md", retireAfterNights: 0 });
    const rules = plan.cards.map((c) => c.rule.toLowerCase());
    expect(plan.cards.every((c) => c.op === "add")).toBe(true);
    const found = Object.keys(SAYINGS).filter((k) =>
      plan.cards.some(
        (c) =>
          c.rule.toLowerCase().includes(k.slice(0, 4)) ||
          c.sources.some((s) => s.quote.toLowerCase().includes(k.slice(0, 4))),
      ),
    );
    expect(found.length).toBe(Object.keys(SAYINGS).length);
    expect(plan.cards.length).toBe(Object.keys(SAYINGS).length);
    for (const r of rules)
      for (const t of ["consola", "#41", "staging db", "retry helper", "dry-run"]) expect(r).not.toContain(t);
  });
  test("a one-off said once never becomes a lesson, even next to recurring ones", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Fix the parser", "use uv, not pip", "always log the request id in the payment handler"]),
        session(2, ["Add a cache", "Don't pip install anything; dependencies are managed by uv."]),
      ],
      1,
    );
    const plan = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(1);
    expect(plan.cards[0]!.rule.toLowerCase()).toContain("uv");
  });
});

describe("flips by topic", () => {
  test("'use tabs' adopted, then 'we switched to spaces now' said twice in other words proposes a replacement", () => {
    expect(opposite(polarityOf("Use tabs"), polarityOf("we switched to spaces now"))).toBe(true);
    expect(opposite(polarityOf("indent with tabs please"), polarityOf("tabs are history, 4-space indent now"))).toBe(
      true,
    );
    expect(
      opposite(polarityOf("we use pnpm here, not npm"), polarityOf("again, npm i breaks the lockfile, use pnpm")),
    ).toBe(false);
    const b = book();
    observe(
      b,
      [
        session(1, ["Fix the lint job", "Use tabs for indentation."]),
        session(2, ["Add the endpoint", "indent with tabs please"]),
      ],
      1,
    );
    const first = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    const adopted = first.memory;
    observe(
      b,
      [
        session(10, ["Rename the module", "we switched to spaces now"]),
        session(11, ["Port the script", "two spaces for indentation from now on, no more tab characters"]),
      ],
      2,
    );
    const second = planLessons(b, 2, adopted, { target: "t", retireAfterNights: 0 });
    expect(second.cards).toHaveLength(1);
    expect(second.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(adopted)[0] });
    expect(second.cards[0]!.rule.toLowerCase()).toContain("space");
  });
});

describe("flips of a number", () => {
  test("a line length said with its number: 88 adopted, then 120 said twice in other words replaces it", () => {
    const old = polarityOf("keep it under 88 chars, that's what the linters expect");
    const bumped = polarityOf("we bumped the line-length to 120, stop wrapping everything at 88");
    expect([...old.prefer]).toContain("len:88");
    expect([...bumped.prefer]).toContain("len:120");
    expect([...bumped.avoid]).toContain("len:88");
    expect(opposite(old, bumped)).toBe(true);
    // A number with no line, character, column or limit word is no term.
    expect([...lessonTokens("retry it 3 times, then wait 120 seconds")]).not.toContain("len:120");
    const b = book();
    observe(
      b,
      [
        session(1, ["Fix the lint job", "keep it under 88 chars, that's what the linters expect"]),
        session(2, ["Add the endpoint", "lines stay at 88 columns please"]),
      ],
      1,
    );
    const first = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    observe(
      b,
      [
        session(10, ["Rename the module", "we bumped the line-length to 120, stop wrapping everything at 88"]),
        session(12, ["Port the script", "that wrapping isn't needed anymore, the limit is 120 now"]),
      ],
      2,
    );
    const second = planLessons(b, 2, first.memory, { target: "t", retireAfterNights: 0 });
    expect(second.cards).toHaveLength(1);
    expect(second.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(first.memory)[0] });
    expect(second.cards[0]!.rule).toContain("120");
  });
});

describe("secrets", () => {
  const PASSWORD = "For the local postgres the password is pgL0cal-2024, use that.";
  test("a sentence holding a credential is never a rule, even said twice; its value never reaches the book", () => {
    expect(isCredentialShaped(PASSWORD)).toBe(true);
    expect(isCredentialShaped("the password is stored in the vault, never in code")).toBe(false);
    expect(isCredentialShaped("connect with postgres://app:s3cretPw@localhost/app")).toBe(true);
    expect(maskCredentials(PASSWORD)).not.toContain("pgL0cal-2024");
    // A user, then its password, in words ("log in as … with …").
    const login = "also log in as ops@shop.test with Crate!3318kq to check the dashboard";
    expect(isCredentialShaped(login)).toBe(true);
    expect(maskCredentials(login)).toBe("also log in as ops@shop.test with [REDACTED] to check the dashboard");
    expect(isCredentialShaped("sign in with ops using hunter2-x9")).toBe(true);
    expect(isCredentialShaped("log in as the admin with the usual flow")).toBe(false);
    expect(isCredentialShaped("log in with github to see the dashboard")).toBe(false);
    const b = book();
    const r = observe(
      b,
      [session(1, ["Set up the db", PASSWORD]), session(2, ["Seed the db", `again: ${PASSWORD}`])],
      1,
    );
    expect(r.credentialSentences).toBe(2);
    const plan = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(plan.cards).toEqual([]);
    expect(JSON.stringify(b)).not.toContain("pgL0cal-2024");
  });
});

describe("secrets said another way, and echoed by the agent", () => {
  test("'set X_PASSWORD to …' and a noun right before its value are credentials; prose and flags are not", () => {
    const said = "set BILLING_DB_PASSWORD to wQ7!rr09-Lx in your shell before the server starts";
    expect(isCredentialShaped(said)).toBe(true);
    expect(maskCredentials(said)).toBe("set BILLING_DB_PASSWORD to [REDACTED] in your shell before the server starts");
    expect(maskCredentials("upload the build, the signing pw tgh-ppqe-mmv2-kkc")).toBe(
      "upload the build, the signing pw [REDACTED]",
    );
    // The noun first, then how it changed: "the staging db password got rotated to …".
    expect(maskCredentials("the replica password got rotated to Hq4-zzkw!81, update the vault entry")).toBe(
      "the replica password got rotated to [REDACTED], update the vault entry",
    );
    // The value before its noun: "use the same … password".
    expect(maskCredentials("for the read replica use the same Tr9x-qqpl!04 password")).toBe(
      "for the read replica use the same [REDACTED] password",
    );
    for (const prose of [
      "set the log level to debug",
      "the token was reset to the default",
      "rotate the deploy-key-2 secret",
      "the oauth2-client secret goes in the vault",
      "use the github-actions token for that",
      "reset your password to something stronger",
      "pass --password-stdin to docker login",
      "the token handling lives in auth/token_store.py",
    ])
      expect(isCredentialShaped(prose)).toBe(false);
  });

  test("a value the user said is taken out of the agent's command that echoes it (harvest, end to end)", async () => {
    using tmp = tempDir("skillopt-echo-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "work", "app");
    mkdirSync(project, { recursive: true });
    const secret = "tgh-ppqe-mmv2-kkc";
    writeClaudeSession(
      home,
      project,
      {
        id: "echo-1",
        turns: [
          { user: "Ship the beta build", assistant: "Building.", tool: "xcodebuild -scheme App archive" },
          {
            user: `the app-specific password for the upload is ${secret}, use it with altool`,
            assistant: "Uploading with those credentials.",
            tool: `xcrun altool --upload-app -f App.ipa -u ci@example.test -p '${secret}'`,
          },
          { user: "thanks, that's it", assistant: `Done; I used -p ${secret} as asked.` },
        ],
      },
      Date.parse("2026-11-20T10:00:00.000Z"),
    );
    const r = await harvest({
      sources: ["claude"],
      scope: "all",
      invokedProject: "",
      locations: { claudeHome: join(home, ".claude") },
    });
    const text = JSON.stringify(r.digests);
    expect(text).toContain("altool");
    expect(text).not.toContain(secret);
  });
});

describe("a night with nothing new", () => {
  test("clusters only new observations; an unchanged book does no clustering", () => {
    const b = book();
    observe(b, [session(1, ["x", "use uv, not pip"]), session(2, ["y", "no pip, uv only"])], 1);
    expect(planLessons(b, 1, "", { target: "t", retireAfterNights: 0 }).cards).toHaveLength(1);
    const ids = b.observations.map((o) => o.cluster);
    expect(ids.every((i) => i !== undefined)).toBe(true);
    const noop = planLessons(b, 2, setLearned("", []), { target: "t", retireAfterNights: 0 });
    expect(noop.cards).toEqual([]);
    expect(b.observations.map((o) => o.cluster)).toEqual(ids);
  });
});

describe("a password sentence is never staged (review, end to end)", () => {
  test("said in two sessions beside a recurring rule: the rule is staged; the password is in no staged file, report, evidence or lesson store", async () => {
    using tmp = tempDir("sleep-secret-sentence-");
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "work", "app");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "CLAUDE.md"), "# App\n");
    const pw = "For the local postgres the password is pgL0cal-2024, use that.";
    const start = Date.parse("2026-11-24T09:00:00Z");
    const sessions = [
      ["Set up the local database for the orders service", pw, "use uv, not pip"],
      ["Seed the orders table", `again, ${pw}`, "Don't pip install anything; dependencies are managed by uv."],
    ];
    sessions.forEach((prompts, i) => {
      const turns = prompts.map((user) => ({ user, assistant: "Done." }));
      writeClaudeSession(
        home,
        project,
        { id: `7e551000-aaaa-4bbb-8ccc-00000000000${i}`, turns },
        start + i * 86_400_000,
      );
    });
    const stateDir = join(home, ".skillopt-sleep");
    const env = { HOME: home, SKILLOPT_SLEEP_STATE_DIR: stateDir };
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
      { env, cwd: project },
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    const report = JSON.parse(readFileSync(join(out.staging_dir, "report.json"), "utf8"));
    expect(report.lessons).toHaveLength(1);
    expect(report.lessons[0].rule.toLowerCase()).toContain("uv");
    expect(report.notes.join("\n")).toContain("secret-guard: 2 sentence(s) holding something credential-shaped");
    const files = [...hashTree([join(project, ".skillopt-sleep"), stateDir]).keys()];
    expect(files.some((f) => f.endsWith("evidence.jsonl"))).toBe(true);
    for (const f of files) expect([f, readFileSync(f).includes("pgL0cal-2024")]).toEqual([f, false]);
    expect(r.stdout + r.stderr).not.toContain("pgL0cal-2024");
  });
});

describe("small readings of a saying", () => {
  test("an empty {} named in prose is not code; a turn's preamble is not part of the rule's quote", () => {
    expect(instructionsOf("pino from now on, register the logger in the app's plugins {} block.", true)).toEqual([
      { quote: "pino from now on, register the logger in the app's plugins {} block.", kind: "preference" },
    ]);
    expect(instructionsOf("const cfg = { retries: 3 }", true)).toEqual([]);
    expect(instructionsOf("nit: we dropped lodash. native array methods are fine", true)[0]?.quote).toBe(
      "we dropped lodash.",
    );
  });

  test("'keep X free of Y' avoids Y and prefers no X (a place, not a choice)", () => {
    const p = polarityOf("keep the route handlers free of SQL please");
    expect([...p.avoid]).toContain("sql");
    expect(p.prefer.has("handler")).toBe(false);
    expect(opposite(p, polarityOf("queries belong in the repository layer, not in handlers"))).toBe(false);
  });

  test("an approval in other words is no rule, whoever read it (a model's rule quoting it is left out)", () => {
    for (const q of ["looks mostly right.", "seems fine", "looks basically ok"]) {
      expect(instructionsOf(q, true)).toEqual([]);
      expect(notARule(q, [`${q} ship it`])).toBe(true);
    }
    expect(notARule("looks wrong, use pnpm not npm", ["looks wrong, use pnpm not npm"])).toBe(false);
  });

  test("a word that names a property of every object ('constructor', '__proto__') is counted like any other", () => {
    const b = book();
    observe(
      b,
      [
        session(1, [
          "Add the booking service",
          "no need to write that constructor yourself, inject it with the annotation",
        ]),
        session(2, ["Add the fee service", "again a hand-written constructor; the annotation generates it"]),
        session(3, ["Fix the parser", "the __proto__ key in that payload is an attack, drop it"]),
      ],
      1,
    );
    // Counts are numbers of the book's own, and no prototype was touched.
    expect(b.df!["constructor"] as unknown).toBe(2);
    expect(typeof b.df!.__proto__).toBe("number");
    expect(JSON.parse(JSON.stringify(b.df)).constructor).toBe(2);
    // A book read from disk is a plain object: its weights never read the prototype.
    const w = idfWeights(JSON.parse('{"annotation": 2}') as Record<string, number>, 60);
    expect(Number.isFinite(w.weight("constructor"))).toBe(true);
    expect(w.weight("constructor")).toBe(w.weight("never-seen-term"));
    expect(w.distinctive("tostring")).toBe(true);
  });

  test("'continue please' is chatter; 'no need to write X yourself' asks for what writes it; a bare naming of code terms wants them", () => {
    expect(instructionsOf("continue please", true)).toEqual([]);
    expect(instructionsOf("ok, carry on pls", true)).toEqual([]);
    expect(instructionsOf("no need to hand-roll the mapper yourself, mapstruct does that", true)).toHaveLength(1);
    expect(instructionsOf("no need to rush", true)).toEqual([]);
    expect([...polarityOf("@Data + @Builder").prefer].sort()).toEqual(["@builder", "@data"]);
    expect([...polarityOf("not @Data").prefer]).toEqual([]);
  });

  test("'why are you …' challenges what the agent did; 'why did that test …' asks about the code", () => {
    expect(instructionsOf("why are you string-building inside the logger call", true)).toHaveLength(1);
    expect(instructionsOf("hm, why did you pull in lodash for that?", true)).toHaveLength(1);
    expect(instructionsOf("why did that test get slower?", true)).toEqual([]);
    expect(instructionsOf("why is the build red", true)).toEqual([]);
  });

  test("two words for one choice of the lexicon are never rivals", () => {
    expect(
      opposite(
        polarityOf("inject it with Hilt like the others"),
        polarityOf("wire that through the dagger module pls"),
      ),
    ).toBe(false);
    expect(opposite(polarityOf("inject it with Hilt like the others"), polarityOf("koin modules now"))).toBe(true);
  });
});

describe("a cluster never holds both sides of a flip", () => {
  test("a saying linked to both sides does not merge them, and the card quotes the new side only", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Add the rollup job", "keep it under 100 chars, that's what the linters expect"]),
        session(2, ["Fix the importer", "we stick to the 100 default"]),
        session(6, ["Port the billing client", "we bumped the line-length to 140, stop splitting everything at 100"]),
        session(8, [
          "Write the ingest doc",
          "don't hard-wrap the markdown at 72 cols, diffs get noisy",
          "that wrapping isn't needed anymore, the limit is 140 since the pyproject change",
        ]),
      ],
      1,
    );
    const plan = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(1);
    expect(plan.cards[0]!.rule).toContain("140");
    const quotes = plan.cards[0]!.sources.map((s) => s.quote).join(" | ");
    expect(quotes).not.toContain("under 100");
    expect(quotes).not.toContain("72 cols");
  });

  test("a setting kept on, then said to be switched off, is a flip: the switched-off side replaces it", () => {
    // Our sentences: a setting wanted on in two sessions, then turned off and said so twice.
    expect([...polarityOf('keep "noImplicitAny": true, the build relies on it').prefer]).toContain("noimplicitany");
    expect([...polarityOf("noImplicitAny stays on. add the types").prefer]).toContain("noimplicitany");
    expect([...polarityOf("we switched off the noImplicitAny setting for the port").avoid]).toContain("noimplicitany");
    expect(instructionsOf("looks ok. we disabled noImplicitAny for the port, leave it that way", true)).toHaveLength(1);
    expect(instructionsOf("noImplicitAny is false on purpose now, dont flip it back", true)).toHaveLength(1);
    const b = book();
    observe(
      b,
      [
        session(1, ["Port the date helpers", 'keep "noImplicitAny": true, the build relies on it']),
        session(2, ["Add the csv export", "noImplicitAny stays on. add the types"]),
        // The rest of two weeks' work: the setting's name is rare among the prompts.
        ...[
          "Add pagination to the orders endpoint",
          "Wire the billing webhook",
          "Speed up the docker build",
          "Write the migration for the invoices table",
          "Add a retry around the S3 client",
          "Move the feature flags into config",
          "Port the cron job to the worker",
          "Add metrics to the checkout flow",
          "Fix the timezone bug in reports",
          "Split the dashboard component",
        ].map((t, i) => session(3 + i, [t, "thanks, looks good"])),
      ],
      1,
    );
    const first = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    observe(
      b,
      [
        session(10, [
          "Wire the legacy widgets",
          "looks ok. we switched off the noImplicitAny setting for the port, leave it that way",
        ]),
        session(11, ["Fix the tooltip", "noImplicitAny is false on purpose now, dont flip it back"]),
      ],
      2,
    );
    const second = planLessons(b, 2, first.memory, { target: "t", retireAfterNights: 0 });
    expect(second.cards).toHaveLength(1);
    expect(second.cards[0]).toMatchObject({ op: "replace", previous_rule: getRules(first.memory)[0] });
    const quotes = second.cards[0]!.sources.map((q) => q.quote).join(" | ");
    expect(quotes).toContain("switched off");
    expect(quotes).not.toContain("stays on");
  });

  test("'swap X for Y' of what an adopted lesson asks for replaces it; dotted names stay whole", () => {
    expect([...polarityOf("swap the requests.get for the shared session helper").avoid]).toEqual(["requests.get"]);
    expect([...polarityOf("calls go through the ky instance in lib/http.ts").prefer]).toContain("ky");
    expect(swapChange("replace the ky.get with the new fetcher module")).toEqual({
      off: new Set(["ky.get"]),
      up: new Set(["new", "fetcher", "module"]),
    });
    // A change dated "as of this week" is standing, not bound to the week.
    expect(instructionsOf("ky is gone as of this week, use the fetcher from now on", true)).toHaveLength(1);
    const b = book();
    const fillers = [
      "Add pagination to the orders endpoint",
      "Speed up the docker build",
      "Write the migration for the invoices table",
      "Move the feature flags into config",
      "Fix the timezone bug in reports",
      "Split the dashboard component",
    ].map((t, i) => session(3 + i, [t, "thanks, looks good"]));
    observe(
      b,
      [
        session(1, ["List the berths", "use the ky instance in lib/http.ts for calls, it adds the auth header"]),
        session(2, ["Show the invoices", "always the ky instance from lib/http.ts please"]),
        ...fillers,
      ],
      1,
    );
    const first = planLessons(b, 1, "", { target: "t", retireAfterNights: 0 });
    expect(first.cards.map((c) => c.op)).toEqual(["add"]);
    observe(b, [session(20, ["Load the bookings", "swap the ky instance for the new fetcher module"])], 2);
    const second = planLessons(b, 2, first.memory, { target: "t", retireAfterNights: 0 });
    expect(second.cards.map((c) => c.op)).toEqual(["replace"]);
    expect(second.cards[0]!.sources.map((q) => q.quote).join(" | ")).toContain("new fetcher");
  });

  test("giving a practice up for a named one is a rule; a state said to hold now, a task opened in passing or bound to a passing state are not", () => {
    expect(instructionsOf("drop the colour console handler, json everywhere now", true)).toHaveLength(1);
    expect(instructionsOf("ok the build is green now, drop the debug prints", true)).toEqual([]);
    // Other ways of saying a practice is given up: what is given up, nothing around it.
    const off = (t: string) => [...(announcedChange(t)?.off ?? [])];
    expect(off("we're off moment.js now, luxon all the way")).toEqual(["moment.js", "moment"]);
    expect(off("we are ripping enzyme out of the test setup this sprint")).toEqual(["enzyme"]);
    expect(off("the old retry helper is going away")).toEqual(["old", "retry", "helper"]);
    expect(announcedChange("take the lock out of the loop")).toBeUndefined();
    // A task opened in passing, or bound to a state that will end, is not a rule.
    expect(instructionsOf("unrelated, but apply only the cache module here", true)).toEqual([]);
    expect(instructionsOf("use the blue cluster here, the green one is mid-migration", true)).toEqual([]);
    expect(instructionsOf("base this one on the 3.1 branch instead of main, it's a backport", true)).toEqual([]);
    expect(instructionsOf("different topic, always run terraform fmt before committing", true)).toHaveLength(1);
  });
});
