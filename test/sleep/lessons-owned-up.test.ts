import { emptyBook, plannerFor, sessionMaker } from "./support/lesson-sessions.ts";
import { describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { harvest } from "../../src/sleep/harvest/index.ts";
import { ownsUp } from "../../src/sleep/lesson-rule.ts";
import { observe } from "../../src/sleep/lessons.ts";
import { tempDir } from "../support/tmp.ts";
import { writeClaudeSession } from "./support/fake-home.ts";

// Our own sessions. When the agent's first words after a turn own up to a mistake ("You're right,
// …"), the turn corrected it, whatever its words: a remark the reading alone would pass over.
const session = sessionMaker("ou", "claude", "2026-10", "10:00:00.000");
const plan = plannerFor("CLAUDE.md");
const withReplies = (s: ReturnType<typeof session>, replies: string[]) => ({ ...s, agent_reply: replies });

describe("the agent owning up to a mistake marks the turn before as a correction", () => {
  test("apologies, 'you're right' and a redo announced are owning up; a plain acknowledgement is not", () => {
    for (const r of [
      "You're right, that run skipped the race detector.",
      "You’re absolutely right! I should have used the wrapper.",
      "Sorry about that — redoing it with the wrapper.",
      "Good catch.",
      "Right — passing the request context through instead.",
      "Understood — reverting the edit and adding a new migration.",
      "Switching it over.",
    ])
      expect(ownsUp(r)).toBe(true);
    for (const r of [
      "Got it, updating.",
      "Got it.",
      "Noted.",
      "Sure.",
      "Right now the handler returns 500.",
      "I'll look at the handler first.",
      "",
      undefined,
    ])
      expect(ownsUp(r)).toBe(false);
  });

  test("the harvest keeps the agent's first words after each prompt", async () => {
    using tmp = tempDir();
    const home = join(tmp.path, "home");
    const project = join(tmp.path, "work", "svc");
    mkdirSync(project, { recursive: true });
    writeClaudeSession(
      home,
      project,
      {
        id: "0badc0de-1111-4222-8333-000000000001",
        turns: [
          { user: "Add a lookup to the ledger store", tool: "go build ./...", assistant: "Added Store.Lookup." },
          {
            user: "ok it builds. ctx comes first though",
            tool: "go vet ./...",
            assistant: "Right — threading the request ctx through.",
          },
        ],
      },
      Date.parse("2026-10-05T09:00:00Z"),
    );
    const r = await harvest({
      sources: ["claude"],
      scope: "all",
      invokedProject: "",
      locations: { claudeHome: join(home, ".claude") },
    });
    const d = r.digests[0]!;
    expect(d.agent_reply).toEqual(["Added Store.Lookup.", "Right — threading the request ctx through."]);
  });

  // The agent made up a fresh context in a store method in two sessions. In the first the user
  // objected in passing and the agent owned up (its next move went unrecorded); in the second the
  // user stated the rule.
  const EDIT = "edit internal/ledger/store.go: ctx := context.Background()";
  const night = (ownedUp: boolean) => {
    const b = emptyBook();
    observe(
      b,
      [
        withReplies(
          session(
            3,
            ["Add a lookup to the ledger store", "ok tests pass. the ctx argument goes first in these signatures"],
            ["", EDIT],
            ["", ""],
          ),
          ["Added it.", ownedUp ? "Right — threading the request ctx through instead." : "Done."],
        ),
        withReplies(
          session(
            9,
            ["Add a store method for the tariff history", "ctx is always the first parameter, taken from the caller"],
            ["", EDIT],
            ["", ""],
          ),
          ["Added it.", "Done."],
        ),
      ],
      1,
    );
    return b;
  };

  test("a remark the agent owned up to is read, and joins the rule said after the same mistake elsewhere", () => {
    const b = night(true);
    expect(b.observations.filter((o) => o.quote.includes("ctx"))).toHaveLength(2);
    const p = plan(b);
    expect(p.cards).toHaveLength(1);
    expect(new Set(p.cards[0]!.sources.map((s) => s.session_id)).size).toBe(2);
  });

  test("the same remark the agent did not own up to stays unread, and one saying is no lesson", () => {
    const b = night(false);
    expect(b.observations.filter((o) => o.quote.includes("ctx")).map((o) => o.quote)).toEqual([
      "ctx is always the first parameter, taken from the caller",
    ]);
    expect(plan(b).cards).toHaveLength(0);
  });
});
