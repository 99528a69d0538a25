import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { contrastPairs } from "../../src/sleep/lesson-learned.ts";
import { polarityOf } from "../../src/sleep/lesson-rule.ts";

forgetLearnedTopicsAfterEach();

// Our own sentences. A phrasal verb's particle ("bring the stack up") sits right at
// a contrast marker, and was learned as one side of a rivalry: "up" then joined every saying that
// says "show up" or "set up" to the one it was learned from.
describe("the particle of a phrasal verb is never a side of a learned rivalry", () => {
  const df = { stack: 4, make: 3, tilt: 1, podman: 1 };
  test("'run ./bin/stack up, not podman run': the side is the command before the particle", () => {
    const pairs = contrastPairs("run ./bin/stack up, not podman run", df);
    expect(pairs.some(([x]) => x === "up")).toBe(false);
    expect(pairs.map(([x]) => x)).toContain("bin/stack");
    expect(contrastPairs("tilt down, never podman compose", df).some(([x]) => x === "down")).toBe(false);
  });
});

describe("what a thing is swapped for ends at 'so', 'because' or 'since'", () => {
  test("a member named in the reason after the swap is not what it is swapped for", () => {
    const p = polarityOf("swap those prints for the logger so pino can ship them");
    expect([...p.avoid]).toEqual(["print"]);
    expect([...p.prefer]).toEqual(["logger"]);
    expect([...polarityOf("replace the moment calls with luxon because dayjs lacks zones").prefer]).toEqual(["luxon"]);
  });
});
