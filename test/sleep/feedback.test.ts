import { describe, expect, test } from "bun:test";
import { detectFeedback, makeLexicon } from "../../src/sleep/harvest/text.ts";
import { detectFeedback as mineFeedback } from "../../src/sleep/mine/index.ts";

// Realistic user follow-ups, with what each path says about them: the harvest's tags (kept in the
// digest, and a `neg:` tag makes the prompt a correction) and mining's verdict (a `neg` fails the
// session and makes a lesson a correction; a `pos` alone makes it a success).
type Verdict = "neg" | "pos" | "none";
const CORPUS: Array<[text: string, harvest: string[], mining: Verdict]> = [
  ["No, use bun instead of npm", ["neg:no,"], "neg"],
  ["no", [], "neg"],
  ["No.", ["neg:no,"], "neg"],
  ["Okay. No, keep the old name.", [], "neg"],
  ["that's wrong, the test still fails", ["neg:that's wrong", "neg:wrong", "neg:still fails"], "neg"],
  ["still broken after your change", ["neg:still broken", "neg:broken"], "neg"],
  ["still not working", ["neg:still not", "neg:not working"], "neg"],
  ["it still doesn't compile", ["neg:still doesn't"], "none"],
  ["still the same error", ["neg:still the same"], "none"],
  ["It's still slow on large files", ["neg:still slow"], "none"],
  ["this is incorrect, the total should be 42", ["neg:incorrect"], "neg"],
  ["you didn't run the tests", ["neg:didn't"], "neg"],
  ["I didn't ask for a refactor", ["neg:didn't"], "none"],
  ["the build didn't pass", ["neg:didn't"], "none"],
  ["it did not pick up the config", ["neg:did not"], "none"],
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
  ["I didn't expect it to be that quick, thanks", ["neg:didn't", "pos:thanks"], "pos"],
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
  ["stop", ["neg:stop"], "none"],
  ["Please stop now!", ["neg:stop"], "none"],
  ["stop it", ["neg:stop"], "none"],
  ["stop using tabs", [], "none"],
  ["cancel", ["neg:stop"], "none"],
  ["nein, das ist falsch", ["neg:no,", "neg:falsch"], "none"],
  ["funktioniert nicht", ["neg:funktioniert nicht"], "none"],
  ["das geht nicht so", ["neg:geht nicht"], "none"],
  ["ça ne marche pas, recommence", ["neg:ça ne marche pas"], "none"],
  ["non, c'est faux", ["neg:no,", "neg:c'est faux"], "none"],
  ["toujours pas", ["neg:toujours pas"], "none"],
  ["no funciona con bun", ["neg:no funciona"], "none"],
  ["está mal, sigue sin funcionar", ["neg:está mal", "neg:sigue sin funcionar"], "none"],
  ["não funciona", ["neg:não funciona"], "none"],
  ["está errado", ["neg:está errado", "neg:errado"], "none"],
  ["non funziona", ["neg:non funziona"], "none"],
  ["è sbagliato", ["neg:sbagliato"], "none"],
  ["werkt niet", ["neg:werkt niet"], "none"],
  ["niet goed", ["neg:niet goed"], "none"],
  ["не работает", ["neg:не работает"], "none"],
  ["нет, неправильно", ["neg:no,", "neg:неправильно"], "none"],
  ["还是不行，再看看", ["neg:还是不行"], "none"],
  ["不对", ["neg:不对"], "none"],
  ["错了", ["neg:错了"], "none"],
  ["違う", ["neg:違う"], "none"],
  ["動かない", ["neg:動かない"], "none"],
  ["arrête", ["neg:stop"], "none"],
  ["basta!", ["neg:stop"], "none"],
  ["хватит", ["neg:stop"], "none"],
  ["停", ["neg:stop"], "none"],
  ["やめて", ["neg:stop"], "none"],
  ["merci, parfait", [], "none"],
  ["danke, perfekt", [], "none"],
];

const lex = makeLexicon({});

function miningVerdict(text: string): Verdict {
  const d = mineFeedback(text);
  return d.neg.length ? "neg" : d.pos.length ? "pos" : "none";
}

describe("feedback of user follow-ups", () => {
  test.each(CORPUS)("%p", (text, harvest, mining) => {
    expect(detectFeedback(text, lex)).toEqual(harvest);
    expect(miningVerdict(text)).toBe(mining);
  });
});
