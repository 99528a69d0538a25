// The feedback lexicon and detector of Sleep: the harvest tags each user message with it, and
// mining judges a session's outcome and a lesson's kind with it. Phrases match on word boundaries
// with a short negation window, so "correct" does not fire inside "incorrect" and "not great" is
// not praise (spec §3.2, §12.1 item 8).

import { noFTL } from "bun:jsc";

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

/** A lexicon phrase and how its occurrences are told apart from parts of longer words. */
interface Phrase {
  text: string;
  /** Han/kana text has no spaces between words: such a phrase counts anywhere. */
  anywhere: boolean;
  /**
   * Its pattern, kept for a phrase the plain search below cannot read as the pattern does (an
   * empty one, or one holding surrogates, whose matches the pattern steps through by code point).
   */
  re?: RegExp;
}

/** The feedback phrases, each with how its whole-word occurrences are found. */
export interface FeedbackLexicon {
  neg: Phrase[];
  pos: Phrase[];
  /**
   * Every phrase, longest first, as one global pattern: one pass rules out most texts, and where
   * it stops, the longest phrase that starts there (see phrasesIn).
   */
  any: RegExp;
  /** The phrases each phrase contains (itself too), filled as phrases are met. */
  within: Map<string, string[]>;
}

/** The built-in phrases plus extra ones (lower-cased; spec §9.3's environment extensions). */
export function feedbackLexicon(extraNeg: readonly string[] = [], extraPos: readonly string[] = []): FeedbackLexicon {
  const neg = [...NEG_PHRASES, ...extraNeg];
  const pos = [...POS_PHRASES, ...extraPos];
  const longestFirst = [...neg, ...pos].sort((a, b) => b.length - a.length);
  return {
    neg: neg.map(phrase),
    pos: pos.map(phrase),
    any: new RegExp(longestFirst.map(escapeRe).join("|"), "g"),
    within: new Map(),
  };
}

/**
 * The phrases a text contains (what `t.includes(phrase)` says for each), or undefined for none, in
 * one pass of `any` instead of one search per phrase. The search resumes one position after each
 * match's start, so it stops at every position where a phrase starts; there it matches the longest
 * such phrase, and every other phrase starting there is a prefix of that one, hence inside it.
 */
function phrasesIn(t: string, lex: FeedbackLexicon): Set<string> | undefined {
  const re = lex.any;
  re.lastIndex = 0;
  let m = re.exec(t);
  if (!m) return undefined;
  const found = new Set<string>();
  while (m) {
    for (const p of phrasesWithin(m[0], lex)) found.add(p);
    re.lastIndex = m.index + 1;
    m = re.exec(t);
  }
  return found;
}

function phrasesWithin(text: string, lex: FeedbackLexicon): string[] {
  let inside = lex.within.get(text);
  if (!inside) {
    inside = [...lex.neg, ...lex.pos].map((p) => p.text).filter((p) => text.includes(p));
    lex.within.set(text, inside);
  }
  return inside;
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
  const present = phrasesIn(t, lex);
  if (!present) return out;
  const outcome = negation === "outcome";
  const negSpans: Array<[number, number]> = [];
  for (const phrase of lex.neg) {
    // Most texts hold few phrases: only those are looked at.
    if (!present.has(phrase.text)) continue;
    let found = false;
    for (const [at, end] of occurrences(t, phrase)) {
      if (outcome && !phrase.text.startsWith("still") && NEGATED_COMPLAINT.test(before(t, at))) continue;
      found = true;
      negSpans.push([at, end]);
    }
    if (found) out.push(`neg:${phrase.text}`);
  }
  const negatedPraise: string[] = [];
  for (const phrase of lex.pos) {
    if (!present.has(phrase.text)) continue;
    let praised = false;
    let negated = false;
    for (const [at] of occurrences(t, phrase)) {
      if (inside(negSpans, at)) continue;
      if (NEGATORS.test(before(t, at))) negated = true;
      else praised = true;
    }
    if (praised) out.push(`pos:${phrase.text}`);
    if (negated && outcome) negatedPraise.push(`neg:not ${phrase.text}`);
  }
  return negatedPraise.length > 0 ? [...out, ...negatedPraise] : out;
}

function inside(spans: readonly [number, number][], at: number): boolean {
  for (const [a, b] of spans) if (at >= a && at < b) return true;
  return false;
}

/** The 24 characters before a match: the window a negator is looked for in. */
function before(t: string, index: number): string {
  return t.slice(Math.max(0, index - 24), index);
}

const HAN_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const SURROGATE = /[\uD800-\uDFFF]/;

function phrase(text: string): Phrase {
  const anywhere = HAN_KANA.test(text);
  if (text !== "" && !SURROGATE.test(text)) return { text, anywhere };
  const body = escapeRe(text);
  return { text, anywhere, re: new RegExp(anywhere ? body : `(?<!${WORD_CHAR})${body}(?!${WORD_CHAR})`, "gu") };
}

/** What may not touch a phrase on either side (a letter, digit, `_` or `'`), as a pattern of one code point. */
const WORD_CHAR = "[\\p{L}\\p{N}_']";
const WORD_CHAR_RE = new RegExp(`^${WORD_CHAR}$`, "u");

/**
 * [start, end) of each occurrence of a phrase in t, left to right without overlaps: what matching
 * `(?<![\p{L}\p{N}_'])phrase(?![\p{L}\p{N}_'])` (Han/kana: the phrase alone) with the `gu` flags
 * finds, by plain searches and a look at the code point on each side.
 */
function occurrences(t: string, p: Phrase): [number, number][] {
  const out: [number, number][] = [];
  if (p.re) {
    p.re.lastIndex = 0;
    for (const m of t.matchAll(p.re)) out.push([m.index, m.index + m[0].length]);
    return out;
  }
  const len = p.text.length;
  let at = t.indexOf(p.text);
  while (at !== -1) {
    if (p.anywhere || (!wordCharBefore(t, at) && !wordCharAt(t, at + len))) {
      out.push([at, at + len]);
      at = t.indexOf(p.text, at + len);
    } else at = t.indexOf(p.text, at + 1);
  }
  return out;
}

/** True when the code point ending just before index i is a letter, digit, `_` or `'`. */
function wordCharBefore(t: string, i: number): boolean {
  if (i === 0) return false;
  const c = t.charCodeAt(i - 1);
  if (c < 128) return isAsciiWordChar(c);
  const high = i >= 2 ? t.charCodeAt(i - 2) : 0;
  const unit = c >= 0xdc00 && c <= 0xdfff && high >= 0xd800 && high <= 0xdbff ? t.slice(i - 2, i) : t[i - 1]!;
  return WORD_CHAR_RE.test(unit);
}

/** True when the code point starting at index i is a letter, digit, `_` or `'`. */
function wordCharAt(t: string, i: number): boolean {
  if (i >= t.length) return false;
  const c = t.charCodeAt(i);
  if (c < 128) return isAsciiWordChar(c);
  const low = t.charCodeAt(i + 1);
  const unit = c >= 0xd800 && c <= 0xdbff && low >= 0xdc00 && low <= 0xdfff ? t.slice(i, i + 2) : t[i]!;
  return WORD_CHAR_RE.test(unit);
}

function isAsciiWordChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 39;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Run on every harvested prompt for a fraction of a second per process: not worth an FTL compile.
for (const f of [detectFeedback, phrasesIn, occurrences]) noFTL(f as () => void);
