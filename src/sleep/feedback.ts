// The feedback lexicon and detector of Sleep: the harvest tags each user message with it, and
// mining judges a session's outcome and a lesson's kind with it. Phrases match on word boundaries
// with a short negation window, so "correct" does not fire inside "incorrect" and "not great" is
// not praise (spec §3.2, §12.1 item 8).

const NEG_PHRASES = [
  "still broken",
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
  "didn't",
  "did not",
  "broken",
  "error again",
  "still failing",
  "still fails",
  "not fixed",
  "revert",
  "undo",
  "still cannot",
  "still can't",
  "still doesn't",
  "still does not",
  "still slow",
  "still laggy",
  "still the same",
  // The obvious ones in other languages users write to their agents in (kept short and specific).
  "falsch",
  "funktioniert nicht",
  "geht nicht",
  "ça ne marche pas",
  "ca ne marche pas",
  "c'est faux",
  "ne fonctionne pas",
  "toujours pas",
  "no funciona",
  "está mal",
  "esta mal",
  "sigue sin funcionar",
  "incorrecto",
  "não funciona",
  "nao funciona",
  "está errado",
  "errado",
  "non funziona",
  "sbagliato",
  "niet goed",
  "werkt niet",
  "не работает",
  "неправильно",
  "不对",
  "错了",
  "不是这样",
  "还是不行",
  "違う",
  "動かない",
];
const POS_PHRASES = [
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
/** A message that only asks the agent to stop (English and the same languages). */
const STOP_REQUEST =
  /^\s*(?:please\s+)?(?:stop|halt|abort|cancel)(?:\s+(?:it|that|this|now|please|right now|everything))*\s*[.!]*\s*$|^\s*(?:arrête|arrete|stopp?e?|para|pare|basta|hör auf|halt stopp|停|停下|やめて|стоп|хватит)\s*[.!。！]*\s*$/iu;
/**
 * A "no," that opens the message or a sentence, in the same languages ("nein,", "non,", "нет,",
 * "不,"), or a bare "no": a rejection. A "no," inside a list ("yes, no, maybe") is not one.
 */
const LEADING_NO = /(?:^|[.!?。！？]\s+)\s*(?:no|nein|non|não|nao|nee|нет|不|いいえ)\s*[,.!，。！]|^\s*no\s*$/u;
/** A negator up to one word before a phrase ("not great", "isn't really correct"). */
const NEGATORS = /\b(?:not|no|never|isn't|isnt|wasn't|hardly)\s+(?:\w+\s+)?$/;
/** A negator right before a complaint ("not broken anymore", "no longer wrong"). */
const NEGATED_COMPLAINT = /\b(?:not|no longer|never)\s+$/;

/** The feedback phrases, each with its word-boundary pattern. */
export interface FeedbackLexicon {
  neg: [string, RegExp][];
  pos: [string, RegExp][];
  /** Any phrase anywhere: one pass that rules out most texts before the per-phrase checks. */
  any: RegExp;
}

/** The built-in phrases plus extra ones (lower-cased; spec §9.3's environment extensions). */
export function feedbackLexicon(extraNeg: readonly string[] = [], extraPos: readonly string[] = []): FeedbackLexicon {
  const neg = [...NEG_PHRASES, ...extraNeg];
  const pos = [...POS_PHRASES, ...extraPos];
  return {
    neg: neg.map((p) => [p, phraseRe(p)]),
    pos: pos.map((p) => [p, phraseRe(p)]),
    any: new RegExp([...neg, ...pos].map(escapeRe).join("|")),
  };
}

/**
 * How a negator before a phrase is read: the one place the two readers of feedback differ.
 * - `phrases` (the harvest's tags): which lexicon phrases the user wrote. A negated praise is not
 *   praise and yields no tag; a complaint is tagged as written, negated or not.
 * - `outcome` (mining: a session's outcome, a lesson's kind): what the user meant. A negated praise
 *   is a complaint (`neg:not great`); a negated complaint is none ("not broken anymore"), except a
 *   "still …" one.
 */
type NegationReading = "phrases" | "outcome";

/**
 * Feedback tags of one user text: `neg:<phrase>` / `pos:<phrase>`; a leading "no," (`neg:no,`) and a
 * stop request (`neg:stop`) count as complaints.
 */
export function detectFeedback(text: string, lex: FeedbackLexicon, negation: NegationReading = "phrases"): string[] {
  const t = text.toLowerCase();
  const out: string[] = [];
  if (LEADING_NO.test(t)) out.push("neg:no,");
  if (STOP_REQUEST.test(t)) out.push("neg:stop");
  if (!lex.any.test(t)) return out;
  const outcome = negation === "outcome";
  const negSpans: Array<[number, number]> = [];
  for (const [phrase, re] of lex.neg) {
    // The regular expression needs the phrase itself: most texts hold few of them.
    if (!t.includes(phrase)) continue;
    let found = false;
    for (const m of t.matchAll(re)) {
      if (outcome && !phrase.startsWith("still") && NEGATED_COMPLAINT.test(before(t, m.index))) continue;
      found = true;
      negSpans.push([m.index, m.index + m[0].length]);
    }
    if (found) out.push(`neg:${phrase}`);
  }
  const negatedPraise: string[] = [];
  for (const [phrase, re] of lex.pos) {
    if (!t.includes(phrase)) continue;
    let praised = false;
    let negated = false;
    for (const m of t.matchAll(re)) {
      if (negSpans.some(([a, b]) => m.index >= a && m.index < b)) continue;
      if (NEGATORS.test(before(t, m.index))) negated = true;
      else praised = true;
    }
    if (praised) out.push(`pos:${phrase}`);
    if (negated && outcome) negatedPraise.push(`neg:not ${phrase}`);
  }
  return [...out, ...negatedPraise];
}

/** The 24 characters before a match: the window a negator is looked for in. */
function before(t: string, index: number): string {
  return t.slice(Math.max(0, index - 24), index);
}

function phraseRe(phrase: string): RegExp {
  // Han/kana text has no spaces between words: such phrases match anywhere.
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(phrase)) return new RegExp(escapeRe(phrase), "gu");
  return new RegExp(`(?<![\\p{L}\\p{N}_'])${escapeRe(phrase)}(?![\\p{L}\\p{N}_'])`, "gu");
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
