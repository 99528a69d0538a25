const NEGATIVE = [
  "still broken",
  "still not working",
  "still not",
  "still wrong",
  "doesn't work",
  "does not work",
  "not working",
  "that's wrong",
  "thats wrong",
  "incorrect",
  "wrong",
  "nope",
  "fix it",
  "broken",
  "error again",
  "still failing",
  "still fails",
  "not fixed",
  "revert",
  "undo",
  "you didn't",
  "you did not",
];
const POSITIVE = [
  "thanks",
  "thank you",
  "perfect",
  "great",
  "works now",
  "fixed",
  "that works",
  "lgtm",
  "looks good",
  "nice",
  "awesome",
  "correct",
];
const NEGATORS = /\b(?:not|no|never|isn't|is not|wasn't|hardly|n't)\s+(?:\w+\s+)?$/;

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function phraseRe(p: string): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRe(p)}(?![\\p{L}\\p{N}_])`, "giu");
}

const NEG_RES = NEGATIVE.map((p) => [p, phraseRe(p)] as const);
const POS_RES = POSITIVE.map((p) => [p, phraseRe(p)] as const);
/** A sentence-initial "no," / "no." is a rejection; "no, problem" or lists like "no, yes" are rare enough. */
const LEADING_NO = /(?:^|[.!?]\s+)no[,.!]\s/i;

/**
 * Lexical feedback of one user message (§12.1 #8 done right): phrases match on word boundaries
 * ("correct" never fires inside "incorrect", "great" never inside "greater"), and a positive
 * phrase right after a negator ("not great", "isn't correct") counts as negative.
 */
export function detectFeedback(text: string): { neg: string[]; pos: string[] } {
  const neg = new Set<string>();
  const pos = new Set<string>();
  const lower = text.toLowerCase();
  const negSpans: Array<[number, number]> = [];
  for (const [p, re] of NEG_RES) {
    re.lastIndex = 0;
    for (const m of lower.matchAll(re)) {
      const before = lower.slice(Math.max(0, m.index - 24), m.index);
      // "not broken anymore", "no longer wrong" are not complaints.
      if (/\b(?:not|no longer|never)\s+$/.test(before) && !p.startsWith("still")) continue;
      neg.add(p);
      negSpans.push([m.index, m.index + m[0].length]);
    }
  }
  if (LEADING_NO.test(lower) || /^no[,.!]?$/.test(lower.trim())) neg.add("no,");
  for (const [p, re] of POS_RES) {
    re.lastIndex = 0;
    for (const m of lower.matchAll(re)) {
      if (negSpans.some(([a, b]) => m.index >= a && m.index < b)) continue;
      const before = lower.slice(Math.max(0, m.index - 24), m.index);
      if (NEGATORS.test(before)) neg.add(`not ${p}`);
      else pos.add(p);
    }
  }
  return { neg: [...neg], pos: [...pos] };
}

/** Outcome of a session from its follow-up messages (spec §4.3, with word-boundary feedback). */
export function sessionOutcome(
  followUps: readonly string[],
  nUserTurns: number,
): "success" | "fail" | "mixed" | "unknown" {
  let neg = 0;
  let pos = 0;
  for (const f of followUps) {
    const d = detectFeedback(f);
    neg += d.neg.length;
    pos += d.pos.length;
  }
  if (neg > 0) return "fail";
  if (pos > 0) return "success";
  return nUserTurns >= 3 ? "mixed" : "unknown";
}
