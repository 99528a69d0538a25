import { isCredentialShaped, pastLeadingCd } from "../lib/index.ts";
import { familiesOf } from "./lesson-family.ts";
import { findCorrection } from "./mine/corrections.ts";

/**
 * How a sentence of a user turn is read as a standing rule, and when two rules say the same thing
 * (docs/sleep.md, "Lessons"). No trigger word list decides alone: the sentence's shape (a short
 * follow-up turn, "again", "X please", "X only", "no X", a bare preference, "use X, not Y"), where
 * it sits (a session's opening request is a task), what it is about (this PR, #41, "for now" are
 * tasks) and the agent's own action right before it (`npm install` before "pnpm please") decide.
 */

const MAX_QUOTE = 240;

/** Function words, politeness and polarity: they never tell two rules apart. */
const FILLER = new Set(
  (
    "the and for with that this from into onto please pls plz can you could would should will just also then than them they what when where which while " +
    "have has had been being are was were its our your my me we us a an to of in on at by or is be do does did not no yes so if as all any some " +
    "more most sure get got let lets use using used how why always never instead rather prefer avoid must stop again still nope okay " +
    "ok but until like there here now it i he she him her his one ones thing things stuff anything everything something nothing other others forgot forget " +
    "remember need needs want wants run running thanks thank yeah yep hey hi guys per via every each time already actually really maybe " +
    "probably may might shall too very well good way ways only even though about because after before same kind sort lot bit mean said say told tell " +
    "don't doesn't didn't won't can't isn't aren't wasn't weren't that's there's let's what's it's i'm i'd i've we're we've you're they're " +
    "dont doesnt didnt wont cant isnt arent wasnt thats theres whats im ive youre keep kept stay stayed remain leave otherwise"
  ).split(" "),
);

/** Competing choices of one topic: preferring one member after another is a flip, whatever the wording. */
const TOPICS: Array<{ topic: string; members: string[][]; needs?: string[] }> = [
  { topic: "indentation", members: [["tab"], ["space"]] },
  { topic: "quotes", members: [["single"], ["double"]], needs: ["quote"] },
  { topic: "js package manager", members: [["npm"], ["pnpm"], ["yarn"]] },
  { topic: "python packages", members: [["pip"], ["uv"], ["poetry"], ["pipenv"], ["conda"]] },
  { topic: "test runner", members: [["jest"], ["vitest"], ["mocha"], ["pytest"], ["unittest"]] },
  { topic: "formatter", members: [["black"], ["ruff"], ["prettier"], ["biome"], ["autopep8"], ["yapf"]] },
  { topic: "naming", members: [["camelcase"], ["snake_case"], ["kebab-case"], ["pascalcase"]] },
  { topic: "exports", members: [["named"], ["default"]], needs: ["export"] },
  { topic: "linter", members: [["eslint"], ["oxlint"], ["flake8"], ["pylint"], ["golangci-lint"]] },
  { topic: "semicolons", members: [["semicolon"], ["no-semi"]] },
  { topic: "modules", members: [["esm"], ["commonjs"], ["cjs"], ["require"]] },
  // Printing to the console or stdout against a logger: the loggers are one choice here.
  {
    topic: "logging",
    members: [
      ["console.log", "console", "print", "stdout"],
      ["console.error"],
      ["logger", "pino", "winston", "consola"],
    ],
  },
  { topic: "http client", members: [["axios"], ["fetch"], ["got"], ["ky"], ["requests"], ["httpx"]] },
  { topic: "dates", members: [["moment"], ["date-fns"], ["dayjs"], ["luxon"]] },
  { topic: "merge strategy", members: [["squash"], ["rebase"]] },
  { topic: "android di", members: [["hilt", "dagger", "@hiltviewmodel"], ["koin"]] },
];

/**
 * Sentences about this PR / ticket / number / now, a dated reference (`2026-11`, `2026-11-03`), or
 * a bound in time ("until the 2.4 freeze lifts", "this week"): a task request, not a standing rule.
 */
