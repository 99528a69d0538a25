import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Our own sentences: a contrast the user states once ("a guard clause rather than a bang") makes a
// topic of its two words; "check", one of them, is said of many things in this project's prompts
// (too many for two sayings to join on it as a rare term they both want).
const book = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });
let n = 0;
const session = (day: number, prompts: string[]) => ({
  session_id: `w${++n}`,
  source: "claude",
  ended_at: `2026-11-${String(day).padStart(2, "0")}T10:00:00.000Z`,
  user_prompts: prompts,
});
const clusterOf = (b: LessonBook, quote: string) => b.observations.find((o) => o.quote === quote)?.cluster;

describe("a learned topic met only through a common word joins nothing", () => {
  const guard = "null check or a default value, not a bang operator";
  const spell = "spelling check first, then tell me it's done";
  test("a rule that names only the common word stays apart from the rule the topic was learned from", () => {
    const b = book();
    observe(
      b,
      [
        session(1, ["Add the invoice screen", guard]),
        session(6, ["Draft the notes", "looks like they guard optionals with a check rather than a bang over there?"]),
        session(2, ["check the deploy logs", "can you check the readme", "check the failing job"]),
        session(3, ["check the migration ran", "Write the release notes", spell]),
        session(4, ["check the cron schedule", "Bump the sdk"]),
        session(5, ["check the queue depth", "check the error budget", "check the cache hit rate"]),
      ],
      1,
    );
    expect(Object.keys(b.learned ?? {}).some((k) => k.split("|").includes("check"))).toBe(true);
    planLessons(b, 1, "", { target: "AGENTS.md", retireAfterNights: 0 });
    const a = clusterOf(b, guard);
    const c = clusterOf(b, spell);
    expect(a).toBeDefined();
    expect(c).toBeDefined();
    expect(a).not.toBe(c);
  });
});
