import { describe, expect, test } from "bun:test";
import { detectFeedback, feedbackLexicon } from "../../src/sleep/feedback.ts";
import { makeLexicon } from "../../src/sleep/harvest/text.ts";
import { feedbackOf } from "../../src/sleep/mine/index.ts";

// Realistic user follow-ups, with what each path says about them: the harvest's tags (kept in the
// digest, and a `neg:` tag makes the prompt a correction) and mining's verdict (a `neg` fails the
// session and makes a lesson a correction; a `pos` alone makes it a success).
//
// Pinned from the two separate detectors before they became one (src/sleep/feedback.ts). Changed
// on purpose when they merged: mining now reads the harvest's whole lexicon (the other languages,
// "didn't"/"did not", "still slow", "still the same" …) and its stop requests, where it used to
// miss them; and a "no," that opens a later sentence, or a bare "no", is now a correction for the
// harvest too. One row is worse for it: "I didn't expect it to be that quick, thanks" is now a
// complaint for mining, as it already was for the harvest. The readings still differ, by name
// (NegationReading), where a negator stands before a phrase.
type Verdict = "neg" | "pos" | "none";
const CORPUS: Array<[text: string, harvest: string[], mining: Verdict]> = [
  ["No, use bun instead of npm", ["neg:no,"], "neg"],
  ["no", ["neg:no,"], "neg"],
  ["No.", ["neg:no,"], "neg"],
  ["Okay. No, keep the old name.", ["neg:no,"], "neg"],
  ["that's wrong, the test still fails", ["neg:that's wrong", "neg:wrong", "neg:still fails"], "neg"],
  ["still broken after your change", ["neg:still broken", "neg:broken"], "neg"],
  ["still not working", ["neg:still not", "neg:not working"], "neg"],
  ["it still doesn't compile", ["neg:still doesn't"], "neg"],
  ["still the same error", ["neg:still the same"], "neg"],
  ["It's still slow on large files", ["neg:still slow"], "neg"],
  ["this is incorrect, the total should be 42", ["neg:incorrect"], "neg"],
  ["you didn't run the tests", ["neg:didn't"], "neg"],
  ["I didn't ask for a refactor", ["neg:didn't"], "neg"],
  ["the build didn't pass", ["neg:didn't"], "neg"],
  ["it did not pick up the config", ["neg:did not"], "neg"],
  ["nope, try again", ["neg:nope"], "neg"],
  ["revert that change please", ["neg:revert"], "neg"],
  ["undo the last edit", ["neg:undo"], "neg"],
  ["fix it", ["neg:fix it"], "neg"],
  ["error again on line 12", ["neg:error again"], "neg"],
  ["doesn't work on windows", ["neg:doesn't work"], "neg"],
  ["not fixed yet", ["neg:not fixed"], "neg"],
  ["that is not what I asked", [], "none"],
  ["thanks!", ["pos:thanks"], "pos"],
  ["Thank you, that works", ["pos:thank you", "pos:that works"], "pos"],
  ["perfect", ["pos:perfect"], "pos"],
  ["great, ship it", ["pos:great"], "pos"],
  ["lgtm", ["pos:lgtm"], "pos"],
  ["looks good to me", ["pos:looks good"], "pos"],
  ["nice work", ["pos:nice"], "pos"],
  ["works now, awesome", ["pos:works now", "pos:awesome"], "pos"],
  ["correct", ["pos:correct"], "pos"],
  ["fixed, thanks", ["pos:thanks", "pos:fixed"], "pos"],
  ["that is not great", [], "neg"],
  ["this isn't correct", [], "neg"],
  ["not perfect yet, the header is off", [], "neg"],
  ["hardly nice", [], "neg"],
  ["it's not looking good", [], "none"],
  ["that wasn't correct either", [], "neg"],
  ["it is not broken anymore, thanks", ["neg:broken", "pos:thanks"], "pos"],
  ["no longer wrong, good", ["neg:wrong"], "none"],
  ["never wrong so far", ["neg:wrong"], "none"],
  ["the tests are not failing anymore", [], "none"],
  ["the value is greater than 3", [], "none"],
  ["options: yes, no, maybe", [], "none"],
  ["the undone items list", [], "none"],
  ["I didn't expect it to be that quick, thanks", ["neg:didn't", "pos:thanks"], "neg"],
  ["great, but the second test is still failing", ["neg:still failing", "pos:great"], "neg"],
  ["thanks, but that's wrong", ["neg:that's wrong", "neg:wrong", "pos:thanks"], "neg"],
  ["Is this correct?", ["pos:correct"], "pos"],
  ["correct the typo in the readme", ["pos:correct"], "pos"],
  ["make sure nothing is broken", ["neg:broken"], "neg"],
  ["what is the error? no idea", [], "none"],
  ["no problem, continue", [], "none"],
  ["No worries, thanks!", ["pos:thanks"], "pos"],
  ["do not revert the migration", ["neg:revert"], "none"],
  ["it's broken, not fixed", ["neg:broken", "neg:not fixed"], "neg"],
  ["stop", ["neg:stop"], "neg"],
  ["Please stop now!", ["neg:stop"], "neg"],
  ["stop it", ["neg:stop"], "neg"],
  ["stop using tabs", [], "none"],
  ["cancel", ["neg:stop"], "neg"],
  ["nein, das ist falsch", ["neg:no,", "neg:falsch"], "neg"],
  ["funktioniert nicht", ["neg:funktioniert nicht"], "neg"],
  ["das geht nicht so", ["neg:geht nicht"], "neg"],
  ["ça ne marche pas, recommence", ["neg:ça ne marche pas"], "neg"],
  ["non, c'est faux", ["neg:no,", "neg:c'est faux"], "neg"],
  ["toujours pas", ["neg:toujours pas"], "neg"],
  ["no funciona con bun", ["neg:no funciona"], "neg"],
  ["está mal, sigue sin funcionar", ["neg:está mal", "neg:sigue sin funcionar"], "neg"],
  ["não funciona", ["neg:não funciona"], "neg"],
  ["está errado", ["neg:está errado", "neg:errado"], "neg"],
  ["non funziona", ["neg:non funziona"], "neg"],
  ["è sbagliato", ["neg:sbagliato"], "neg"],
  ["werkt niet", ["neg:werkt niet"], "neg"],
  ["niet goed", ["neg:niet goed"], "neg"],
  ["не работает", ["neg:не работает"], "neg"],
  ["нет, неправильно", ["neg:no,", "neg:неправильно"], "neg"],
  ["还是不行，再看看", ["neg:还是不行"], "neg"],
  ["不对", ["neg:不对"], "neg"],
  ["错了", ["neg:错了"], "neg"],
  ["違う", ["neg:違う"], "neg"],
  ["動かない", ["neg:動かない"], "neg"],
  ["arrête", ["neg:stop"], "neg"],
  ["basta!", ["neg:stop"], "neg"],
  ["хватит", ["neg:stop"], "neg"],
  ["停", ["neg:stop"], "neg"],
  ["やめて", ["neg:stop"], "neg"],
  ["merci, parfait", [], "none"],
  ["danke, perfekt", [], "none"],
];

