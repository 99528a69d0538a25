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

  test("a request on the next line is not quoted with the reaction before it", () => {
    const turn =
      "the retry goes through the shared helper\n\nuse v3 of the search endpoint here, the web app already calls it";
    expect(reactionOf(turn, BEFORE, true)).toBe("the retry goes through the shared helper");
    expect(reactionOf("keep the token on every query\nalso bump the app to 2.1.0 for the store", BEFORE, true)).toBe(
      "keep the token on every query",
    );
  });

  test("halting one step and sending the agent back to the task is this moment's order of work", () => {
    const RUN = "$ npm run e2e · booting the stack";
    const halt = "no wait, don't run the e2e suite, it boots the whole stack. just keep going with the form";
    expect(instructionsOf(halt, true, { agentBefore: RUN })).toEqual([]);
    expect(reactionOf(halt, RUN)).toBeUndefined();
    expect(reactionOf("stop, that build takes ages. continue with the refactor first", RUN)).toBeUndefined();
    // The same words with no return to the task, or a standing rule said in the halt, are still read.
    expect(
      instructionsOf("no wait, don't run the e2e suite, it boots the whole stack", true, { agentBefore: RUN }),
    ).toHaveLength(1);
    const standing = instructionsOf("wait, we always use pnpm here. carry on", true, { agentBefore: RUN });
    expect(standing.map((i) => i.quote)).toEqual(["we always use pnpm here."]);
    const how = instructionsOf(
      "wait — every service runs inside the container, not on my laptop. then carry on",
      true,
      {
        agentBefore: RUN,
      },
    );
    expect(how).toHaveLength(1);
  });
});
