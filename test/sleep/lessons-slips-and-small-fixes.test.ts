import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { afterEach, describe, expect, test } from "bun:test";
import { familiesOf } from "../../src/sleep/lesson-family.ts";
import { correctedAction } from "../../src/sleep/lesson-learned.ts";
import {
  asSaid,
  followUpOf,
  instructionsOf,
  lessonTokens,
  polarityOf,
  respell,
  setSpelling,
} from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";

// Our own sessions. People type fast at an agent: letters swapped, a key hit twice, a short form
// ("fmt"). And when the agent fixes what it just wrote, the fix may be tiny: one short argument
// added to the line it had written.
const session = sessionMaker("sl", "claude", "2026-10", "09:30:00.000");
const plan = plannerFor("CLAUDE.md");
afterEach(() => setSpelling(undefined));

describe("slips of the keyboard", () => {
  test("a word typed once that is a swap or a doubled key away from a word typed often is read as that word", () => {
    // Prompt counts as the book keeps them (light stems): "pandas" in four prompts, "grouping" and "finished" in three.
    setSpelling({ panda: 4, group: 3, pnada: 1, done: 3 });
    expect(lessonTokens("no pnadas in the export jobs")).toContain("panda");
    expect(lessonTokens("gruop it in polars")).toContain("group");
    expect(respell("we awlays rebase, and the C# part is fiinshed")).toBe(
      "we always rebase, and the C# part is finished",
    );
    // Identifiers, paths and words with capitals inside are left as typed.
    expect(respell("ToListAsync and jobs/pnadas.py stay, so does hb_pnadas")).toBe(
      "ToListAsync and jobs/pnadas.py stay, so does hb_pnadas",
    );
    // The quote is the user's own spelling.
    expect(asSaid("we always group in polars", "ok. we awlays group in polars!")).toBe("we awlays group in polars");
    // With no counts, nothing is a slip.
    setSpelling(undefined);
    expect(lessonTokens("no pnadas")).toContain("pnada");
  });

  test("a word the user types often is never read as another one", () => {
    setSpelling({ trial: 3, trail: 5 });
    expect(lessonTokens("log the trial run")).toContain("trial");
  });

  test("a rule's shape is read through its slips, and quoted as typed", () => {
    const b = emptyBook();
    observe(
      b,
      [
        session(
          9,
          ["Speed up the mileage job", "awlays group in polars, the frame never leaves it"],
          ["", "edit jobs/mileage.py: frame = rows.to_pandas()"],
          ["", "edit jobs/mileage.py: frame = rows.group_by('carer')"],
        ),
      ],
      1,
    );
    const said = b.observations.find((o) => o.quote.includes("polars"));
    expect(said?.quote).toBe("awlays group in polars, the frame never leaves it");
    expect(said?.kind).not.toBe("reaction");
  });
});

describe("a check made the condition of calling work done, in more of its shapes", () => {
  test("'X first, then tell me it's ready' and 'run X before you say it's ready' are rules", () => {
    const AFTER_PUSH = { agentBefore: "$ git push origin feat/x · ok" };
    for (const s of [
      "typecheck first and then report it finished",
      "run the formatter before you say it's ready",
      "fmt check first, then tell me it's ready",
    ])
      expect(instructionsOf(s, true, AFTER_PUSH).map((i) => i.quote)).toEqual([s]);
    // "fmt" is the short form of "format".
    expect(lessonTokens("fmt check")).toContain("format");
  });
  test("'it has to be clean / green before you call it finished' is a rule; a deadline is not", () => {
    const AFTER_PUSH = { agentBefore: "$ git push origin feat/x · ok" };
    for (const s of [
      "the worker has to be pyright clean before you call it finished",
      "keep it green before you tell me it's done",
    ])
      expect(instructionsOf(s, true, AFTER_PUSH).map((i) => i.quote)).toEqual([s]);
    expect(instructionsOf("ship the exporter before friday", true, AFTER_PUSH)).toEqual([]);
  });
});

