import { describe, expect, test } from "bun:test";
import { instructionsOf } from "../../src/sleep/lesson-rule.ts";

// Our own sentences. The name of the file the agent just edited says what the file is for: a turn
// in that concern right after the edit reacts to it, even when it is worded like a task.
describe("an edit belongs to the family its file's name states", () => {
  const turn = "fix the warning properly or add a narrow suppression with a reason\n\nthen rerun the build";
  test("right after an edit of a lint baseline, a turn about suppressing is a correction of it", () => {
    const found = instructionsOf(turn, true, {
      agentBefore: 'edit web/config/lint-baseline.json: "no-unused-vars": 3',
    });
    expect(found).toEqual([
      { quote: "fix the warning properly or add a narrow suppression with a reason", kind: "correction" },
    ]);
  });
  test("the same words after an edit of an ordinary source file are a task", () => {
    expect(instructionsOf(turn, true, { agentBefore: "edit web/src/cart.ts: const total = sum(items)" })).toEqual([]);
  });
  test("a task outside the file's concern stays a task", () => {
    const after = { agentBefore: 'edit web/config/lint-baseline.json: "no-unused-vars": 3' };
    expect(instructionsOf("add a retry to the upload client", true, after)).toEqual([]);
  });
});
