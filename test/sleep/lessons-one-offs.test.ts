import { describe, expect, test } from "bun:test";
import { instructionsOf, reactionOf } from "../../src/sleep/lesson-rule.ts";

// Our own sentences: task requests that sound like rules, beside the standing rules they resemble.
const BEFORE = "$ gh pr view 412 · Opened PR #412.";

describe("one-offs that sound like rules stay tasks", () => {
  test("where to base this one fix is about that fix; a branch dated like a release is a moment", () => {
    expect(
      instructionsOf("Rebase this patch onto release/2025.11 and not main, it's going out as a hotfix", true),
    ).toEqual([]);
    expect(instructionsOf("base this change on the 2025.11 branch, not main", true)).toEqual([]);
    expect(instructionsOf("we always branch off main, never off a release branch", true)).toHaveLength(1);
  });

  test("how to do a PR's task, said right after it and pointing back at it, is part of that task", () => {
    const turn = "look at PR #412 and leave a review. Suggestions only, don't commit anything on it.";
    expect(instructionsOf(turn, true, { agentBefore: BEFORE })).toEqual([]);
    // A practice said after the task, about no "it", is still read.
    const practice = instructionsOf("look at PR #412 and leave a review. we squash-merge everything, always", true);
    expect(practice.map((i) => i.quote)).toEqual(["we squash-merge everything, always"]);
  });

  test("work put off to a quarter is about that moment", () => {
    expect(instructionsOf("don't touch the cache layer, that's Q2 work", true)).toEqual([]);
    expect(reactionOf("leave the retry TODO alone, that's Q2 work", BEFORE)).toBeUndefined();
    expect(instructionsOf("no schema changes this quarter", true)).toEqual([]);
  });
});
