import { forgetLearnedTopicsAfterEach } from "./support/learned-topics.ts";
import { describe, expect, test } from "bun:test";
import { correctedAction } from "../../src/sleep/lesson-learned.ts";
import { type LessonBook, observe, planLessons } from "../../src/sleep/lessons.ts";

forgetLearnedTopicsAfterEach();

// Our own files and sentences. Told to keep stories out of the component file, the agent moves
// them from `X.view.tsx` to `X.stories.tsx`, for a different X each time: the kind of file the code
// went to is what the two corrections share.
describe("code moved to another file of the same thing with another role", () => {
  test("the corrected action names the role of the file it went to", () => {
    expect(
      correctedAction(
        "edit web/ui/Cart.view.tsx: export const Story",
        "edit web/ui/Cart.stories.tsx: export const Story",
      ),
    ).toEqual(["file:cart.stories.tsx", "role:stories.tsx"]);
    expect(
      correctedAction("edit app/ui/LoginScreen.kt: @Preview fun P()", "edit app/ui/LoginPreviews.kt: @Preview fun P()"),
    ).toEqual(["file:loginpreviews.kt", "role:previews.kt"]);
    // A test written beside the file it tests is no move of code by role.
    expect(correctedAction("edit pkg/cart.go: func A()", "edit pkg/cart_test.go: func TestA()")).toEqual([
      "file:cart_test.go",
    ]);
  });
  test("two corrections in other words, each followed by such a move for another thing, are one lesson", () => {
    const b: LessonBook = { version: 1, project: "/p", observations: [], lessons: [] };
    const s = (id: string, day: number, said: string, thing: string) => ({
      session_id: id,
      source: "claude",
      ended_at: `2026-10-0${day}T10:00:00.000Z`,
      user_prompts: [`build the ${thing.toLowerCase()} widget`, said],
      agent_before: ["", `edit web/ui/${thing}.view.tsx: export const Default = () => <${thing} />`],
      agent_first: ["", `edit web/ui/${thing}.stories.tsx: export const Default = () => <${thing} />`],
    });
    observe(b, [s("r1", 1, "no stories inside the component module please", "Cart")], 1);
    observe(b, [s("r2", 2, "the storybook entries don't belong in the view code", "Basket")], 2);
    const plan = planLessons(b, 2, "", { target: "AGENTS.md", retireAfterNights: 0 });
    expect(plan.cards).toHaveLength(1);
  });
});
