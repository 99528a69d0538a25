import { type LessonBook, planLessons } from "../../../src/sleep/lessons.ts";

/** An empty lesson book of one project. */
export const emptyBook = (): LessonBook => ({ version: 1, project: "/p", observations: [], lessons: [] });

/**
 * A maker of session digests as the harvest gives them to the lessons: each with the next id of
 * `prefix`, ended on `day` of `month` (`2026-11`) at `time`, its prompts, the agent's action right
 * before each prompt and its first action after it.
 */
export function sessionMaker(prefix: string, source: string, month: string, time = "09:00:00.000") {
  let n = 0;
  return (day: number, prompts: string[], before: string[], first: string[]) => ({
    session_id: `${prefix}${++n}`,
    source,
    ended_at: `${month}-${String(day).padStart(2, "0")}T${time}Z`,
    user_prompts: prompts,
    agent_before: before,
    agent_first: first,
  });
}

/** Plan night `night` on the live memory text `memory` (night 1 on an empty file by default), for `target`. */
export const plannerFor =
  (target: string) =>
  (b: LessonBook, night = 1, memory = "") =>
    planLessons(b, night, memory, { target, retireAfterNights: 0 });
