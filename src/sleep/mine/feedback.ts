import { detectFeedback, feedbackLexicon } from "../feedback.ts";

/** Mining reads the built-in phrases (the environment's extra phrases tag the harvest only). */
const LEXICON = feedbackLexicon();

/** Whether a user message complains, praises, or neither, read for what the user meant. */
export function feedbackOf(text: string): { neg: boolean; pos: boolean } {
  const tags = detectFeedback(text, LEXICON, "outcome");
  return { neg: tags.some((t) => t.startsWith("neg:")), pos: tags.some((t) => t.startsWith("pos:")) };
}

/** Outcome of a session from its follow-up messages (spec §4.3, with word-boundary feedback). */
export function sessionOutcome(
  followUps: readonly string[],
  nUserTurns: number,
): "success" | "fail" | "mixed" | "unknown" {
  const feedback = followUps.map(feedbackOf);
  if (feedback.some((f) => f.neg)) return "fail";
  if (feedback.some((f) => f.pos)) return "success";
  return nUserTurns >= 3 ? "mixed" : "unknown";
}
