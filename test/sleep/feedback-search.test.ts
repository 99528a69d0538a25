/**
 * detectFeedback finds phrases with one pass of the lexicon's pattern and plain searches plus a look
 * at the code point on each side, instead of one `includes` and one word-bounded regular expression
 * per phrase. That must never change a tag: random texts (phrases in any case, every kind of
 * neighbour a word boundary can see — letters, digits, `_`, `'`, accents, Han, astral letters,
 * lone surrogates — negators, "no,", stop requests) get the same tags, in the same order, as the
 * per-phrase reading below, with the built-in lexicon and with environment-extended ones whose
 * phrases contain, overlap and repeat each other.
 */
import { describe, expect, test } from "bun:test";
import { mulberry32 } from "../../src/lib/index.ts";
import { detectFeedback, feedbackLexicon } from "../../src/sleep/feedback.ts";
import { makeLexicon } from "../../src/sleep/harvest/text.ts";

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The reading before the one-pass search: every phrase's own pattern, run when the text includes it. */
function reference(text: string, neg: string[], pos: string[], outcome: boolean): string[] {
  const patternOf = (p: string) =>
    /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(p)
      ? new RegExp(escapeRe(p), "gu")
      : new RegExp(`(?<![\\p{L}\\p{N}_'])${escapeRe(p)}(?![\\p{L}\\p{N}_'])`, "gu");
  const before = (t: string, i: number) => t.slice(Math.max(0, i - 24), i);
  const t = text.toLowerCase();
  const out: string[] = [];
  const lex = makeLexicon({});
  // The two sentence-level checks are unchanged: take them from the detector on a phrase-free lexicon.
  for (const tag of detectFeedback(text, { ...lex, neg: [], pos: [], any: /(?!)/g, within: new Map() })) out.push(tag);
  const spans: [number, number][] = [];
  for (const p of neg) {
    if (!t.includes(p)) continue;
    let found = false;
    for (const m of t.matchAll(patternOf(p))) {
      if (outcome && !p.startsWith("still") && /\b(?:not|no longer|never)\s+$/.test(before(t, m.index))) continue;
      found = true;
      spans.push([m.index, m.index + m[0].length]);
    }
    if (found) out.push(`neg:${p}`);
  }
  const negated: string[] = [];
  for (const p of pos) {
    if (!t.includes(p)) continue;
    let praised = false;
    let not = false;
    for (const m of t.matchAll(patternOf(p))) {
      if (spans.some(([a, b]) => m.index >= a && m.index < b)) continue;
      if (/\b(?:not|no|never|isn't|isnt|wasn't|hardly)\s+(?:\w+\s+)?$/.test(before(t, m.index))) not = true;
      else praised = true;
    }
    if (praised) out.push(`pos:${p}`);
    if (not && outcome) negated.push(`neg:not ${p}`);
  }
  return [...out, ...negated];
}

const NEIGHBOURS = [
  " ",
  "",
  "a",
  "Z",
  "7",
  "_",
  "'",
  "’",
  ".",
  ", ",
  "!",
  "\n",
  "é",
  "Ç",
  "ß",
  "不",
  "ö",
  "𝐀",
  "😀",
  "\uD835",
  "\uDC00",
  "\u00A0",
  "-",
  "no, ",
  "not ",
  "never ",
  "no longer ",
  "isn't really ",
  "still ",
];
const WORDS = ["the", "parser", "works", "fine", "please", "stop", "now", "no", "ok", "it", "that", "again", "great"];

function randomText(r: Rand, phrases: readonly string[]): string {
  let s = "";
  const n = 1 + Math.floor(r() * 8);
  for (let i = 0; i < n; i++) {
    const k = r();
    let piece = k < 0.45 ? pick(r, phrases) : k < 0.75 ? pick(r, WORDS) : pick(r, NEIGHBOURS);
    if (r() < 0.2) piece = piece.toUpperCase();
    else if (r() < 0.1) piece = piece.slice(0, Math.max(1, piece.length - 1));
    s += (r() < 0.5 ? pick(r, NEIGHBOURS) : "") + piece;
  }
  return r() < 0.1 ? `  ${s}` : s;
}

const LEXICONS: { name: string; neg: string[]; pos: string[] }[] = [
  { name: "built-in", neg: [], pos: [] },
  {
    name: "extended",
    // Phrases that contain others ("wrong again"), sit inside others ("ong"), overlap themselves
    // ("la la" in "la la la"), repeat a built-in one, hold pattern characters, apostrophes, Han
    // text, astral characters, or one letter.
    neg: [
      "wrong again",
      "ong",
      "broken",
      "a.b",
      "c++",
      "it's bad",
      "不行",
      "😀👎",
      "k",
      "still",
      "no funciona bien",
      "la la",
    ],
    pos: ["ship it", "great job", "👍", "thanks a lot", "nice", "(ok)", "la"],
  },
];

describe("one-pass phrase search", () => {
  for (const { name, neg, pos } of LEXICONS) {
    test(`same tags as a search per phrase (${name} lexicon, both readings)`, () => {
      const lex = makeLexicon({
        SKILLOPT_SLEEP_NEG_FEEDBACK: neg.join(","),
        SKILLOPT_SLEEP_POS_FEEDBACK: pos.join(","),
      });
      const allNeg = lex.neg.map((p) => p.text);
      const allPos = lex.pos.map((p) => p.text);
      const r = mulberry32(name.length * 7919);
      let tagged = 0;
      for (let i = 0; i < 3000; i++) {
        const text = randomText(r, [...allNeg, ...allPos]);
        for (const outcome of [false, true]) {
          const got = detectFeedback(text, lex, outcome ? "outcome" : "phrases");
          expect({ text, tags: got }).toEqual({ text, tags: reference(text, allNeg, allPos, outcome) });
          if (got.length > 0) tagged++;
        }
      }
      // The random texts do exercise the phrases (a third of the readings carry a tag at least).
      expect(tagged).toBeGreaterThan(2000);
    });
  }

  test("a phrase that overlaps itself: matches do not overlap, and a refused one is searched again one place on", () => {
    const lex = feedbackLexicon(["la la"], ["la"]);
    const texts = ["la la la", "la la la la", "xla la la", "la la", "lala la la", "la'la la"];
    for (const text of texts)
      expect(detectFeedback(text, lex, "outcome")).toEqual(reference(text, ["la la"], ["la"], true));
    // "la la la": the second "la la" would overlap the first, so the last "la" is praise on its own.
    expect(detectFeedback("la la la", lex, "outcome")).toEqual(["neg:la la", "pos:la"]);
    expect(detectFeedback("xla la la", lex, "outcome")).toEqual(["neg:la la"]);
  });

  test("an empty phrase or one with surrogates keeps the pattern reading", () => {
    const lex = feedbackLexicon(["", "😀"], ["ok"]);
    for (const text of ["", "x", "a😀b", "😀", "ok 😀", "\uD83D ok"]) {
      expect(detectFeedback(text, lex, "outcome")).toEqual(
        reference(
          text,
          lex.neg.map((p) => p.text),
          lex.pos.map((p) => p.text),
          true,
        ),
      );
    }
  });
});