const TASK_DEICTIC =
  /(?:#\d+|\b(?:pr|mr|pull request|ticket|issue|jira|bug)\s*#?\d+|(?<![\w/.-])[A-Z]{2,}-\d+(?![\w/-])|\bfor now\b|\bthis time\b|\bthis one\b|\bjust this once\b|\bfor this (?!repo\b|project\b|codebase\b|team\b|code\b)\w+|\bin this (?:pr|pull request|branch|ticket|commit|diff|file)\b|\btoday\b|\btonight\b|\btomorrow\b|\bright now\b|\bat the moment\b|\bmid-(?:migration|rollout|release|refactor|deploy|cutover|upgrade)\b|\bin the middle of\b|\btemporar(?:y|ily)\b|\buntil (?:friday|monday|tuesday|wednesday|thursday|the release|we|it)\b|\buntil\b[^;\n]{0,40}?\b(?:freeze|release|launch|demo|deadline|cutover|rollout|lifts|is over|ends|ships|lands|next week|friday|monday|tuesday|wednesday|thursday|eod)\b|\b(?:this|next) (?:week|sprint)\b|\b(?:open|raise|base|rebase|target|point) (?:this|it|that)(?: pr| one| branch| fix| change| patch| work)? (?:against|on|onto|at|to)\b|\bwhile (?:we|i)(?:'re| are|'m| am)? (?:debug|investigat|test|look|figur|chas|bisect)\w*|\b(?:i'll|i will|we'll|we will) (?:put|turn|switch|set|change|flip) (?:it|them|that|this) back\b|\bthis (?:pr|ticket|issue)\b|\b(?:19|20)\d\d-(?:0[1-9]|1[0-2])(?:-\d\d)?\b|\b(?:19|20)\d\d\.(?:0[1-9]|1[0-2])\b|\bq[1-4] (?:work|scope|stuff|thing)\b|\b(?:this|next) quarter\b)/i;
/**
 * Work said to be throwaway ("this is only a rough prototype, skip the docs", "it's a quick
 * experiment"): how to do it is scoped to that piece of work, not a standing rule.
 */
const THIS_WORK =
  /\b(?:this|it)(?:['’]s| is| was)\s+(?:(?:just|only|all)\s+)?(?:an?\s+)?(?:(?:quick|rough|throwaway|throw-away|one-off|disposable)\s+)*(?:spike|prototype|poc|proof of concept|experiment|throwaway|hack)\b/i;
/** A sentence that acts on "it" / "that one" (to it, on it, in that one): the object of the sentence before. */
const ON_THAT_ONE = /\b(?:to|on|in|into|onto|from|at|against)\s+(?:it|that(?: one)?|this one|them)\b(?![-'’])/i;

/**
 * A standing marker ("from now on", "anymore", "no more") turns a time word into the moment a
 * practice changed: "we removed testify this week, cmp.Diff from now on" is a rule, not a task.
 */
const FROM_NOW_ON = /\b(?:from now on|going forward|from here on|anymore|any more|no more)\b/i;
const WHEN_IT_CHANGED = /\b(?:as of )?(?:this|last) (?:week|sprint)\b|\b(?:as of )?today\b/gi;
/**
 * "as of this week", "as of today": the moment from which something holds, a change of practice
 * dated ("we're on the new router as of this week"), where "this week" alone bounds a task.
 */
const AS_OF = /\bas of (?:(?:this|last) (?:week|sprint|month)|today|yesterday)\b/i;

/**
 * "use v2 of the availability endpoint here": an order to use one thing at this place in the code
 * is the task at hand. "we use pnpm here" says how the team works, and "use pnpm here, always" is
 * standing.
 */
const USE_HERE =
  /^(?:(?:ok|so|and|also|then)[,]?\s+)?(?:please\s+)?use\s+[^,.;!?]{1,60}?\bhere\b(?![^.;!?]*\b(?:always|every|from now on|going forward)\b)/i;
/** A practice the team is giving up: "we're ripping lombok out", "we are dropping yarn", "we're phasing out moment". */
const BEING_GIVEN_UP =
  /\b(?:we're|we are|we'll be|we will be|team's|team is)\s+(?:(?:ripping|pulling|taking|phasing)\s+(?:the\s+|our\s+)?[\w.@/-]+\s+out\b|(?:ripping|pulling|taking|phasing)\s+out\b|(?:dropping|ditching|getting rid of|removing|killing|retiring|sunsetting|moving off|migrating off)\b|off\s+(?!to\b|for\b|on\b|the\s+clock\b)[\w.@/-]+)/i;
/** A task request bound to this PR, ticket, number or moment (TASK_DEICTIC, less a practice's change of date). */
function taskBound(s: string): boolean {
  if (USE_HERE.test(s) || THIS_WORK.test(s)) return true;
  if (!TASK_DEICTIC.test(s)) return false;
  // "axios is gone as of this week": a practice declared gone is a standing change too, and so is
  // one being given up ("we're ripping lombok out this sprint").
  const standing = FROM_NOW_ON.test(s) || AS_OF.test(s) || DECLARED_GONE_ONCE.test(s) || BEING_GIVEN_UP.test(s);
  return !standing || TASK_DEICTIC.test(s.replace(WHEN_IT_CHANGED, " "));
}

/**
 * Naming the one thing at hand ("call it search_v3", "name this `retry_budget`"): a task about that
 * artefact, not a convention (a naming style, "name things in snake_case", is not an identifier).
 */
const NAMES_ONE =
  /\b(?:call|name)\s+(?:it|this|that|the (?:flag|branch|file|function|table|column|env var|variable|option))\s+[`'"]?(?!snake_case\b|kebab-case\b)[a-z][\w-]*(?:_|\d)[\w-]*/i;
/** A sentence that starts with a task verb is a request ("Refactor the logger to use consola") unless it also corrects. */
const TASK_START =
  /^(?:(?:ok(?:ay)?|now|also|then|next|so|and|hey|hi)\b[,]?\s+)*(?:(?:please|pls|can you|could you|would you|let's|lets|go ahead and|i need you to|i want you to)\s+)?(?:refactor|add|fix|implement|create|build|review|update|rename|remove|delete|move|port|migrate|investigate|debug|deploy|bump|change|look|check|make|set up|setup|wire|hook|clean up|split|merge|rebase|release|document|explain|show|tell|find|help|try|generate|open|close|write|draft|summari[sz]e|convert|replace|extract|profile|optimi[sz]e|speed up|reproduce|upgrade|downgrade|revert|commit|push|ship)\b/i;
/** "X is history / gone / banned": X is avoided. */
const GONE =
  /([\w.@/-]+)\s+(?:is|are)\s+(?:history|gone|out|dead|over|deprecated|banned|forbidden|not allowed|a no-go|retired|unmaintained|obsolete)\b/g;
/** "swap / replace X for / with Y", "rip out / get rid of X", "we ditched / dropped X": X is avoided, Y preferred. */
const SWAP =
  /\b(?:swap|replace|trade|rip out|get rid of|strip out|take out)\s+(?:all\s+)?(?:those|these|the|that|this|any|every)?\s*((?:[^,.;]|\.(?=\w))+?)(?:\s+(?:for|with)\s+((?:[^,.;]|\.(?=\w))+?))?(?=$|[,;]|\.(?!\w)|\s+(?:before|after|when|and|then|so|because|since)\b)/g;
/** A practice given up, said as a change: "we ditched changesets", "dropped hilt", "moved off yarn". */
const GIVEN_UP_SAID =
  /\b(?:ditch(?:ed)?|dropped|dumped|retired|abandoned|killed|got rid of|moved off|migrated off|stopped using|(?:turned|switched|shut) off|disabled)\s+(?:the\s+|our\s+|all\s+)?((?:[^,.;!?]|\.(?=\w))+)/;
/**
 * A practice given up, said of the thing in the passive: "moment got ripped out", "the old client was
 * pulled out of the build", "yarn has been removed from the repo". Something removed from a place
 * that is not the project's own ("the stray log was removed from the handler") is an edit, not this.
 */
const GIVEN_UP_PASSIVE =
  /((?:[\w.@/-]+\s+){0,2}[\w.@/-]+)\s+(?:got|was|were|has been|have been|is being|are being)\s+(?:(?:ripped|pulled|taken|torn|phased)\s+out\b|(?:removed|dropped|uninstalled)\s+from\s+(?:the\s+|our\s+)?(?:[\w.-]+\s+)?(?:project|repo|build|codebase|stack|dependencies|deps|go\.mod|package\.json|gemfile|cargo\.toml|pyproject(?:\.toml)?)(?![\w.]))/gi;
/** GIVEN_UP_PASSIVE as a test of a whole sentence (no global state between calls). */
const GIVEN_UP_PASSIVE_ONCE = new RegExp(GIVEN_UP_PASSIVE.source, "i");
/** A dependency given up: "we removed testify from go.mod" (what was removed from a manifest). */
export const DEPENDENCY_REMOVED =
  /\bremoved\s+(?:the\s+)?([\w.@/-]+)\s+from\s+(?:the\s+)?(?:go\.mod|package\.json|pyproject(?:\.toml)?|requirements[\w.]*|gemfile|cargo\.toml|deps|dependencies|the repo|the codebase)(?![\w.])/i;
/** A practice given up, said as a change or asked for: "we ditched changesets", "drop hilt", "moved off yarn". */
export const GIVEN_UP =
  /\b(?:ditch(?:ed)?|dropp?(?:ed)?|dump(?:ed)?|retir(?:e|ed)|abandon(?:ed)?|killed|got rid of|moved off|migrated off|stopped using|(?:turn(?:ed)?|switch(?:ed)?|shut)\s+off|disabled|(?:we're|we are|we've moved|we have moved) off|(?:ripping|ripped|taking|took|pulling|pulled)(?=\s+(?:the\s+|our\s+)?[\w.@/-]+\s+out\b))\s+(?:the\s+|our\s+|all\s+)?((?:[^,.;!?]|\.(?=\w))+)/i;
/**
 * The practice taken up in its place: "switched (the logs) to json", "moved over to X", "moved the
 * suite onto postgres", "it's X now", "X going forward".
 */
export const TAKEN_UP =
  /\b(?:switch(?:ed)?|mov(?:e|ed)|migrat(?:e|ed)|went)\s+(?:\w+\s+){0,2}?(?:over\s+)?(?:to|onto|on to)\s+([^,.;!?]+)|(?:^|[,.;!?]\s*)(?:(?:it's|its|it is|we're on|we use)\s+)?((?:[^,.;!?]|\.(?=\w))+?)\s+(?:now|going forward|from now on|all the way|across the board|as of)\b/i;

/** TAKEN_UP read in every clause of a sentence. */
const TAKEN_UP_ALL = new RegExp(TAKEN_UP.source, "gi");
/** Words that declare a practice at its end ("retired", "unmaintained", "end-of-life"). */
const END_OF_LIFE = /retired|unmaintained|no longer maintained|end[- ]of[- ]life|obsolete/.source;
/** What is declared gone: "the pretty mode is gone", "tabs are history" (up to three words before). */
const DECLARED_GONE = new RegExp(
  String.raw`((?:[\w.@/-]+\s+){0,2}[\w.@/-]+)\s+(?:is|are|'s|'re)\s+(?:now\s+)?` +
    "(?:history|gone|out|dead|over|deprecated|banned|forbidden|a no-go|going away|on (?:its|their) way out|" +
    String.raw`being removed|(?:turned |switched )?off|false|disabled|${END_OF_LIFE}|eol)\b`,
  "g",
);
/**
 * One thing put in another's place, said as done: "mailhog got replaced by mailpit", "the sqlite
 * setup was swapped out for postgres", "we replaced moment with dayjs" (old side first, new side second).
 */
const REPLACED_BY =
  /((?:[\w.@/-]+\s+){0,2}[\w.@/-]+)\s+(?:got|was|were|has been|have been|is being|are being|is|are|'s)\s+(?:replaced|swapped(?: out)?|superseded)\s+(?:by|with|for)\s+([^,.;!?]+)|\b(?:we|we've|we have|i|i've|i have|they|they've|someone)\s+(?:just\s+|already\s+)?(?:replaced|swapped(?: out)?|traded)\s+(?:the\s+|our\s+|all\s+)?((?:[^,.;!?]|\.(?=\w))+?)\s+(?:out\s+)?(?:with|for|by)\s+([^,.;!?]+)/gi;
/** A practice declared at its end: "the in-memory setup is retired", "that client is unmaintained". */
const RETIRED_SAID = new RegExp(
  String.raw`\b(?:is|are|'s|'re|got|was|were|has been|have been)\s+(?:now\s+)?(?:${END_OF_LIFE}|deprecated)\b`,
  "i",
);
/** Where the new side of a replacement stops naming the thing: "mailpit in the compose file". */
const SIDE_TAIL = /\s+(?:in|on|at|across|inside|because|since|so|as|when|after|and)\b.*$/i;
/** DECLARED_GONE as a test of a whole sentence (no global state between calls). */
const DECLARED_GONE_ONCE = new RegExp(DECLARED_GONE.source, "i");
/** "no more X", "no longer X", "no X anymore": what stops. */
const NO_MORE =
  /\bno (?:more|longer)\s+(?:using\s+)?((?:[^,.;!?]|\.(?=\w))+)|\bno\s+((?:[^,.;!?\u2014]|\.(?=\w))+?)\s+any ?more\b/g;
/** "the joda dependency comes out with the next release", "X goes away": what is on its way out. */
const COMES_OUT =
  /((?:[\w.@/-]+\s+){0,2}[\w.@/-]+)\s+(?:comes? out|goes away|go away|(?:is|are) (?:coming|going) out)\b/g;
/** A state said to hold now, not a practice taken up. */
const STATE_NOW =
  /\b(?:is|are|was|were|looks?|works?|pass(?:es|ed)?|builds?|runs?|fine|good|ok|done|green|red|fixed|broken|better|worse)\b/i;
/** The moment a change happened, and particles, never a side of it ("json last week", "we're off joda"). */
const WHEN_WORD = /^(?:last|this|next|week|weeks|sprint|month|today|yesterday|ago|everywhere|too|also|off|on|out)$/;

/**
 * What a sentence that announces a change of practice gives up (`off`) and takes up (`up`): "we
 * switched the subscriber to json last week", "the pretty mode is gone", "no more @Inject
 * constructors", "koin from now on". Undefined when it announces no change. Each side is the first
 * three content terms of its phrase. One such sentence may replace an adopted lesson it goes
 * against (lessons.ts), where a new rule otherwise needs two sayings.
 */
export function announcedChange(text: string): { up: Set<string>; off: Set<string> } | undefined {
  const s = text.replaceAll("\u2019", "'");
  const up = new Set<string>();
  const off = new Set<string>();
  const side = (phrase: string | undefined, into: Set<string>) => {
    // "ripping lombok out of the build": the side ends at "out".
    const words = (phrase ?? "").split(/\s+out\b/i)[0]!;
    for (const t of [...lessonTokens(words)].filter((x) => !WHEN_WORD.test(x)).slice(0, 3)) {
      into.add(t);
      // A library named with its suffix is the library: "moment.js" is also "moment"; so is a tool
      // named by its manifest: "the Podfile" is also "pod" (Gemfile, Brewfile, Justfile).
      if (/^[\p{L}][\w-]*\.js$/u.test(t)) into.add(t.slice(0, -3));
      const manifest = /^([a-z]{3,5})file$/.exec(t);
      if (manifest && t !== "profile") into.add(manifest[1]!);
    }
  };
  side((GIVEN_UP.exec(s) ?? DEPENDENCY_REMOVED.exec(s))?.[1], off);
  for (const m of s.matchAll(DECLARED_GONE)) side(m[1], off);
  for (const m of s.matchAll(GIVEN_UP_PASSIVE)) side(m[1], off);
  for (const m of s.matchAll(COMES_OUT)) side(m[1], off);
  for (const m of s.matchAll(NO_MORE)) side(m[1] ?? m[2], off);
  for (const m of s.matchAll(REPLACED_BY)) {
    side(m[1] ?? m[3], off);
    side((m[2] ?? m[4])!.replace(SIDE_TAIL, ""), up);
  }
  // "X now" names a practice, not a state ("the build is green now", "it works now"); each clause
  // may name one ("we're off joda now, java.time all the way").
  for (const on of s.matchAll(TAKEN_UP_ALL))
    if (on[1] !== undefined || !STATE_NOW.test(on[2]!)) side(on[1] ?? on[2], up);
  for (const t of off) up.delete(t);
  return up.size || off.size ? { up, off } : undefined;
}

/** Words after "is" / "=" that are no value of a setting. */
const NO_VALUE =
  /^(?:the|a|an|not|no|set|now|still|also|just|fine|ok|okay|wrong|right|empty|missing|there|here|what|that|this|it)$/i;
/** A setting's name: an env var (`MAIL_HOST`) or a dotted / snake key (`db.host`, `line_length`). */
const SETTING_KEY = String.raw`[A-Za-z][\w-]*(?:[._][\w-]+)+`;
const SETTING_VALUE = String.raw`["'\`]?([\w.:/@-]*[\w/])`;
/** "MAIL_HOST=mailpit", "MAIL_HOST should be mailhog", "set db.host to localhost", "DB_CONNECTION is pgsql". */
const SETTING_GIVEN = String.raw`\s*(?:=|:=|\s(?:should|must|needs to|has to)\s+(?:be|point at|point to)|\s(?:is|stays|points at|points to)(?:\s+now)?)\s*`;
const SETTINGS = new RegExp(
  [
    String.raw`(?<![\w.-])(${SETTING_KEY})${SETTING_GIVEN}${SETTING_VALUE}`,
    String.raw`\bset\s+(${SETTING_KEY})\s+to\s+${SETTING_VALUE}`,
    // A bare upper-case name only with "=" ("DEBUG=1"; "the API is REST" sets nothing).
    String.raw`(?<![\w.-])([A-Z][A-Z0-9]{2,})=${SETTING_VALUE}`,
  ].join("|"),
  "g",
);

/**
 * The settings a text gives a value ("MAIL_HOST=mailpit now", "MAIL_HOST should be mailhog
 * locally"): key → value, lower-case. Two sayings that give one key different values disagree,
 * whatever else they say: the later one changed the setting.
 */
export function settingsOf(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(SETTINGS)) {
    const key = (m[1] ?? m[3] ?? m[5])!.toLowerCase();
    const value = (m[2] ?? m[4] ?? m[6])!.toLowerCase();
    if (!NO_VALUE.test(value) && value !== key) out.set(key, value);
  }
  return out;
}

/** Whether two texts give one setting different values (settingsOf). */
export function settingChanged(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  for (const [k, v] of a) if (b.has(k) && b.get(k) !== v) return true;
  return false;
}

/**
 * What "swap X for Y" / "replace X with Y" moves away from and to, as a change: read only against a
 * lesson already adopted (a request to swap one thing is no rule by itself, but swapping away what
 * an adopted lesson asks for announces that it changed).
 */
export function swapChange(text: string): { up: Set<string>; off: Set<string> } | undefined {
  for (const m of text.toLowerCase().matchAll(SWAP)) {
    if (!m[2]) continue;
    const off = new Set([...lessonTokens(m[1]!)].slice(0, 3));
    const up = new Set([...lessonTokens(m[2])].filter((t) => !off.has(t)).slice(0, 3));
    if (off.size) return { up, off };
  }
  return undefined;
}

/** What follows "no" in an idiom rather than a prohibition ("no idea why", "no worries"). */
const IDIOM_AFTER_NO =
  /(?:idea|clue|worries|worry|problem|problems|rush|hurry|luck|doubt|wonder|big deal|thanks|stress|pressure)\b/.source;
/**
 * "no idea", "no worries", "no rush": a turn of speech that starts like "no X" and forbids nothing
 * ("no need to write that yourself" does: use what does it).
 */
const NO_IDIOM = new RegExp(
  String.raw`^(?:no|nope)\s+(?:${IDIOM_AFTER_NO}|need\b(?! to (?:\S+ ){1,5}yourself\b))`,
  "i",
);
/**
 * The user keeping a step for themselves: "apply is my job, not yours", "leave the merging to me",
 * "I'll run the migrations myself". The agent is not to do it (the step is avoided).
 */
const MINE_TO_DO =
  /\b([\w.-]+(?: [\w.-]+)?) (?:is|are) (?:my|our) (?:job|call|responsibility)\b|\bleave (?:the\s+)?([\w.-]+(?: [\w.-]+)?) to (?:me|us)\b|\b(?:i'll|i will|we'll|we will) (?:do|run|handle) (?:the\s+)?([\w.-]+) (?:myself|ourselves|by hand)\b/gi;
/** "X is back", "put the X back": X is preferred again. */
const BACK =
  /([\w.@/;-]+)\s+(?:is|are)\s+back\b|\b(?:put|bring|add)\s+(?:the\s+|those\s+|them\s+)?([\w.@/;-]+)\s+back\b/g;
/**
 * A check made a condition of calling work finished ("before you say it's done, run the tests",
 * "nothing is complete until the build passes", "lint before you call it done", "typecheck first,
 * then tell me it's ready", "it has to be green before you call it finished"): a standing rule about every task.
 */
const DONE_GATE =
  /\b(?:before|until|unless)\b[^.;]*\b(?:done|finished|complete|ready|works|working)\b[^.;]*\b(?:run|pass|passes|green|clean|lint|linter|tests?|check|build|format|typecheck)\b|\b(?:done|finished|complete|ready)\b[^.;]*\b(?:until|unless)\b[^.;]*\b(?:pass|passes|green|clean|runs?|succeeds?)\b|\b(?:run|lint|format|fmt|tests?|check|build|typecheck)\b[^.;]*\b(?:before (?:you|we) (?:say|call|tell|claim|report|mark)|first,? (?:and )?then (?:tell|say|call|claim|report|mark))\b[^.;]*\b(?:done|finished|complete|ready|works)\b|^(?:when|once)\b[^.;,]*\b(?:is|are|you're|you are)\s+(?:done|finished|complete)\b[,]?\s+(?:run|lint|format|typecheck)\b|\b(?:clean|green|passing|pass(?:es)?)\b[^.;]*\bbefore (?:you|we) (?:say|call|tell|claim|report|mark)\b[^.;]*\b(?:done|finished|complete|ready)\b/i;
/**
 * The user challenging what the agent is doing: "why are you concatenating inside a logger call",
 * "why did you add a default export?". "why did that test get slower" asks about the code, not the agent.
 */
const WHY_YOU = /^(?:\w+[,.]?\s+)?why (?:are|did|do|would|were|is) you\b/i;
/**
 * "why is there a `--force` in that command", "looks fine but why are there two loggers in it": the
 * user challenging something the agent's action just wrote (the sentence must name it: echoes).
 */
const WHY_THERE = /^(?:(?:\w+[,.]?\s+){0,3}?but\s+|\w+[,.]?\s+)?why (?:is|are) there\b/i;
/** The user contradicting what the agent claimed ("you said it was done but the build is red"). */
const CLAIM_DENIED =
  /\byou keep (?:saying|claiming|calling it|reporting)\b|\byou (?:said|claimed|told me|reported|promised)\b[^.;]*\b(?:(?:but|yet)\b|and\b[^.;]*\b(?:red|broken|fail\w*|errors?|crash\w*)\b)/i;
/**
 * A layout order of kinds of code elements, named bare and plural ("builtins first, then the rest",
 * "types above values"): a convention. "the migration first, then the seed script" orders one
 * task's steps and is not one.
 */
const ORDER_RULE =
  /^(?!(?:the|this|that|these|those|my|your)\b)[\w@/:-]+s\s+first\s*,\s*then\b|\b\w+s\s+(?:above|below|ahead of)\s+(?:ours|theirs|\w+s)\b/i;
/** A standing marker: the sentence is about every future task, even when it starts like a request. */
const STANDING =
  /\b(?:from now on|going forward|every time|whenever|every task|all future|in future|always|never again)\b/i;
/** A line of code rather than a sentence (an empty `{}` named in prose is not code). */
const CODE_LINE =
  /;\s*$|=>|[{}](?<!\{\})(?!\})|^\s*(?:return|const|let|var|import|export|def|function|class|if|for|while)\b[^.]*[;(=]/;
/** A line that ends in a call (`client.send(cmd)`). */
const ENDS_IN_CALL = /\w\(.*\)\s*[;.]?$/;
/** Four plain words in a row: prose, which may end by naming a call ("we're on the new router, use ctx.go('/x')"). */
const PROSE_RUN = /(?:^|\s)(?:[a-z']+\s+){3}[a-z']+(?=[\s,.;:!?]|$)/i;
/** A line of code, or a line ending in a call with no run of prose in it. */
function codeLike(text: string): boolean {
  return CODE_LINE.test(text) || (ENDS_IN_CALL.test(text) && !PROSE_RUN.test(text));
}
/** Words of a complaint about what a sentence names. */
const COMPLAINT =
  /\b(?:break|breaks|broke|broken|wreck|wrecks|wrecked|fail|fails|failed|wrong|mess(?:es|ed)?|bad|hate|useless|ugly|slow|why)\b/i;
/** A trailing "then keep going" / "after that continue where you were" clause: not part of the rule. */
const CONTINUE_TAIL =
  /,?\s*(?:and\s+)?(?:then|after that|afterwards)\s+(?:keep going|carry on|continue|proceed|resume|rerun|re-run|run)\b.*$/i;
/**
 * A statement with a question tag ("we switched, remember?", "tabs here, ok?"): the tag asks for
 * agreement with what was said; the sentence is no question.
 */
const TAGGED = /,\s*(?:remember|ok(?:ay)?|right|yeah|you know|as agreed|as we said)\s*\?+\s*$/i;
/** A question, less a statement with a question tag (TAGGED). */
export function asks(text: string): boolean {
  return text.trim().endsWith("?") && !TAGGED.test(text);
}
/** A polite question asking for a convention: an instruction in question form. */
const POLITE_ASK = /^(?:can|could|would) you\b.*\b(?:our|we|always|the usual|like the others|like the rest)\b/i;
/** A turn that points back at what the agent just did: a correction of it, even when it starts like a task. */
const REFERS_BACK =
  /\b(?:you just|that you|just (?:generated|created|added|wrote|ran|made)|you (?:used|ran|wrote|added|made|did|picked|chose|generated|created)|redo|undo|revert that|amend that|change (?:that|it|this|those|`[^`]+`) (?:to|into|back)|switch (?:that|it|this) (?:to|back)|instead|^(?:move|put|rename|change|make|redo|undo|revert|drop|remove|delete) (?:it|that|this|them|those)\b|^(?:please\s+)?(?:swap|replace|rip out|strip|get rid of) (?:those|that|these|this|it|them|the)\b)\b/i;
/** A turn that halts what the agent is doing right now: "wait, …", "no wait, …", "stop, …", "hold on, …". */
const HALTS = /^(?:(?:no|nope|ah|oh)[,.!]?\s+)?(?:wait|stop|hold on|hang on|whoa)\b/i;
/** A sentence that sends the agent back to the task: "just keep going with the code", "continue with the change first". */
const BACK_TO_TASK =
  /^(?:(?:just|then|and|ok(?:ay)?|so)[,]?\s+)*(?:keep going|carry on|continue|go on|proceed|get on)\b/i;

/**
 * A sentence that stops the step under way: "don't run that", "not yet", "no need to build it",
 * "that takes ages" (after a halt: "no wait, don't …", "stop, that …").
 */
const STEP_HALTED =
  /^(?:(?:no|nope|ah|oh)[,.!]?\s+)?(?:(?:wait|stop|hold on|hang on|whoa)\b[,.!:]?\s*)?(?:just\s+)?(?:don'?t|dont|do not|stop|not (?:now|yet)|no need to|(?:that|this|it)(?:'s|'ll| is| will| takes))\b/i;

/**
 * A turn that stops one step of the task at hand and sends the agent back to the task ("wait, don't
 * run that yet. keep going with the code", "stop, that takes ages. continue with the change first"):
 * the order of this moment's work. Its sentences that stop the step (STEP_HALTED) are no rule; one
 * that says how things are ("wait, every service runs inside the container. then carry on") still is.
 */
function haltsAStep(turn: string): boolean {
  const said = spokenText(turn).trim();
  if (!HALTS.test(said)) return false;
  const rest = said.split(/(?<=[.!?])\s+|\n+/).slice(1);
  return rest.some((x) => BACK_TO_TASK.test(x.trim()));
}

/** A sentence that starts a new task in the middle of a session: "unrelated, but …", "separate thing: …". */
const NEW_TASK =
  /^(?:unrelated|separate (?:thing|question|task)|different (?:thing|topic)|side (?:note|task)|new task)\b/i;
/** A preamble that sets a sentence apart from the task before it: "one thing up front:", "before I forget:". */
const UP_FRONT = /^(?:one (?:more )?thing (?:up front|first)|before i forget|small thing while i remember)\s*[,:]/i;
/**
 * What holds for every thing of a kind: "any new handler: log its errors", "every table change:
 * a new script"; or what kind of project a folder is ("the api folder is a cargo workspace").
 */
const ASIDE_FORM =
  /^(?:any|every|each)\s+(?:new\s+)?[\w-]+(?:\s+[\w-]+)?\s*:|^(?:the\s+)?[\w./-]+(?:\s+(?:folder|dir|directory|repo))?\s+is\s+an?\s+[\w.-]+\s+(?:project|workspace|monorepo)\b/i;
/**
 * A sentence of a session's opening message that reminds of a standing practice rather than asking
 * for the task ("reminder: we keep fixtures in testdata/", "as always, migrations go through the
 * CLI"): a cue that points at what holds beyond this task.
 */
const OPENING_REMINDER =
  /\b(?:reminder|as always|as usual|same as always|like always|like we said|as we said|as discussed|as agreed|we agreed|remember|we always|we never|in this (?:repo|project|codebase))\b/i;
/** A setting kept or switched on: `keep "strict": true`, "strict stays on", "leave X enabled". */
const SETTING_ON =
  /["'`]?([\w.@/-]+)["'`]?\s*[:=]\s*true\b|\b(?!it\b|this\b|that\b)([\w.@/-]+)\s+(?:stays?|remains?)\s+(?:on|enabled|true)(?=\s*(?:$|[,.;!?]))|\b(?:keep|leave)\s+(?:the\s+)?(?!it\b|this\b|that\b)([\w.@/-]+(?:\s+[\w.@/-]+)?)\s+(?:on|enabled)(?=\s*(?:$|[,.;!?]))/g;
/** A setting set false or off: `"strict": false`, "strict is off". */
const SETTING_OFF =
  /["'`]?([\w.@/-]+)["'`]?\s*[:=]\s*false\b|\b(?!it\b|this\b|that\b)([\w.@/-]+)\s+(?:is|stays|remains)\s+(?:now\s+)?(?:false|disabled|switched off|turned off)\b/g;
/** A setting declared off as the practice: "X is off on purpose now", "X stays disabled from now on". */
const SETTING_OFF_NOW =
  /\b(?!it\b|this\b|that\b)[\w.@/-]+\s+(?:is|stays|remains)\s+(?:false|off|disabled)\b[^.;]*\b(?:now|on purpose|from now on|going forward)\b/;
/** A setting's state declared as the practice: "strict stays on", `"strict": false`, "X is off on purpose now". */
const SETTING_SAID = new RegExp(`${SETTING_ON.source}|${SETTING_OFF.source}|${SETTING_OFF_NOW.source}`, "i");
/** "keep X free of Y", "leave X clear of Y": Y is kept out of X. */
const KEPT_FREE =
  /\b(?:keep|leave)\s+(?:the\s+|our\s+|all\s+)?([\w.@/-]+(?:\s+[\w.@/-]+)?)\s+(?:free|clear|clean)\s+of\s+([^,.;!?]+)/g;
/** "X, not Y", or a whole sentence "X not Y" ("Instant not DateTime."); "my job, not yours" says who, not what. */
const X_NOT_Y =
  /([\w.@/`-]+)\s*,\s*not\s+(?!(?:yours|mine|me|you|ours|us)\b)\S|(?:^|[.!?;]\s+)([\w.@/`-]+)\s+not\s+[\w.@/`-]+\s*(?=$|[.!?;])/g;
/** A clause that says what goes wrong otherwise: no stance of its own. */
const CONSEQUENCE = /,?\s*\b(?:otherwise|or else)\b[^.;!?]*/gi;
/** What work stays on or goes in: "keep it as X", "is still on X", "put it in the X". */
const KEPT_ON =
  /\bkeep (?:it|them|this|that) as\s+(?:a\s+|an\s+)?([\w.@-]+)|\b(?:we're|we are|everything is|everything's|whole [\w-]+(?: [\w-]+)? is|(?:is|are) (?:still|all)) (?:still )?on\s+(?:the\s+)?([\w.@-]+(?:\s+\d[\w.]*)?)(?=\s*(?:$|[,.;!?]|\s(?:and|but|so)\b))|^(?:please\s+)?put (?:it|them|this|that) in(?:to)?\s+(?:the\s+|a\s+)?([\w.@-]+)/g;
/** A turn's preamble before what it asks: "nit:", "wait,", "before you go on:". */
const PREAMBLE =
  /^(?:nit|wait|fyi|ps|heads up|quick (?:one|thing)|real quick|one (?:more )?thing(?: up front| first)?|small thing(?: while i remember)?|before i forget|before you go (?:on|further|ahead))\s*[,:]\s*/i;
/** A preamble that interrupts what the agent is doing ("wait,", "nit:", "hold on,"). */
const INTERRUPTS = /^(?:wait|nit|hold on)\s*[,:]/i;
/** A leading "no," (after a preamble, if any): the turn corrects. */
const LEAD_IN = new RegExp(
  `^\\s*(?:${PREAMBLE.source.slice(1)})?(?:no|nope|nah|nein|non|não|wrong|not that|hmm+|ugh|argh)\\s*[,.!:;-]+\\s*`,
  "i",
);
const NEGATION = new RegExp(
  [
    /\b(?:\w+n['’]t|dont|doesnt|isnt|arent|wont|cant|shouldnt|do not|doesn'?t|never|not|avoid|stop|instead of|rather than|without)\b/
      .source,
    /\b(?:no longer|no more|shouldn'?t|mustn'?t)\b|^(?:no|nope)\s+\w|\bno need to (?:\S+ ){1,5}yourself\b/.source,
    // "Path objects, no os.path.join": a "no" inside the sentence that is no idiom.
    String.raw`,\s*no\s+(?!${IDIOM_AFTER_NO})[\w\x60]`,
    MINE_TO_DO.source,
  ].join("|"),
  "i",
);
const AGAIN =
  /\b(?:again|you forgot|forgot to|keep forgetting|as i said|like i said|i told you|i said|how many times|once more|remember to|remember that)\b/i;
const POLITE_SHORT = /\b(?:please|pls|plz|only)\b|^only\b/i;
const PREFERENCE =
  /\b(?:always|prefer|we use|we're using|we are using|i use|we manage|we do|we always|we never|we've switched|we switched|we moved|switch(?:ed)? to|moved to|migrated to|(?:moved|switched|migrated) (?:\S+ ){1,2}?(?:over )?to|going forward|from here on|stick (?:to|with)|go with|from now on|in this (?:repo|project|codebase)|like the others|like the rest|like (?:every|all the) other|follow (?:the|our)|our (?:naming|convention|style|pattern|rule|format|commit format|layout|order)s?|the convention|our convention|house style|style guide|is preferred|we want|we keep|we write|we name|we indent|we format|make sure to|make sure you|that way|this way|the same way|our way|the way we)\b/i;
/**
 * A rule said as how things are, with no cue word: "one sentence per line", "every error crossing a
 * package boundary gets wrapped", "the s3 read goes in loaders/".
 */
const STATED_FORM =
  /^one [\w-]+ per [\w-]+\b|^(?:every|each|all) (?!time\b)[\w-]+(?: [\w-]+){0,5}? (?:gets?|needs?|must|should|has to|have to)\b|\b(?:goes|go|belongs?|lives?) in(?:to)?\s+(?:the\s+)?[\w.-]*(?:\/|\.(?:ts|js|py|go|rs|rb|java|kt|swift|md|ya?ml|toml|json)\b)/i;
const IMPERATIVE_RULE =
  /^(?:(?:please|pls)\s+)?(?:use|format|indent|name|keep|put|lint|stick|prefer|go with|write tests)\b/i;

/** One content word, identifier, path or number reference of a sentence. */
const WORD = /[#@]?[\p{L}\p{N}_`](?:[\p{L}\p{N}_'’./:`-]*[\p{L}\p{N}_`])?/gu;

/**
 * Content terms of a text: lower-case; apostrophes kept inside a word ("don't" is not "don"); stop
 * words, politeness and polarity words removed; a plain word's plural folded ("exports" → "export")
 * but a file name, path or identifier kept whole ("api.ts", `snake_case`, "#41"); a hyphenated
 * word also gives its parts ("table-driven" → "table", "driven").
 */
export function lessonTokens(text: string): Set<string> {
  const out = new Set<string>();
  const prose = text
    .toLowerCase()
    .replaceAll("’", "'")
    .replace(/(^|\s)(?:the\s+)?;(?=\s|$)/g, "$1 semicolon ");
  for (let raw of prose.match(WORD) ?? []) {
    raw = raw.replaceAll("`", "");
    if (raw.endsWith("'s")) raw = raw.slice(0, -2);
    if (!raw || FILLER.has(raw) || raw.includes("'") || raw.startsWith("redacted")) continue;
    if (/^\d+$/.test(raw)) continue;
    if (/^[\p{L}]+$/u.test(raw)) {
      if (raw.length < 2) continue;
      raw = spelt(raw);
      const stem = stemWord(raw);
      const word = SAME_WORD.get(stem) ?? stem;
      if (!FILLER.has(word)) out.add(word);
      continue;
    }
    out.add(raw);
    if (/^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+$/u.test(raw))
      for (const part of raw.split("-")) if (part.length >= 3 && !FILLER.has(part)) out.add(part);
  }
  // A bare scheme prefix ("node: prefix on builtins") is a term of its own.
  if (/(?<![\w:/])node:(?=\s|$)/.test(prose)) out.add("node:");
  for (const n of lineLengths(prose)) out.add(n.term);
  for (const n of versionsOf(prose)) out.add(n.term);
  // "no any", "never `this`": the object of a bare prohibition is a term even when it is a common word;
  // a clause after it of filler words alone ("no any, otherwise good") changes nothing.
  if (out.size === 0) {
    const bare = /^\s*(?:no|never|avoid|not)\s+`?([\p{L}][\p{L}\p{N}_-]*)`?(?:\s*[,;]\s*[^.!?]*)?\s*[.!]*\s*$/u.exec(
      prose,
    );
    if (bare) out.add(bare[1]!);
  }
  return out;
}

/**
 * A line length said with its number ("keep it under 88 chars", "line-length to 120", "the limit is
 * 120"): the term `len:N` for each number from 40 to 200 in a sentence about lines, characters,
 * columns, wrapping or a limit. Numbers are no terms otherwise; two line lengths are rival members
 * of one topic ("line length"), so 88 then 120 is a flip. `avoided`: said in a clause that
 * negates or stops ("stop splitting everything at 88").
 */
function lineLengths(text: string): { term: string; avoided: boolean }[] {
  if (!LINE_SETTING.test(text)) return [];
  const out: { term: string; avoided: boolean }[] = [];
  // "max is 120 now so don't split short calls": what follows "so" / "because" is its own clause.
  for (const clause of text.toLowerCase().split(/[,;:—–(]|\s-\s|\s(?:so|because|since)\s/)) {
    const avoided = /\b(?:not|no|never|stop|don'?t|instead of|anymore|no longer)\b/.test(clause);
    for (const m of clause.matchAll(/(?<![\w.#-])(\d{2,3})(?![\w.%-])/g)) {
      const n = Number(m[1]);
      if (n >= 40 && n <= 200) out.push({ term: `len:${n}`, avoided });
    }
  }
  return out;
}
const LINE_SETTING = /\b(?:line[- ]?length|lines?|line's|chars?|characters|columns?|cols|width|wrap\w*|limit)\b/i;
const LINE_LENGTH_TERM = /^len:\d+$/;

/** A runtime, language, database or framework named with its version ("node 20", `node:20-alpine`, "junit4", "python 3.12"). */
const VERSIONED =
  /\b(node(?:js)?|python|ruby|java|jdk|golang|go|php|postgres(?:ql)?|mysql|redis|kotlin|gradle|rust|dotnet|elixir|swift|xcode|rails|django|laravel|react|vue|angular|typescript|terraform|helm|junit|jest|vite|webpack)(?:\s*(?:v|version\s*)?|[:@-])(\d{1,3}(?:\.\d+)?)(?![\d.]*%)(?![\w.]*\d*\s*(?:ms|s|mb|gb|kb|chars|cols|lines)\b)/gi;
const VERSION_TERM = /^ver:[a-z]+@[\d.]+$/;

/**
 * The versions a text names: `ver:node@20` for "node 20", "node:20-alpine" or "node v20.11" (the
 * major; with the minor when the major is 3 or less, "python 3.12"). Two versions of one tool are
 * rival members of one topic, so "we're on node 20" then "node 22 now" is a flip. `avoided`: said
 * in a clause that negates, stops or declares it gone ("junit4 imports are gone").
 */
function versionsOf(text: string): { term: string; avoided: boolean }[] {
  const out: { term: string; avoided: boolean }[] = [];
  for (const clause of text.toLowerCase().split(/[,;—–(]|:\s|\s-\s|(?<=[.!?])\s/)) {
    const avoided =
      /\b(?:not|no|never|stop|don'?t|instead of|anymore|no longer|gone|history|dead|removed|dropped|off)\b/.test(
        clause,
      );
    for (const m of clause.matchAll(VERSIONED)) {
      const name = m[1]!
        .replace(/js$/, "")
        .replace(/ql$/, "")
        .replace(/^golang$/, "go");
      const [major, minor] = m[2]!.split(".");
      const v = Number(major) <= 3 && minor !== undefined ? `${major}.${minor}` : major!;
      out.push({ term: `ver:${name}@${v}`, avoided });
    }
  }
  return out;
}

/**
 * Words people use for one thing, read as one term: a short form ("semis" for semicolons), the tool
 * noun for its verb ("linter", "linting" → "lint"), and the ways of saying work is finished
 * ("finished", "complete", "done").
 */
const SAME_WORD = new Map<string, string>([
  ["semi", "semicolon"],
  ["semis", "semicolon"],
  ["linter", "lint"],
  ["formatter", "format"],
  // a common short form
  ["fmt", "format"],
  ["finish", "done"],
  ["finished", "done"],
  ["complete", "done"],
  ["complet", "done"],
]);

/**
 * Slips of the keyboard. People type fast at an agent: two letters swapped ("pacakge", "beofre") or
 * a key hit twice ("fiinshed"). A plain word of five letters or more that this user's prompts hold
 * at most once, and that undoing one such slip turns into a word of the user's that is in two
 * prompts or more, or a common word of the stop list, is read as that word: in its terms, and in
 * the shape of its sentence (respell). What is quoted stays as the user typed it (asSaid). No
 * counts set, nothing is read as a slip.
 */
let SPELL_DF: Readonly<Record<string, number>> | undefined;
const SPELT = new Map<string, string>();

/** Read slips against these prompt counts from now on (undefined: read every word as typed). */
export function setSpelling(df: Readonly<Record<string, number>> | undefined): void {
  SPELL_DF = df;
  SPELT.clear();
}

/** A plain lower-case word as the user meant it (itself when it is no slip of another). */
function spelt(w: string): string {
  const df = SPELL_DF;
  if (!df || w.length < 5 || FILLER.has(w)) return w;
  let out = SPELT.get(w);
  if (out !== undefined) return out;
  const count = (x: string) => (FILLER.has(x) ? Number.POSITIVE_INFINITY : (termCount(df, termOf(x)) ?? 0));
  out = w;
  if (count(w) <= 1) {
    let best = 1;
    const tryWord = (c: string) => {
      const n = count(c);
      if (n > best) {
        best = n;
        out = c;
      }
    };
    for (let i = 0; i + 1 < w.length; i++) {
      if (w[i] === w[i + 1]) tryWord(w.slice(0, i) + w.slice(i + 1));
      else tryWord(w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2));
    }
  }
  if (SPELT.size > 20_000) SPELT.clear();
  SPELT.set(w, out);
  return out;
}

/** A plain word's term (its light stem, or the word it is read as). */
function termOf(w: string): string {
  const stem = stemWord(w);
  return SAME_WORD.get(stem) ?? stem;
}

/** A plain word standing alone in prose (not part of a path, identifier or code). */
const PROSE_WORD = /(?<![\p{L}\p{N}_./@`'’-])\p{L}{5,}(?![\p{L}\p{N}_/@`'’(-]|\.[\p{L}\p{N}])/gu;

/** A text with its slips of the keyboard read as the words meant ("beofre" → "before"); camelCase and capitals kept. */
export function respell(text: string): string {
  if (!SPELL_DF) return text;
  return text.replace(PROSE_WORD, (w) => {
    if (!/^\p{L}\p{Ll}+$/u.test(w)) return w;
    const lower = w.toLowerCase();
    const fixed = spelt(lower);
    if (fixed === lower) return w;
    return w[0] === lower[0] ? fixed : fixed[0]!.toUpperCase() + fixed.slice(1);
  });
}

const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

/**
 * The user's own words for a quote read from their respelled turn: the part of `original` that
 * differs from `quote` only in the words respell changed (and in spacing). The quote itself when
 * none does.
 */
export function asSaid(quote: string, original: string): string {
  if (original.includes(quote)) return quote;
  const pattern = quote
    .split(/(\p{L}{5,})/u)
    .map((x, i) =>
      i % 2 ? `\\p{L}{${x.length},${x.length + 1}}` : x.replace(REGEX_SYNTAX, "\\$&").replace(/\s+/g, "\\s+"),
    )
    .join("");
  try {
    return new RegExp(pattern, "u").exec(original)?.[0] ?? quote;
  } catch {
    return quote;
  }
}

/** A light stem of a plain word: plural, -ation, -ing, -ed ("indentation" → "indent", "formatting" → "format"). */
function stemWord(w: string): string {
  let t = w;
  if (t.length > 6 && t.endsWith("ation")) t = t.slice(0, -5);
  else if (t.length > 5 && t.endsWith("ing")) t = t.slice(0, -3);
  else if (t.length > 6 && t.endsWith("ed")) t = t.slice(0, -2);
  else if (t.length > 5 && /(?:ch|sh|x|ss)es$/.test(t)) t = t.slice(0, -2);
  else if (t.length > 3 && t.endsWith("s") && !/(?:ss|us|is)$/.test(t)) t = t.slice(0, -1);
  // A doubled final consonant left by -ing / -ed ("formatt", "wrapp") is one.
  if (t !== w && /([b-df-hj-kmnp-rtv-y])\1$/.test(t)) t = t.slice(0, -1);
  return t;
}

/** A tool, package, command, path or identifier term: a topic member, or a word with a digit, dot, slash or underscore. */
function toolLike(term: string): boolean {
  return topicOfLoose(term) !== undefined || /[\d./_]/.test(term) || /^[#@]/.test(term);
}

/**
 * A term that names a tool, path or identifier by itself: a member of the fixed topic table, or a
 * term shaped like a path or identifier (not a word this user's contrasts made a topic of).
 */
function namedThing(term: string): boolean {
  return MEMBER_TOPIC.has(term) || /[\d./_]/.test(term) || /^[#@]/.test(term);
}

/** What a rule prefers and what it avoids (terms), and the topic members it prefers. */
export interface Polarity {
  prefer: Set<string>;
  avoid: Set<string>;
}

const EXPLICIT_BEFORE = new Set(["use", "using", "with", "prefer", "to", "via", "through"]);
const EXPLICIT_AFTER = new Set(["please", "pls", "plz", "only", "instead"]);
/** A verb right after "only" ("only fails", "only worked", "only is"): an adverb, not "X only". */
const ONLY_BEFORE_VERB =
  /^(?!(?:across|unless|as|plus|towards|besides)$)(?:[a-z]+(?:s|ed)|is|are|was|were|has|had|does|did|can|will|would|should|happen|work|run|fail|break|matter)$/;
/** The markers of a term said to be wanted outright ("use X", "prefer X"). */
const STATED_BEFORE = new Set(["use", "using", "prefer"]);
const NEGATORS = new Set(["not", "no", "never", "don't", "dont", "avoid", "without", "instead", "stop"]);
const SKIP_AFTER_NEG = new Set([
  "use",
  "using",
  "run",
  "running",
  "the",
  "a",
  "an",
  "any",
  "to",
  "with",
  "of",
  "add",
  "install",
]);

function topicOf(term: string, toks: ReadonlySet<string>): string | undefined {
  if (LINE_LENGTH_TERM.test(term)) return "line length";
  if (VERSION_TERM.test(term)) return `version of ${term.slice(4, term.indexOf("@"))}`;
  for (const t of TOPICS)
    if (t.members.some((m) => m.includes(term)) && (!t.needs || t.needs.some((n) => toks.has(n)))) return t.topic;
  return MEMBER_TOPIC.has(term) ? undefined : LEARNED.get(term);
}

/**
 * Topics learned from this user's own history (lesson-learned.ts): each learned term's topic. Set
 * by lessons.ts from the book before a night reads or clusters sayings; a term of the lexicon
 * keeps its lexicon topic.
 */
let LEARNED: ReadonlyMap<string, string> = new Map();
let LEARNED_KEY = "";

/** Use these learned topics from now on; true when they changed (memoised polarities are stale then). */
export function setLearnedTopics(topics: ReadonlyMap<string, string>): boolean {
  const key = [...topics].map(([t, g]) => `${t}=${g}`).join(",");
  if (key === LEARNED_KEY) return false;
  LEARNED = topics;
  LEARNED_KEY = key;
  return true;
}

/** The polarity of one sentence: "use X, not Y", "no X", "X please", and topic members it names. */
export function polarityOf(said: string): Polarity {
  const prefer = new Set<string>();
  const avoid = new Set<string>();
  // What follows "otherwise" says what goes wrong, not what to do ("… otherwise cancellation never reaches the db").
  const text = said.replace(CONSEQUENCE, "");
  const k = findCorrection([text]);
  for (const p of k?.prefer ?? []) for (const t of lessonTokens(p)) prefer.add(t);
  for (const a of k?.avoid ?? []) for (const t of lessonTokens(a)) avoid.add(t);
  // Word by word, clause by clause: the first content term after a negator is avoided.
  const words = text
    .toLowerCase()
    .replaceAll("’", "'")
    .replace(/\(\)/g, "")
    .split(/([,;:!?()]|\.(?=\s|$)|\bbut\b)/)
    .flatMap((clause) => [clause.split(/\s+/).filter(Boolean), ["|"]]);
  const flat = words.flat();
  const toks = lessonTokens(text);
  const explicit = new Set<string>();
  // Terms said to be wanted in so many words ("use wildcard imports", "tmp_path please"), whether or
  // not the lexicon knows them: what the user's own contrast says is preferred.
  const stated = new Set<string>();
  for (let i = 0; i < flat.length; i++) {
    const w = flat[i]!;
    if (NEGATORS.has(w) || (w === "rather" && flat[i + 1] === "than") || (w === "do" && flat[i + 1] === "not")) {
      // A topic member later in the clause is what is avoided ("without trailing semis").
      let member: string | undefined;
      for (let j = i + 1; j < flat.length && flat[j] !== "|" && !member; j++)
        member = [...lessonTokens(flat[j]!)].find((t) => topicOfLoose(t) !== undefined);
      if (member) {
        avoid.add(member);
        continue;
      }
      for (let j = i + 1; j < flat.length && flat[j] !== "|"; j++) {
        const t = [...lessonTokens(flat[j]!)][0];
        if (!t || SKIP_AFTER_NEG.has(flat[j]!) || t === "than") continue;
        avoid.add(t);
        break;
      }
    }
    if (EXPLICIT_BEFORE.has(w)) {
      const next = /^(?:the|a|an|our)$/.test(flat[i + 1] ?? "") ? flat[i + 2] : flat[i + 1];
      const t = [...lessonTokens(next ?? "")][0];
      if (t) explicit.add(t);
      // "go through the axios instance": what work is routed through is wanted.
      const routed = w === "through" && /^(?:go|goes|going|route|routed)$/.test(flat[i - 1] ?? "");
      if (t && (STATED_BEFORE.has(w) || routed)) stated.add(t);
    }
    // "the overlap test only fails after midnight": "only" before a verb limits the verb, it wants nothing.
    if (w === "only" && ONLY_BEFORE_VERB.test(flat[i + 1] ?? "")) continue;
    if (EXPLICIT_AFTER.has(w) && i > 0) {
      const t = [...lessonTokens(flat[i - 1] ?? "")][0];
      if (t) explicit.add(t);
      if (t && (w !== "instead" || flat[i + 1] === "of")) stated.add(t);
    }
  }
  // A line length in a clause that negates or stops is avoided ("stop splitting everything at 88").
  for (const n of lineLengths(text)) if (n.avoided) avoid.add(n.term);
  for (const n of versionsOf(text)) if (n.avoided) avoid.add(n.term);
  // "tabs are history", "npm is banned": what is declared gone is avoided.
  for (const m of text.toLowerCase().matchAll(GONE)) for (const t of lessonTokens(m[1]!)) avoid.add(t);
  for (const m of text.toLowerCase().matchAll(COMES_OUT)) addChoice(avoid, m[1]!);
  for (const m of text.toLowerCase().matchAll(GIVEN_UP_PASSIVE)) addChoice(avoid, m[1]!);
  // "apply is my job, not yours": what the user keeps for themselves the agent avoids.
  for (const m of text.toLowerCase().matchAll(MINE_TO_DO)) addChoice(avoid, m[1] ?? m[2] ?? m[3]!);
  // "swap those console calls for the logger", "rip out the prints": what is swapped or removed is
  // avoided, what it is swapped for is preferred.
  for (const m of text.toLowerCase().matchAll(SWAP)) {
    addChoice(avoid, m[1]!);
    if (m[2]) for (const t of lessonTokens(m[2])) if (!avoid.has(t)) explicit.add(t);
  }
  // "we ditched changesets", "dropped hilt": what was given up is avoided; giving up an override or
  // an exception ("dropped the quote override") goes back to the default, it avoids nothing named.
  const off = GIVEN_UP_SAID.exec(text.toLowerCase()) ?? DEPENDENCY_REMOVED.exec(text);
  // A setting switched off is avoided by its own name ("turned off the strict mode flag": strict).
  const switchedOff = off !== null && /\b(?:turned|switched|shut) off|disabled/.test(off[0]!);
  if (off && (switchedOff || !/\b(?:override|exception|workaround|setting|config|rule|flag)s?\b/.test(off[1]!)))
    addChoice(avoid, off[1]!);
  // "keep screens free of preview code": what is kept out is avoided; where it is kept out of is
  // a place, not a choice.
  const place = new Set<string>();
  for (const m of text.toLowerCase().matchAll(KEPT_FREE)) {
    for (const t of lessonTokens(m[1]!)) place.add(t);
    addChoice(avoid, m[2]!);
  }
  // "semicolons are back", "put the ; back": what is brought back is preferred.
  for (const m of text.toLowerCase().matchAll(BACK))
    for (const t of lessonTokens(m[1] ?? m[2]!)) if (!avoid.has(t)) explicit.add(t);
  // Topic members named and not avoided: one is the preferred one; among several, the explicit ones.
  const byTopic = new Map<string, string[]>();
  for (const t of toks) {
    const topic = topicOf(t, toks);
    if (topic && !avoid.has(t)) byTopic.set(topic, [...(byTopic.get(topic) ?? []), t]);
  }
  // A member is preferred when said so ("use X", "X please", "X only", "switch to X"), or when it is
  // the one left after its rivals are avoided, or the sentence is short; "again, npm i breaks the
  // lockfile" names npm without preferring it.
  const short = toks.size <= 3;
  // A sentence naming one member and no complaint about it prefers it ("double quotes from now on");
  // "again, npm i wrecks the lockfile" names npm without preferring it.
  const complaint = AGAIN.test(text) || COMPLAINT.test(text);
  for (const [topic, members] of byTopic) {
    const rivalAvoided = [...avoid].some((a) => topicOfLoose(a) === topic);
    const chosen = members.filter((m) => explicit.has(m));
    if (!chosen.length && members.length === 1 && !place.has(members[0]!) && (rivalAvoided || short || !complaint))
      chosen.push(members[0]!);
    for (const m of chosen) prefer.add(m);
  }
  // "keep \"strict\": true", "strict stays on": a setting kept on is wanted; one set false or off is not.
  for (const m of text.toLowerCase().matchAll(SETTING_ON)) {
    const t = [...lessonTokens(m[1] ?? m[2] ?? m[3]!)].at(-1);
    if (t && !place.has(t)) stated.add(t);
  }
  for (const m of text.toLowerCase().matchAll(SETTING_OFF)) {
    const t = [...lessonTokens(m[1] ?? m[2]!)].at(-1);
    if (t) avoid.add(t);
  }
  // A bare naming of code terms and nothing else ("@Getter + @Builder", "`tmp_path`"): what it names is wanted.
  if (short && !avoid.size && !complaint && !NEGATION.test(text))
    for (const t of toks) if (/^[#@]|[./_]/.test(t)) stated.add(t);
  // "X, not Y", and a sentence that is only "X not Y": X is the one wanted.
  for (const m of text.toLowerCase().matchAll(X_NOT_Y)) {
    const t = [...lessonTokens(m[1] ?? m[2]!)][0];
    if (t) stated.add(t);
  }
  // "keep it as joda DateTime", "the domain is on joda", "put it in the Podfile": what the work stays on or goes in is wanted.
  for (const m of text.toLowerCase().matchAll(KEPT_ON)) {
    const t = [...lessonTokens(m[1] ?? m[2] ?? m[3]!)][0];
    if (t && !WHEN_WORD.test(t)) {
      stated.add(t);
      explicit.add(t);
    }
  }
  for (const t of stated) if (topicOfLoose(t) === undefined) prefer.add(t);
  // "npm install again?", "you reached for moment again": the user names what the agent did once
  // more, and avoids it; nothing named there is wanted.
  for (const t of againNamed(text)) avoid.add(t);
  // What is avoided is not preferred, nor another word for the same choice ("print" / "stdout").
  for (const a of avoid) {
    prefer.delete(a);
    const group = MEMBER_GROUP.get(a);
    if (group) for (const p of [...prefer]) if (MEMBER_GROUP.get(p) === group) prefer.delete(p);
  }
  return { prefer, avoid };
}

/**
 * What a complaint that the agent did something again names (topic members and code terms said
 * before a closing "again": "yarn add again?", "DateTime.Now in a handler again"); none when the
 * sentence also negates or asks for something ("no yarn again, pnpm please" says its own wish).
 */
function againNamed(text: string): string[] {
  const m = /^(.*?)\bagain\b[\s.?!]*$/i.exec(text.trim());
  if (!m?.[1]?.trim() || NEGATION.test(text) || POLITE_SHORT.test(text) || /\b(?:use|prefer|want)\b/i.test(m[1]))
    return [];
  // A number ("wrapped at 80 again") is no choice given up: the line length it names keeps its reading.
  return [...lessonTokens(m[1])].filter(
    (t) =>
      !LINE_LENGTH_TERM.test(t) &&
      !VERSION_TERM.test(t) &&
      (topicOfLoose(t) !== undefined || /^[\w-]+[./:][\w./:-]+$/.test(t)),
  );
}

/** Add the choice a phrase names to `into`: its first topic member, else its first term ("the pretty printer" → pretty). */
function addChoice(into: Set<string>, phrase: string): void {
  const terms = [...lessonTokens(phrase)];
  const choice = terms.find((t) => topicOfLoose(t) !== undefined) ?? terms[0];
  if (choice) into.add(choice);
}

/** Whether two polarities say opposite things: one prefers what the other avoids, or another member of one topic. */
export function opposite(a: Polarity, b: Polarity): boolean {
  for (const p of a.prefer) if (b.avoid.has(p)) return true;
  for (const p of b.prefer) if (a.avoid.has(p)) return true;
  for (const p of a.prefer) {
    const topic = topicOf(p, a.prefer) ?? topicOfLoose(p);
    if (!topic) continue;
    for (const q of b.prefer)
      if (
        q !== p &&
        (topicOf(q, b.prefer) ?? topicOfLoose(q)) === topic &&
        !b.prefer.has(p) &&
        !a.prefer.has(q) &&
        !sameChoice(p, q)
      )
        return true;
  }
  return false;
}

/** Each topic member's choice (the words that name one choice share it). */
const MEMBER_GROUP = new Map(TOPICS.flatMap((t) => t.members.flatMap((m) => m.map((w) => [w, m] as const))));

/** Two words for one choice of the lexicon ("hilt" and "dagger", "print" and "stdout"): never rivals. */
function sameChoice(p: string, q: string): boolean {
  const g = MEMBER_GROUP.get(p);
  return g !== undefined && g === MEMBER_GROUP.get(q);
}

/** Each topic member's topic. */
const MEMBER_TOPIC = new Map(TOPICS.flatMap((t) => t.members.flat().map((m) => [m, t.topic] as const)));

/** The topic one term is a member of: the table's, a line length, a tool's version, or one learned from this user's contrasts. */
export function topicOfLoose(term: string): string | undefined {
  if (LINE_LENGTH_TERM.test(term)) return "line length";
  if (VERSION_TERM.test(term)) return `version of ${term.slice(4, term.indexOf("@"))}`;
  return MEMBER_TOPIC.get(term) ?? LEARNED.get(term);
}

/**
 * The tool part of an agent action as the harvest records it (`$ npm install x`, `edit src/a.ts:
 * …`), without the agent's words after " · "; "" when there is none. A command's leading `cd <dir>
 * &&` is left out (pastLeadingCd): the command after it is what the agent did.
 */
export function agentTool(action: string | undefined): string {
  const tool = action?.split(" · ", 1)[0] ?? "";
  return tool.startsWith("$ ") ? `$ ${pastLeadingCd(tool.slice(2))}` : tool;
}

/** The path an agent's edit wrote, or undefined when the action was not an edit. */
export function editedPath(action: string | undefined): string | undefined {
  return /^edit (\S+?):/.exec(agentTool(action))?.[1];
}

/** Two paths naming a file of the same name (the same file, or one moved to another folder). */
export function sameFileName(a: string, b: string): boolean {
  return a.split("/").pop() === b.split("/").pop();
}

/**
 * The key terms of the agent's action right before a turn: a command's first two words
 * (`npm install`, `npx prettier`, `git commit`), or the first words of an edit's added line
 * (`export default function`). Two corrections said right after the same wrong action are likely
 * the same correction, whatever their words.
 */
export function actionTerms(agentBefore: string | undefined): string[] {
  if (!agentBefore) return [];
  const tool = agentTool(agentBefore);
  if (tool.startsWith("$ ")) {
    const words = tool
      .slice(2)
      .trim()
      .split(/\s+/)
      .filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w) && w !== "sudo");
    return words
      .slice(0, 2)
      .map((w) => w.toLowerCase().replace(/^['"]|['"]$/g, ""))
      .filter((w) => w && !w.startsWith("-") && !w.includes("/"));
  }
  const edit = /^edit (\S+?): (.*)$/.exec(tool);
  if (edit) return [...lessonTokens(edit[2]!)].slice(0, 3);
  return [];
}

/**
 * Whether the agent's action after a turn redoes the one before it: the same command run again
 * (`go test ./...` then `go test -race ./...`), the same file edited again or written again under
 * another folder (`src/a.test.ts` then `test/a.test.ts`), or a command whose
 * tool changed to one the turn names (`npm install` then `pnpm add` after "pnpm please"). Only a
 * redo says what the turn corrected; a different action after it is the agent doing a new task.
 */
function isRedo(prompt: string, before: string | undefined, after: string | undefined): boolean {
  const cmd = (t: string) => (t.startsWith("$ ") ? (t.slice(2).trim().split(/\s+/)[0] ?? "").toLowerCase() : "");
  const b = cmd(agentTool(before));
  const a = cmd(agentTool(after));
  if (a && b) return a === b || lessonTokens(prompt).has(a);
  const pa = editedPath(after);
  const pb = editedPath(before);
  // The same file, or a file of the same name written somewhere else (moved to where it belongs).
  return pa !== undefined && pb !== undefined && sameFileName(pa, pb);
}

/**
 * Whether the agent's command after a turn reran the one before it another way: the same program
 * (`git commit` then `git commit --amend`). An edit of the same file again may be the task going on.
 */
export function rerun(before: string | undefined, after: string | undefined): boolean {
  return editedPath(after) === undefined && isRedo("", before, after);
}

/** The topics a polarity prefers or avoids a member of. */
export function topicsOf(p: Polarity): Set<string> {
  const out = new Set<string>();
  for (const t of [...p.prefer, ...p.avoid]) {
    const topic = topicOfLoose(t);
    if (topic) out.add(topic);
  }
  return out;
}

/** One instruction found in a prompt. */
interface Instruction {
  quote: string;
  kind: "correction" | "preference";
  /** Said as how things are ("one sentence per line"): a correction when the agent then redid its action. */
  stated?: true;
}

/** Why sentences of a prompt were not taken as rules (counts), for the night's notes. */
interface SkipCounts {
  credential: number;
}

/**
 * The instructions of one prompt. `followUp`: the prompt is not the session's opening request.
 * `agentBefore`: what the agent did or said right before this turn (its last command or reply),
 * when the harvest kept it.
 */
export function instructionsOf(
  prompt: string,
  followUp: boolean,
  o: { agentBefore?: string; agentAfter?: string; skipped?: SkipCounts } = {},
): Instruction[] {
  const out: Instruction[] = [];
  const before = o.agentBefore ? lessonTokens(o.agentBefore) : undefined;
  const tool = agentTool(o.agentBefore);
  const beforeTool = /^(?:\$ |edit )/.test(tool) ? lessonTokens(tool.replace(/^(?:\$ |edit )/, "")) : undefined;
  // Sentences, and the clauses a correction is embedded in ("tests pass, but X, then keep going"),
  // and the items of a list said in one line ("2 things: 1) requests again 2) rename `tmp`"): each
  // is its own instruction. Pasted code, fenced blocks and stack traces are not the user's words.
  // "unrelated, but X" stays one sentence: X is the new task it opens. An ellipsis trails off inside
  // one thought ("how many times... lint first"): no end of a sentence.
  const spoken = spokenText(prompt).replace(/\b(unrelated|separate thing|different topic)\s*,\s*but\s+/gi, "$1 but ");
  const sentences = withAsides(
    spoken.split(
      /(?<=(?<!\.\.)[.?]|(?<!\b(?:try|panic|println|eprintln|vec|format|assert|todo|dbg))!)\s+|\n+|,\s*but\s+|\s+[—–]\s+(?=\S)|\s+(?=\(?\d{1,2}[.)]\s)/i,
    ),
  ).map((x) =>
    x
      .replace(/^\(?\d{1,2}[.)]\s+/, "")
      .replace(CONTINUE_TAIL, "")
      .replace(APPROVED_BUT, "")
      .replace(/^(?:but|one thing(?! up front| first)|also|btw|oh|ok(?:ay)?|hm+|and)\b[,:]?\s*/i, ""),
  );
  const shortTurn = prompt.trim().split(/\s+/).length <= 25;
  // The terms of the agent's action right after this turn that its action before did not have:
  // what the agent changed in answer to it (lesson-learned.ts, correctedAction).
  const afterTool = agentTool(o.agentAfter);
  const changed =
    /^(?:\$ |edit )/.test(afterTool) && isRedo(prompt, o.agentBefore, o.agentAfter)
      ? [...lessonTokens(afterTool.replace(/^\$ |^edit \S+?: /, ""))].filter((t) => !beforeTool?.has(t))
      : [];
  let afterSecret = false;
  let afterTask = false;
  const halted = followUp && haltsAStep(prompt);
  for (const [at, raw] of sentences.entries()) {
    const s = raw.trim();
    if (s.length < 4 || s.length > MAX_QUOTE) continue;
    if (halted && STEP_HALTED.test(s) && !STANDING.test(s) && !PREFERENCE.test(s)) continue;
    // A sentence holding a credential never becomes a rule, whatever else it says; nor does the
    // one right after it that points back at it ("… is <password> — always use it for psql").
    const pointsBack = afterSecret && /\b(?:it|that|this|them|those|these)\b/i.test(s);
    afterSecret = isCredentialShaped(s);
    if (afterSecret || pointsBack) {
      if (o.skipped) o.skipped.credential++;
      continue;
    }
    // Nor one right after a task bound to a PR or a moment that acts on that task's object ("look at
    // PR #412. Suggestions only, don't commit anything on it"): how to do that task, not a practice.
    const onThatTask: boolean = afterTask && ON_THAT_ONE.test(s);
    afterTask = taskBound(s) || (afterTask && onThatTask);
    if (onThatTask) continue;
    // A question is not a rule, unless it asks for a convention ("can you follow our naming?") or says "again".
    if (
      (asks(s) && !POLITE_ASK.test(s) && !AGAIN.test(s) && !WHY_YOU.test(s) && !WHY_THERE.test(s)) ||
      taskBound(s) ||
      NAMES_ONE.test(s)
    )
      continue;
    // "no idea why", "no worries": an idiom, not "no X"; "cool, push it": approval and the next step.
    if (NO_IDIOM.test(s) || movesOn(s) || CHATTER.test(s)) continue;
    const leadIn = LEAD_IN.test(s);
    // Read without its preamble ("nit:", "before I forget:"), which says nothing of the rule.
    const body = s.replace(LEAD_IN, "").replace(PREAMBLE, "").trim();
    const toks = lessonTokens(body);
    if (toks.size === 0 || codeLike(body)) continue;
    // Beside the opening request, a sentence that reminds of a standing practice is a preference (it
    // becomes a lesson only when another session says it too); a task sentence stays a task.
    const reminded = !followUp && OPENING_REMINDER.test(s) && !TASK_START.test(body);
    const words = body.split(/\s+/).length;
    const negation =
      NEGATION.test(body) || findCorrection([body]) !== undefined || new RegExp(GONE.source).test(body.toLowerCase());
    const again = AGAIN.test(body);
    const polite = POLITE_SHORT.test(body) && words <= 12;
    // A change of practice said as a verb ("we ditched changesets", "removed testify from go.mod") states the practice now.
    // So does one that gives a practice up and names what took its place ("drop the text handler, JSON everywhere now").
    const change = announcedChange(body);
    const practiceChanged =
      GIVEN_UP_SAID.test(body.toLowerCase()) ||
      GIVEN_UP_PASSIVE_ONCE.test(body) ||
      RETIRED_SAID.test(body) ||
      BEING_GIVEN_UP.test(body) ||
      DEPENDENCY_REMOVED.test(body) ||
      (change !== undefined && change.up.size > 0 && (change.off.size > 0 || AS_OF.test(body)));
    const stated = STATED_FORM.test(body);
    const preference =
      PREFERENCE.test(body) ||
      IMPERATIVE_RULE.test(body) ||
      stated ||
      DONE_GATE.test(body) ||
      ORDER_RULE.test(body) ||
      SETTING_SAID.test(body) ||
      reminded ||
      practiceChanged;
    // The agent's own action right before: a short turn naming another member of the topic it used corrects it.
    const pol = before ? polarityOf(body) : undefined;
    // It names another member of the topic the agent just used ("the scripts folder is a uv project"
    // after `pip install`), or avoids what it used.
    const contradicts =
      before !== undefined &&
      pol !== undefined &&
      ([...pol.avoid].some((a) => before.has(a)) ||
        [...toks].some((p) => {
          const topic = topicOfLoose(p);
          return (
            topic !== undefined &&
            !pol.avoid.has(p) &&
            !before.has(p) &&
            [...before].some((b) => b !== p && topicOfLoose(b) === topic && !toks.has(b))
          );
        }));
    // It names something the agent's command or edit just used ("'refund-changes' won't pass").
    const echoes = beforeTool !== undefined && [...toks].some((t) => beforeTool.has(t));
    // It states another practice of the family the agent's command or edit belongs to ("Services
    // hand back a Result" right after a `throw new` edit): the action is the evidence.
    // An edit belongs to the family its file's name says too (an edit of `lint-baseline.json` is
    // about silencing the analyser, whatever line it added).
    const fileFamilies = familiesOf(fileWords(editedPath(o.agentBefore)));
    const actionFamilies = beforeTool
      ? new Set([...familiesOf(tool.replace(/^(?:\$ |edit \S+?: )/, "")), ...fileFamilies])
      : new Set<string>();
    const sameFamilyAsAction = [...familiesOf(body)].some((f) => actionFamilies.has(f));
    // The family is in the sentence's own words, not only in the words it repeats from the action.
    const ownWords = () =>
      body
        .toLowerCase()
        .split(/\s+/)
        .filter((x) => ![...lessonTokens(x)].some((t) => beforeTool?.has(t)))
        .join(" ");
    const otherPractice =
      followUp && sameFamilyAsAction && [...familiesOf(ownWords())].some((f) => actionFamilies.has(f));
    // Said in the concern the edited file's own name states, right after that edit ("fix the warning
    // or suppress it narrowly" after an edit of lint-baseline.json): about that edit, even in a task's shape.
    const aboutEditedFile = otherPractice && [...familiesOf(ownWords())].some((f) => fileFamilies.has(f));
    // A short follow-up that names what the agent then changed ("tmp_path fixture", then an edit
    // using tmp_path where the one before did not): the agent took it as a correction.
    const followed =
      followUp &&
      shortTurn &&
      words <= 12 &&
      before !== undefined &&
      changed.some((t) => toks.has(t) && (toolLike(t) || new RegExp(`(?:^|\\s)--?${t}\\b`).test(afterTool)));
    const bare =
      followUp &&
      shortTurn &&
      words <= 6 &&
      ([...toks].some((t) => topicOfLoose(t) !== undefined || (before !== undefined && toolLike(t))) ||
        sameFamilyAsAction);
    // The opening request states the task; only an explicit standing form there is a rule.
    // So does a turn that opens a new task in passing ("unrelated, but plan the queues module too").
    const opens = !followUp || NEW_TASK.test(s);
    // After the opening request, a sentence that sets a practice apart from the task is one too: said
    // as a preference, as "X instead of Y", after "one thing up front:", as what holds for any thing of
    // a kind ("every new handler: …") or what kind of project a folder is, or as a "don't" that names a
    // tool, path or identifier or follows what a thing is ("the web folder is ours, don't install in it").
    const aside =
      !followUp &&
      at > 0 &&
      !TASK_START.test(body) &&
      (preference ||
        /\b(?:instead of|rather than)\b/i.test(body) ||
        UP_FRONT.test(s) ||
        ASIDE_FORM.test(body) ||
        (negation && ([...toks].some(namedThing) || /\b(?:is|are)\s+(?:a|an|our)\s/i.test(body))));
    if (opens && !reminded && !aside && !/\b(?:always|never|from now on|every time|whenever)\b/i.test(body)) continue;
    const refersBack =
      followUp &&
      (REFERS_BACK.test(body) ||
        CLAIM_DENIED.test(body) ||
        WHY_YOU.test(body) ||
        (echoes && (negation || WHY_THERE.test(body))));
    const standingMark = STANDING.test(body) || DONE_GATE.test(body);
    const task =
      TASK_START.test(body) && !negation && !again && !refersBack && !contradicts && !standingMark && !aboutEditedFile;
    if (task && !leadIn) continue;
    if (
      !(
        leadIn ||
        negation ||
        again ||
        polite ||
        preference ||
        aside ||
        contradicts ||
        bare ||
        refersBack ||
        otherPractice ||
        followed
      )
    )
      continue;
    // A plain complaint with nothing to do in it ("still laggy, that's wrong") is not a rule.
    const named = [...toks].some(toolLike);
    if (
      !leadIn &&
      !preference &&
      !aside &&
      !polite &&
      !again &&
      !contradicts &&
      !bare &&
      !followed &&
      !refersBack &&
      !(echoes && followUp && !task) &&
      !otherPractice &&
      !(negation && named) &&
      !IMPERATIVE_LIKE.test(body)
    )
      continue;
    const correction =
      followUp && (leadIn || negation || again || contradicts || refersBack || otherPractice || followed);
    // The rule is quoted without the turn's preamble ("nit:", "wait,"), which is read above as said.
    out.push({
      quote: body.replace(PREAMBLE, "") || body,
      kind: correction ? "correction" : "preference",
      ...(stated && followUp ? { stated: true as const } : {}),
    });
  }
  return out;
}

/** The words of a file's name, without its folder and extension (`config/lint-baseline.json` → "lint baseline"). */
function fileWords(path: string | undefined): string {
  const name = path?.slice(path.lastIndexOf("/") + 1).replace(/\.\w+$/, "") ?? "";
  return name.replace(/[^\p{L}\p{N}]+/gu, " ").trim();
}

/**
 * A sentence that is only a standing marker ("always.", "every single time!", "same as last time, like
 * always"): it qualifies the one before.
 */
const STANDING_ALONE =
  /^(?=.*\b(?:always|ever|every|each|exceptions)\b)(?:(?:always|every (?:single )?time|each time|every time please|always please|no exceptions|(?:same )?as (?:always|ever)|like always|same as (?:last|the other) (?:week|time|day))(?:,\s*|\s+|(?=[.!]*$)))+[.!]*$/i;
/** A sentence that is only a "no" ("try! in network code?? no"): it answers the question before it. */
const NO_ALONE = /^(?:no|nope|nah)[.!]*$/i;

/**
 * Which side alone a sentence's announced change names: "off" when it only gives a practice up
 * ("axios is gone as of this week."), "up" when it only takes one up ("the ofetch wrapper from now
 * on"), else undefined.
 */
function oneSide(s: string): "off" | "up" | undefined {
  const c = announcedChange(s);
  if (!c || c.off.size > 0 === c.up.size > 0) return undefined;
  return c.off.size > 0 ? "off" : "up";
}

/**
 * Sentences with their one-word asides folded into the sentence they qualify: "format first.
 * always." is "format first, always."; "try! in network code?? no" is "no, try! in network code".
 * A practice declared gone and the practice taken up in the next sentence are one change ("axios is
 * gone as of this week. the ofetch wrapper from now on"), as when one sentence names both.
 */
function withAsides(sentences: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of sentences) {
    const x = raw.trim();
    const prev = out.at(-1);
    if (prev !== undefined && STANDING_ALONE.test(x)) out[out.length - 1] = `${prev.replace(/[.!]+$/, "")}, ${x}`;
    else if (prev !== undefined && NO_ALONE.test(x) && prev.endsWith("?"))
      out[out.length - 1] = `no, ${prev.replace(/\?+$/, "")}`;
    else if (prev !== undefined && oneSide(prev) === "off" && oneSide(x) === "up") out[out.length - 1] = `${prev} ${x}`;
    else out.push(raw);
  }
  return out;
}

/** A prompt without pasted code, fenced blocks and stack traces: the user's own words. */
function spokenText(prompt: string): string {
  return prompt.replace(/```[\s\S]*?(?:```|$)/g, "\n").replace(/^\s+at .*$/gm, "");
}

/**
 * Whether a model's rule, quoting `quote` from `prompts`, cannot be a standing rule whatever the
 * model said: the quote is not in the user's own words (pasted code, a stack trace, output), is a
 * line of code, is chatter or moving on, is a task request that corrects nothing, or is about one
 * PR, ticket, number, moment or named artefact (the same reading the rule-based path applies to every sentence).
 */
export function notARule(quote: string, prompts: readonly string[]): boolean {
  const q = quote.trim().replace(/[.!]+$/, "");
  if (q.length < 4 || codeLike(q) || taskBound(q) || NAMES_ONE.test(q)) return true;
  // Chatter, approval or moving on ("ok", "sorry, hit enter too early"): a weak model's rule from nothing.
  if (CHATTER.test(q) || movesOn(q) || NO_IDIOM.test(q)) return true;
  // A task request ("rebase onto main and sort out the conflict"), unless it also corrects or says "always".
  const body = q.replace(LEAD_IN, "");
  if (
    TASK_START.test(body) &&
    !NEGATION.test(body) &&
    !AGAIN.test(body) &&
    !STANDING.test(body) &&
    !REFERS_BACK.test(body)
  )
    return true;
  const head = q.slice(0, 40).toLowerCase();
  return !prompts.some((p) => spokenText(p).toLowerCase().includes(head));
}

/** A negated sentence that still says what to do ("don't pip install anything", "no default exports"). */
const IMPERATIVE_LIKE =
  /^(?:no\s+\w|don'?t\s+\w|do not\s+\w|never\s+\w|stop\s+\w|avoid\s+\w|not\s+\w)|\b(?:instead of|rather than)\b|,\s*not?\s+\w|\bnot\s+[\w`.-]+\s*$|\buse\b|\bwith\b/i;

/** Term weights: how rare a term is across this user's prompts (inverse document frequency). */
export interface Weights {
  weight(term: string): number;
  /** A term rare enough to tell rules apart (a tool, package, command, path or identifier). */
  distinctive(term: string): boolean;
}

export const UNIFORM: Weights = { weight: (t) => (toolLike(t) ? 2 : 1), distinctive: () => true };

/**
 * How many prompts held `term`: an own, numeric entry only. A term may be any word a user typed,
 * "constructor" or "__proto__" among them, which a plain object would answer from its prototype.
 */
export function termCount(df: Readonly<Record<string, number>>, term: string): number | undefined {
  const v = Object.hasOwn(df, term) ? df[term] : undefined;
  return typeof v === "number" ? v : undefined;
}

/** Weights from document frequencies over `n` prompts. */
export function idfWeights(df: Readonly<Record<string, number>>, n: number): Weights {
  // `topic:` and `act:` terms weigh as the words they stand for; a topic term is never rare by itself.
  const N = Math.max(1, n);
  // A small history says little about rarity: below 50 prompts every term counts as if among 50.
  const M = Math.max(50, N);
  const memo = new Map<string, number>();
  return {
    weight: (t) => {
      let x = memo.get(t);
      if (x === undefined) {
        const bare = t.startsWith("act:") ? t.slice(4) : t;
        x = t.startsWith("topic:")
          ? 1
          : Math.log(1 + M / Math.max(1, termCount(df, bare) ?? 1)) * (toolLike(bare) ? 2 : 1);
        memo.set(t, x);
      }
      return x;
    },
    distinctive: (t) =>
      !t.startsWith("topic:") && (termCount(df, t.startsWith("act:") ? t.slice(4) : t) ?? 1) <= Math.max(3, 0.08 * N),
  };
}

const isIdent = (t: string) => /\d/.test(t) && /[\p{L}]/u.test(t);

/**
 * Whether two instructions say the same thing: the shared terms, weighted by rarity, cover most of
 * the shorter one (a short rule contained in a longer one matches) and include a distinctive term;
 * never when they name different identifiers.
 */
export function sameInstruction(a: ReadonlySet<string>, b: ReadonlySet<string>, w: Weights = UNIFORM): boolean {
  if (a.size === 0 || b.size === 0) return false;
  const ia = [...a].filter(isIdent);
  const ib = [...b].filter(isIdent);
  if (ia.length && ib.length && !ia.some((t) => b.has(t))) return false;
  let wa = 0;
  let wb = 0;
  let ws = 0;
  let shared = 0;
  let rare = false;
  for (const t of a) wa += w.weight(t);
  for (const t of b) {
    const x = w.weight(t);
    wb += x;
    if (a.has(t)) {
      ws += x;
      shared++;
      if (w.distinctive(t)) rare = true;
    }
  }
  if (shared === 0) return false;
  const union = wa + wb - ws;
  if (ws / union >= 0.5) return true;
  return rare && ws / Math.min(wa, wb) >= 0.6;
}

/**
 * The precise action a turn followed, as a key that comes back when the agent repeats a mistake in
 * another session: a command's first words with each path cut to its last name (`$ go test
 * ./internal/ingest/...` → `run:go test ingest`), or the file an edit touched (`edit:ci.yml`).
 * undefined when the agent only spoke.
 */
export function actionKey(agentBefore: string | undefined): string | undefined {
  const tool = agentTool(agentBefore);
  const edited = editedPath(agentBefore);
  if (edited !== undefined) return `edit:${lastName(edited)}`;
  if (!tool.startsWith("$ ")) return undefined;
  const words = tool
    .slice(2)
    .split(/\s*(?:\|\||&&|[|;])\s*/, 1)[0]!
    .trim()
    .split(/\s+/)
    .filter((w) => w && !/^[A-Z_][A-Z0-9_]*=/.test(w) && w !== "sudo")
    .slice(0, 4)
    .map((w) => (w.includes("/") ? lastName(w) : w.toLowerCase().replace(/^['"]|['"]$/g, "")))
    .filter(Boolean);
  return words.length >= 2 ? `run:${words.join(" ")}` : undefined;
}

/** A path's last name, without a trailing `/...` or slash (`./internal/ingest/...` → `ingest`). */
function lastName(path: string): string {
  const parts = path.replace(/(?:\/\.\.\.|\/)+$/, "").split("/");
  return (parts.at(-1) ?? "").toLowerCase();
}

/** A turn that only acknowledges or moves on. */
const CHATTER =
  /^(?:(?:thx|thanks|thank you|ty|h+m+|ok(?:ay)?|cool|nice|great|perfect|lgtm|(?:looks|seems) (?:mostly |basically |almost |all )?(?:good|right|fine|ok)|ship it|commit(?: it)?|go on|go ahead|continue|carry on|keep going|proceed|pick up|(?:from )?where (?:you|we) (?:left off|were|stopped)|yes|yep|yeah|sure|done|good|fine|please|pls|plz)\b[\s.!,]*)+$/i;

/** Words in a reaction turn at most: a longer turn says what it wants and is read sentence by sentence. */
const REACTION_WORDS = 20;

/**
 * Words of a command that any change of it may bring (its verbs and common tools): never the
 * corrected action that joins two sayings.
 */
const GENERIC_COMMAND_WORDS = new Set([
  ..."build check clean commit deploy docker fetch format install lint merge python".split(" "),
  ..."pytest rebase release remove start status tests update upgrade verify watch write".split(" "),
  // git's remotes and branches by their usual names
  ..."origin upstream master remote".split(" "),
  // the shell's file commands: any task makes folders and files (the paths they name stay evidence)
  ..."mkdir touch chmod chown".split(" "),
]);

/**
 * A corrected-action term that can say what changed: a flag, path, folder or tool with at least two
 * letters or digits (not shell syntax such as `&&`, not a one-letter flag such as `-f`), or a plain
 * word of five letters or more that is not a command's common verb (`nextest`, not `install`).
 */
export function distinctiveFix(f: string): boolean {
  if (/[^\p{L}]/u.test(f)) return /[\p{L}\p{N}].*[\p{L}\p{N}]/u.test(f) && !/^--?[\p{L}\p{N}]$/u.test(f);
  return f.length >= 5 && !GENERIC_COMMAND_WORDS.has(f) && !CODE_KEYWORDS.has(f);
}

/**
 * Keywords every edit writes whatever it corrects (`return`, `class`). Keywords that are themselves
 * a practice (`final`, `private`, `const`, `export`, `async`) stay evidence: "make those final".
 */
const CODE_KEYWORDS = new Set("return class function value object package module this self".split(" "));

/** Words of a follow-up kept for the action that came after it (followUpOf). */
const FOLLOW_UP_WORDS = 40;

/**
 * A follow-up turn that states no rule in words a rule reads, but after which the agent changed
 * course: it redid what it had just done another way (`fix`: the terms its next action added, a
 * flag, a path, a script). "the local postgres gets started through a helper in scripts/" after
 * `docker compose up`, then `./scripts/dev-db up`. Like a reaction it is support for a correction
 * stated elsewhere with the same corrected action, or a lesson with other reactions when the agent
 * made the same change after the same action in two sessions (lessons.ts, agreedReactions). Task
 * requests about a moment, chatter and credentials are not kept.
 */
export function followUpOf(prompt: string, fix: readonly string[]): string | undefined {
  if (!fix.some(distinctiveFix)) return undefined;
  const { whole, text } = turnWords(prompt);
  if (text.length < 2 || text.length > MAX_QUOTE || text.split(" ").length > FOLLOW_UP_WORDS) return undefined;
  if (isCredentialShaped(text) || taskBound(text) || NAMES_ONE.test(text) || CHATTER.test(text)) return undefined;
  if (haltsAStep(prompt) && STEP_HALTED.test(text)) return undefined;
  // A new request ("rebase onto main and fix the conflict") is the task going on, unless it points
  // back at what was just done ("rename it to …", "no, move that"); so is a short turn approving
  // or moving on ("lgtm, open a draft pr", "nvm keep going", "sorry, hit enter too early. go on").
  if (movesOn(text) || (TASK_START.test(text) && !pushesBack(text) && !INTERRUPTS.test(whole))) return undefined;
  return text;
}

/**
 * A follow-up turn's words (`whole`, spaces folded) and the part a reaction or follow-up quotes:
 * without its preamble ("before you go further:"), which is no part of what it says (a "wait," or
 * "nit:" still interrupts what the agent did: INTERRUPTS, read on `whole`), up to where it turns to
 * another task (ownPart).
 */
function turnWords(prompt: string): { whole: string; text: string } {
  const spoken = spokenText(prompt).trim();
  const whole = spoken.replace(/\s+/g, " ");
  // Lines stay apart until ownPart has read them: a line break ends a sentence, with or without its stop.
  return {
    whole,
    text: ownPart(spoken.replace(/[ \t]+/g, " ").replace(PREAMBLE, ""))
      .replace(/\s+/g, " ")
      .trim(),
  };
}

/** A sentence that turns to another task: "also pin X until …", "unrelated, but …", a request bound to a moment. */
const NEXT_TASK = /^(?:also|and also|plus|oh and|one more thing|while you're (?:at it|in there))\b[,]?\s*/i;

/**
 * The part of a turn that reacts to what was just done: its sentences up to the first that turns to
 * another task ("also pin sidekiq to 7.2.4 until they fix the regression", "unrelated, but …", a
 * request about a PR or a moment). The turn whole when its first sentence already does (the
 * callers' own checks then refuse it).
 */
function ownPart(text: string): string {
  // Sentences (a line break ends one: "the fix goes in the request class" and, on the next line, a
  // request about this screen are two), the parts of one set off by a dash, and a clause that starts
  // "oh and …" / "and then keep going …" inside one. A review's opening ("looked at the diff.", "ok,
  // a couple of things.") and an approval before "but" ("mostly fine but …") say nothing of what is
  // corrected.
  const sentences = text
    .split(/(?<=(?<!\.\.)[.!?])\s+|\s*\n\s*|\s+[—–]\s+|\s+(?=(?:oh and|and also|and then|then)\s)/i)
    .filter((x) => x.trim() !== "")
    .map((x) => x.replace(APPROVED_BUT, ""));
  let opened = false;
  while (sentences.length > 1 && REVIEW_OPENING.test(sentences[0]!)) {
    sentences.shift();
    opened = true;
  }
  // What is left of a turn whose opening was dropped ends without the full stop of its last sentence.
  const part = (k: number) => {
    const out = sentences.slice(0, k).join(" ");
    return opened || k < sentences.length ? out.replace(/(?<!\.)\.$/, "") : out;
  };
  text = part(sentences.length);
  for (let i = 1; i < sentences.length; i++) {
    const s = sentences[i]!;
    // "… otherwise looks good", "the rest is fine": the approval that closes it.
    if (APPROVAL_TAIL.test(s)) return part(i);
    const rest = s.replace(NEXT_TASK, "").replace(/^(?:and\s+)?then\s+/i, "");
    const task = TASK_START.test(rest) && !pushesBack(rest) && !PREFERENCE.test(rest);
    const movingOn = /^(?:and\s+)?then\s/i.test(s) && MOVE_ON.test(s);
    if (NEXT_TASK.test(s) || NEW_TASK.test(s) || taskBound(s) || task || movingOn)
      return sentences
        .slice(0, i)
        .filter((x) => !/^(?:and|oh|so)$/i.test(x))
        .join(" ");
  }
  return text;
}

/** An approval before what is corrected: "mostly fine but …", "looks good, but …", "lgtm but …". */
const APPROVED_BUT =
  /^(?:(?:it's|its|that's|this is|all)\s+)?(?:(?:mostly|looks|seems|basically|pretty much|mostly looks)\s+)?(?:fine|good|ok(?:ay)?|great|nice|correct|right)\s*,?\s+but\s+|^lgtm,?\s+but\s+/i;
/** A review's opening sentence: "looked at the diff.", "ok, a couple of things.", "hm." */
const REVIEW_OPENING =
  /^(?:(?:ok(?:ay)?|so|right|hm+)[,.]?\s*)?(?:(?:i\s+)?(?:looked|had a look|went) (?:at|over|through) (?:the|your) (?:diff|changes|pr|code|patch)|(?:a\s+)?(?:couple|few) (?:of\s+)?(?:things|notes|nits|comments)|hm+|ok(?:ay)?)\s*[.!:]*$/i;
/** A closing approval: "otherwise looks good", "the rest is fine". */
const APPROVAL_TAIL =
  /^(?:otherwise|other than that|apart from that|the rest(?: is| looks)?|rest (?:is|looks))\b[^.?!]*\b(?:good|fine|ok(?:ay)?|great|lgtm)\b/i;

/** A short turn approving or moving on that pushes back on nothing ("lgtm, open a draft pr", "cool, push it", "nvm keep going"). */
function movesOn(text: string): boolean {
  return text.split(/\s+/).length <= 8 && (APPROVAL_LEAD.test(text) || MOVE_ON.test(text)) && !pushesBack(text);
}

/** A turn that moves on without a word about what was done. */
const MOVE_ON =
  /^(?:nvm|never ?mind|sorry|oops|whoops|ignore that|disregard)\b|\b(?:hit enter too early|wrong (?:window|tab|chat)|keep going|go on|carry on)\b/i;

/** A turn that pushes back on what the agent did: a negation, "again", "no,", a claim denied, or a pointer back at it. */
function pushesBack(text: string): boolean {
  return (
    NEGATION.test(text) || AGAIN.test(text) || LEAD_IN.test(text) || REFERS_BACK.test(text) || CLAIM_DENIED.test(text)
  );
}

/**
 * A request to undo what the agent just did and nothing more ("revert that", "undo it pls", "roll
 * that back", "put it back"): it has no words of its own, what it objects to is the action before it.
 */
const UNDO_ONLY =
  /^(?:(?:please|pls|just)\s+)?(?:revert|undo|roll\s+back|back\s+out|(?:roll|put)\s+(?:it|that|this|those|them)\s+back|back\s+(?:it|that|this|those|them)\s+out)(?:\s+(?:it|that|this|those|these|them|the\s+(?:last\s+)?(?:change|changes|edit|edits)))?(?:\s+(?:please|pls|now|again|too))*$/i;

/** Whether a saying only asks to undo the agent's last action (UNDO_ONLY). */
export function undoesOnly(quote: string): boolean {
  return UNDO_ONLY.test(
    quote
      .replace(/[.!,;:]+/g, " ")
      .replace(/\s+/g, " ")
      .trim(),
  );
}

/**
 * A short follow-up turn right after an agent command or edit that names no rule in words the
 * reading above accepts ("again.", "-race", "did you run that with the detector?"): the turn,
 * whitespace collapsed, else undefined. Alone it is no lesson; it is evidence for one when the
 * agent's same action drew a stated rule in another session (lessons.ts, actionKey), or when the
 * agent redid that action with the same change after it in two sessions (agreedReactions).
 */
export function reactionOf(prompt: string, agentBefore: string | undefined, acked = false): string | undefined {
  // A turn the agent owned up to ("You're right, …") corrected a claim too, not only an action.
  if (actionKey(agentBefore) === undefined && !acked) return undefined;
  const { whole, text } = turnWords(prompt);
  const interrupts = INTERRUPTS.test(whole);
  if (text.length < 2 || text.length > MAX_QUOTE || text.split(" ").length > REACTION_WORDS) return undefined;
  if (isCredentialShaped(text) || taskBound(text) || NAMES_ONE.test(text) || CHATTER.test(text)) return undefined;
  if (NO_IDIOM.test(text) || (haltsAStep(prompt) && STEP_HALTED.test(text))) return undefined;
  // It pushes back on what the agent did ("again.", "that's not it", "you didn't run …"), or is a
  // bare term or two ("-race", "tmp_path fixture"); a short remark or request after a common edit
  // ("can you also update the README", "why did that get slower") is not a correction.
  const words = text.split(" ").length;
  const back = pushesBack(text) || interrupts || acked;
  if (!back && words > 4) return undefined;
  if (TASK_START.test(text) && !back) return undefined;
  // A bare term names something ("-race", "`verify`"); "ok where were we", "cool, push it" and
  // "wrong window, continue" approve or move on.
  if (!back && (APPROVAL_LEAD.test(text) || lessonTokens(text).size === 0)) return undefined;
  return text;
}

/**
 * The agent's first words owning up to a mistake ("You're right, that run didn't include -race.",
 * "Sorry about that — fixing it.", "Good catch.", "Understood — reverting the edit"): the turn
 * before them corrected it. A plain "Got it." or "Sure, updating." only takes a request.
 */
const OWNS_UP =
  /^(?:(?:oh|ah),?\s+)?(?:you(?:'|’)?re (?:absolutely |quite |totally |completely )?right|right\s*(?:[,.!:]|[—–-]\s)|sorry|apolog|my (?:bad|mistake)|good (?:catch|point|call)|oops|fair (?:point|enough)|(?:understood|got it|noted|ok(?:ay)?)\s*[,.!:]?\s*(?:[—–-]\s*)?(?:i'?ll |let me )?(?:switch|revert|redo|correct|fix|undo|replac|chang)|(?:switching|reverting|redoing|correcting|undoing)\b)/i;

/** Whether the agent's reply to a turn owns up to a mistake (OWNS_UP): the turn was a correction. */
export function ownsUp(reply: string | undefined): boolean {
  return !!reply && OWNS_UP.test(reply.trimStart());
}

/** A turn that opens by approving or moving on ("ok, …", "cool, …", "wrong window"). */
const APPROVAL_LEAD =
  /^(?:thx|thanks|thank you|ty|ok(?:ay)?|cool|nice|great|perfect|lgtm|(?:looks|seems|reads) (?:mostly |basically |almost |all )?(?:good|right|fine|ok(?:ay)?|correct)|sounds good|yes|yep|yeah|sure|good|fine|wrong (?:window|tab|chat))\b/i;