describe("a short argument added by a small rewrite of the agent's own line", () => {
  const SAVE = "edit src/orders/Handler.cs: await db.SaveChangesAsync();";
  const SAVE_CT = "edit src/orders/Handler.cs: await db.SaveChangesAsync(ct);";
  const LIST = "edit src/billing/Invoices.cs: var rows = await db.Invoices.ToListAsync();";
  const LIST_CT = "edit src/billing/Invoices.cs: var rows = await db.Invoices.ToListAsync(ct);";

  test("is what the correction changed, however short", () => {
    expect(correctedAction(SAVE, SAVE_CT)).toEqual(["+ct"]);
    // In a larger rewrite a short word is noise.
    expect(correctedAction(SAVE, "edit src/orders/Handler.cs: if (ok) await tx.CommitAsync(ct);")).not.toContain("+ct");
  });

  test("two corrections after which the agent added the same short argument are one lesson", () => {
    const b = emptyBook();
    observe(
      b,
      [
        session(3, ["Save the order notes", "you dropped the token on that save again"], ["", SAVE], ["", SAVE_CT]),
        session(
          8,
          ["List the open invoices", "that query still runs after the caller gave up, you forgot it again"],
          ["", LIST],
          ["", LIST_CT],
        ),
      ],
      1,
    );
    const cards = plan(b).cards;
    expect(cards).toHaveLength(1);
    expect(new Set(cards[0]!.sources.map((s) => s.session_id)).size).toBe(2);
  });
});

describe("a preamble and a challenge of what the agent just wrote", () => {
  test("a rule after a preamble ('before I forget:') is read as it would be without it", () => {
    const JEST_U = { agentBefore: "$ npx jest -u src/chip.test.tsx · 3 snapshots written" };
    expect(instructionsOf("before I forget: don't update the snapshots just to get green", true, JEST_U)).toEqual([
      { quote: "don't update the snapshots just to get green", kind: "correction" },
    ]);
  });

  test("'why is there X' naming what the agent's action just used corrects it; about anything else it only asks", () => {
    const NO_VERIFY = { agentBefore: "$ git commit --no-verify -m wip · [feat/x 1a2b3c] wip" };
    expect(
      instructionsOf("why is there a --no-verify in your last commit", true, NO_VERIFY).map((i) => i.kind),
    ).toEqual(["correction"]);
    expect(
      instructionsOf("looks fine but why is there an `import lodash` in utils.ts now", true, {
        agentBefore: "edit src/utils.ts: import lodash from 'lodash'",
      }).map((i) => i.kind),
    ).toEqual(["correction"]);
    expect(instructionsOf("why is there a 500 on the health page?", true, NO_VERIFY)).toEqual([]);
  });
});

describe("an ellipsis trails off inside one thought", () => {
  test("'how many times... X' is one rule, quoted whole", () => {
    const NPM = { agentBefore: "$ npm install zod · added 1 package" };
    expect(instructionsOf("how many times... pnpm in this repo", true, NPM).map((i) => i.quote)).toEqual([
      "how many times... pnpm in this repo",
    ]);
  });
});

describe("'only' before a verb limits the verb", () => {
  test("'the import test only fails on CI' wants no test; 'pnpm only' still wants pnpm", () => {
    expect([...polarityOf("the import test only fails on CI").prefer]).toEqual([]);
    expect([...polarityOf("the cache only worked once").prefer]).toEqual([]);
    expect([...polarityOf("pnpm only, thanks").prefer]).toEqual(["pnpm"]);
    expect([...polarityOf("named exports only").prefer]).toContain("export");
  });
});

describe("a review's approval around a correction is no part of it", () => {
  test("'looks good but X' reads X", () => {
    const EXPORT = { agentBefore: "edit src/quote.ts: export default function quote() {" };
    expect(instructionsOf("looks good but no default exports", true, EXPORT).map((i) => i.quote)).toEqual([
      "no default exports",
    ]);
  });

  test("a follow-up is quoted without its opening ('looked at the diff.') and its closing approval", () => {
    expect(
      followUpOf("looked at the diff. the retries go through the backoff helper in lib/. otherwise looks good", [
        "lib/backoff.ts",
      ]),
    ).toBe("the retries go through the backoff helper in lib/");
  });
});

describe("a rule said right before the agent redid its action is a correction", () => {
  test("'reword it pls: …', then the same commit amended", () => {
    const b = emptyBook();
    observe(
      b,
      [
        session(
          4,
          ["Commit the quote endpoint", "reword it pls: area, colon, lowercase summary"],
          ["", '$ git commit -m "Add quote endpoint"'],
          ["", '$ git commit --amend -m "api: add quote endpoint"'],
        ),
      ],
      1,
    );
    expect(b.observations.map((o) => [o.quote, o.kind])).toEqual([
      ["reword it pls: area, colon, lowercase summary", "correction"],
    ]);
  });
});

describe("the format of a message is no code formatting", () => {
  test("'the message format is off' is not of the formatting family; 'run the formatter' is", () => {
    expect([...familiesOf("the message format is off again, look at git log")]).not.toContain("format");
    expect([...familiesOf("run the formatter before you push")]).toContain("format");
  });
});
