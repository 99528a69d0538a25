import { describe, expect, test } from "bun:test";
import { simJudge } from "../../src/backends/sim/judge.ts";

const judgePrompt = (rubric: string, answer: string) => [
  { role: "system" as const, content: "You grade one answer to a task against a rubric." },
  {
    role: "user" as const,
    content: `## Rubric\n${rubric}\n\n## Task\nWhen did it ship?\n\n## Answer to grade\n${answer}\n\nGrade the answer. Reply with the JSON object only.`,
  },
];

describe("the simulator's judge", () => {
  test("passes an answer that contains every text the rubric quotes, and says what it expected otherwise", () => {
    expect(JSON.parse(simJudge(judgePrompt('- The reply gives the date as "2024-03-07"', "2024-03-07")))).toEqual({
      pass: true,
      score: 1,
      reason: "The answer contains every text the rubric quotes.",
    });
    expect(
      JSON.parse(
        simJudge(judgePrompt('- The reply gives the date as "2024-03-07" and mentions `ISO`', "March 7, 2024 (ISO)")),
      ),
    ).toEqual({
      pass: false,
      score: 0.5,
      reason: 'Expected "2024-03-07" in the answer, which does not contain it.',
    });
  });

  test("a rubric that quotes nothing gets no verdict (not JSON), so the item is errored rather than scored", () => {
    expect(() => JSON.parse(simJudge(judgePrompt("The answer is polite and correct.", "yes")))).toThrow();
  });
});