const lex = makeLexicon({});

function miningVerdict(text: string): Verdict {
  const d = feedbackOf(text);
  return d.neg ? "neg" : d.pos ? "pos" : "none";
}

describe("feedback of user follow-ups", () => {
  test.each(CORPUS)("%p", (text, harvest, mining) => {
    expect(detectFeedback(text, lex)).toEqual(harvest);
    expect(miningVerdict(text)).toBe(mining);
  });
});

describe("the two negation readings", () => {
  const builtIn = feedbackLexicon();
  test("a negated praise: no tag for the harvest, a complaint for mining", () => {
    expect(detectFeedback("this is not great", builtIn, "phrases")).toEqual([]);
    expect(detectFeedback("this is not great", builtIn, "outcome")).toEqual(["neg:not great"]);
    expect(detectFeedback("that isn't really correct", builtIn, "outcome")).toEqual(["neg:not correct"]);
  });
  test("a negated complaint: tagged as written for the harvest, none for mining unless it is 'still …'", () => {
    expect(detectFeedback("it is not broken anymore", builtIn, "phrases")).toEqual(["neg:broken"]);
    expect(detectFeedback("it is not broken anymore", builtIn, "outcome")).toEqual([]);
    expect(detectFeedback("no longer wrong", builtIn, "outcome")).toEqual([]);
    expect(detectFeedback("it is not still broken, is it", builtIn, "outcome")).toContain("neg:still broken");
  });
  test("whole words only, in both readings", () => {
    for (const reading of ["phrases", "outcome"] as const) {
      expect(detectFeedback("that is incorrect", builtIn, reading)).toEqual(["neg:incorrect"]);
      expect(detectFeedback("x must be greater than y", builtIn, reading)).toEqual([]);
      expect(detectFeedback("options: yes, no, maybe", builtIn, reading)).toEqual([]);
    }
  });
});
