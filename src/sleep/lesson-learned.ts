/**
 * Topics learned from the user's own history (issue 29 §1), beside the fixed lexicon of
 * lesson-rule.ts and lesson-family.ts. Two sources give pairs of terms that are rival choices of
 * one topic, the first preferred:
 *   - contrast forms in the user's turns: "X, not Y", "X instead of Y", "X rather than Y",
 *     "X over Y", "not Y — X", "no Y, X", "switch(ed) / moved / migrated from Y to X", "Y → X";
 *   - the agent's own action before and after a short turn that names one of them: a command
 *     whose tool changed (`npm install` before "pnpm please", `pnpm add` after it).
 * Each side of a contrast is the one or two content terms nearest the marker, leaving out words
 * too common in this user's prompts to name a choice, so "we use pnpm here, not npm" pairs pnpm
 * with npm, not "here".
 * Pairs are kept in the lesson book (`learned`), so what one night learned reads the next night's
 * sayings; a topic is a connected group of paired terms, never more than MAX_GROUP terms (a pair
 * that would grow a group past it is not joined: a noisy pair cannot glue everything together).
 */
import {
  agentTool,
  DEPENDENCY_REMOVED,
  editedPath,
  GIVEN_UP,
  lessonTokens,
  sameFileName,
  TAKEN_UP,
  termCount,
} from "./lesson-rule.ts";

/** The most terms one learned topic holds. */
const MAX_GROUP = 8;
/** Words read on each side of a contrast marker. */
const SIDE = 4;

const CLAUSE = /(?<=[.!?;])\s+|\n+/;
const TERM = String.raw`[^\s,;:.!?()]+(?:\.[^\s,;:!?()]+)*`;
/** "X, not Y" / "X instead of Y" / "X rather than Y" / "X over Y" (X before the marker). */
const X_THEN_Y = new RegExp(
  String.raw`^(.*?)(?:,\s*not|\s+instead of|\s+rather than|\s+over|,\s*never)\s+(?:the\s+|a\s+|an\s+|any\s+|plain\s+)?(${TERM}(?:\s+${TERM}){0,2})`,
  "i",
);
/** "not Y — X" / "no Y, X" at a clause's start (Y avoided, X preferred). */
const Y_THEN_X = new RegExp(
  String.raw`^(?:not|no|never)\s+(${TERM}(?:\s+${TERM}){0,2})\s*(?:[,—–]|--| - )\s*(.+)$`,
  "i",
);
/** "switched from Y to X", "moved from Y to X", "Y → X". */
const FROM_TO = new RegExp(
  String.raw`\b(?:switch(?:ed)?|mov(?:e|ed)|migrat(?:e|ed)|went|go|port(?:ed)?|chang(?:e|ed))\s+(?:\w+\s+)?` +
    String.raw`from\s+(${TERM}(?:\s+${TERM}){0,1})\s+to\s+(${TERM}(?:\s+${TERM}){0,2})`,
  "i",
);
const ARROW = new RegExp(String.raw`(${TERM})\s*(?:→|->|=>)\s*(${TERM})`, "i");
/** Terms that never name a choice: too common to be one side of a rivalry. */
const NOT_A_SIDE = /^(?:\d.*|.{1,1}|code|file|files|test|tests|thing|way|time|one|new|old|default)$/;

/** Words next to a contrast marker that never name one side of it. */
const SIDE_STOP = new Set(
  (
    "through across everywhere anywhere here there just plain simply directly manually by hand for in on at from of with next near inside outside " +
    // The particle of a phrasal verb ("bring the stack up", "spin it down"): part of the command, not the choice.
    "up down out off back away around"
  ).split(" "),
);

/**
 * The terms naming one side of a contrast: the content terms nearest the marker (at most `most`),
 * without words too common in this user's prompts to name a choice (in over a tenth of them, once
 * there are 50). `near` is "end" when the side ends at the marker, "start" when it starts there.
 */
function sideTerms(
  words: string,
  near: "start" | "end",
  df: Readonly<Record<string, number>>,
  n: number,
  most: number,
): string[] {
  const ws = words.trim().split(/\s+/);
  if (near === "end") ws.reverse();
  const out: string[] = [];
  for (const w of ws.slice(0, SIDE)) {
    if (SIDE_STOP.has(w.toLowerCase())) continue;
    for (const t of lessonTokens(w)) {
      if (NOT_A_SIDE.test(t) || SIDE_STOP.has(t) || out.includes(t)) continue;
      if (n >= 50 && (termCount(df, t) ?? 0) > 0.1 * n) continue;
      out.push(t);
    }
    if (out.length >= most) break;
  }
  return out.slice(0, most);
}

/** The (preferred, avoided) term pairs a user's turn states by contrast. */
export function contrastPairs(
  prompt: string,
  df: Readonly<Record<string, number>>,
  nPrompts = 0,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (x: string, near: "start" | "end", y: string, nearY: "start" | "end") => {
    // What is preferred is usually the word right at the marker ("pnpm, not npm"); what is avoided
    // may be a short phrase ("raw kubectl", "tempfile.mkdtemp + cleanup").
    const xs = sideTerms(x, near, df, nPrompts, 1);
    const ys = sideTerms(y, nearY, df, nPrompts, 2);
    for (const a of xs) for (const b of ys) if (a !== b && !ys.includes(a) && !xs.includes(b)) out.push([a, b]);
  };
  const text = prompt.replace(/```[\s\S]*?(?:```|$)/g, "\n").replaceAll("’", "'");
  for (const raw of text.split(CLAUSE)) {
    const s = raw.trim();
    if (!s || s.length > 400) continue;
    const ft = FROM_TO.exec(s);
    if (ft) {
      add(ft[2]!, "start", ft[1]!, "end");
      continue;
    }
    const ar = ARROW.exec(s);
    if (ar) {
      add(ar[2]!, "start", ar[1]!, "end");
      continue;
    }
    const yx = Y_THEN_X.exec(s);
    if (yx) {
      add(yx[2]!, "start", yx[1]!, "end");
      continue;
    }
    const xy = X_THEN_Y.exec(s);
    if (xy) add(xy[1]!, "end", xy[2]!, "start");
  }
  // A change of practice said in two clauses: "we ditched changesets. cargo release does it now".
  const off = GIVEN_UP.exec(text) ?? DEPENDENCY_REMOVED.exec(text);
  const on = off ? TAKEN_UP.exec(text) : null;
  if (off && on) add(on[1] ?? on[2]!, "start", off[1]!, "start");
  return out;
}

/** A command's words without environment assignments, `sudo` and flags (lower-case). */
function commandWords(action: string | undefined): string[] {
  const tool = agentTool(action);
  if (!tool.startsWith("$ ")) return [];
  return tool
    .slice(2)
    .trim()
    .split(/\s+/)
    .filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w) && w !== "sudo" && !w.startsWith("-"))
    .slice(0, 3)
    .map((w) => w.toLowerCase().replace(/^['"]|['"]$/g, ""));
}

/**
 * The (preferred, avoided) pair the agent's own commands around a short turn give: the first word
 * where the command after the turn differs from the one before it (`npm install` → `pnpm add`
 * gives pnpm over npm), kept only when the turn names one of the two (the user spoke of that
 * choice, and the agent changed it).
 */
export function actionPair(
  prompt: string,
  before: string | undefined,
  after: string | undefined,
): [string, string] | undefined {
  if (prompt.split(/\s+/).length > 30) return undefined;
  const b = commandWords(before);
  const a = commandWords(after);
  if (!a.length || !b.length) return undefined;
  for (let i = 0; i < Math.min(a.length, b.length, 2); i++) {
    if (a[i] === b[i]) continue;
    const x = a[i]!;
    const y = b[i]!;
    if (x.includes("/") || y.includes("/") || NOT_A_SIDE.test(x) || NOT_A_SIDE.test(y)) return undefined;
    const toks = lessonTokens(prompt);
    return toks.has(x) || toks.has(y) ? [x, y] : undefined;
  }
  return undefined;
}

/**
 * The terms of the agent's action right after a turn that the action before it did not have: what
 * the correction changed (`-race` added to `go test`, `pnpm add` instead of `npm install`, the
 * words of the line an edit now writes, the folder it writes in). Empty when there is no action
 * after it, or nothing changed. It joins two corrections (lessons.ts); it never makes a sentence a
 * correction by itself (that needs a redo: lesson-rule.ts, isRedo).
 */
export function correctedAction(before: string | undefined, after: string | undefined): string[] {
  const termsOf = (action: string | undefined): string[] => {
    const tool = agentTool(action);
    if (tool.startsWith("$ "))
      return tool
        .slice(2)
        .trim()
        .split(/\s+/)
        .slice(0, 8)
        .map((w) => w.toLowerCase().replace(/^['"]|['"]$/g, ""))
        .filter((w) => w.length >= 2 && !/^[./]*$/.test(w) && !w.endsWith("/..."));
    const edit = /^edit (\S+?): (.*)$/.exec(tool);
    if (!edit) return [];
    const path = edit[1]!;
    const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";
    return [...(dir ? [`dir:${dir}`] : []), ...lessonTokens(edit[2]!)];
  };
  // An edit says what was corrected when it rewrites the file edited before (or one of that name
  // elsewhere), or moves the change to another file of the same folder (the crate's error.rs, not
  // the module just edited), or of a folder one or two above it (the docs' SUMMARY.md that lists a
  // page just added under it): that file is the correction. An edit elsewhere is the task going on.
  const ea = editedPath(after);
  const eb = editedPath(before);
  if (ea !== undefined && eb !== undefined && !sameFileName(ea, eb)) {
    const folder = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");
    const fa = folder(ea);
    const fb = folder(eb);
    const above = fa !== "" && fb.startsWith(`${fa}/`) && fb.slice(fa.length + 1).split("/").length <= 2;
    if (!(fa === fb || above)) return [];
    const role = splitRole(eb, ea);
    return [`file:${ea.slice(ea.lastIndexOf("/") + 1).toLowerCase()}`, ...(role ? [`role:${role}`] : [])];
  }
  if (ea !== undefined && eb === undefined) return [];
  // A command that only looks (`sed -n 1,200p file`, `cat`, `grep`, `git diff`) is the agent reading
  // before it acts, not what it changed.
  if (readsOnly(after)) return [];
  // Putting a file back (`git checkout -- config/baseline.xml`, `git restore x`): the file the
  // action before should not have changed is the correction, whatever runs after it.
  const restored = restoredFile(after);
  if (restored) return [`file:${restored}`];
  // A chain of commands that puts the old way away and then runs another program (`docker compose
  // down && ./bin/db up`, after `docker compose up`): the corrected action is the part that runs the
  // other program; the cleanup only says what was given up.
  const now = ea === undefined ? otherPart(before, after) : after;
  // An edit's terms are its lines' (after the folder): what it wrote that the edit before did not,
  // the first four of them.
  const a = termsOf(now);
  if (!a.length) return [];
  const b = new Set(termsOf(before));
  // The object the edit before already worked on (`berths` in `berths.first`) is what both edits
  // are about, not what changed: `berth` after `berths.first` is no correction's term.
  if (ea !== undefined) {
    const objects = new Set(
      [...b].flatMap((t) => (/^[a-z]\w*\.\w/.test(t) ? [...lessonTokens(t.split(".")[0]!)] : [])),
    );
    const added = a.filter((t) => !b.has(t) && !objects.has(t));
    // A small rewrite of the line the agent had just written (it kept all its terms and added one or
    // two): what it added is the correction however short it is, marked `+` (`+ct` when
    // `ToListAsync()` became `ToListAsync(ct)`). A short word of a larger edit stays noise.
    const small = b.size >= 3 && added.length <= 2 && [...b].every((t) => a.includes(t));
    return added.map((t) => (small && SHORT_TERM.test(t) && !CODE_WORDS.has(t) ? `+${t}` : t)).slice(0, 4);
  }
  // A command whose tool changed (`./gradlew …` then `just android-debug`) names the new tool.
  const ha = commandHead(now);
  const hb = commandHead(before);
  const tool = ha && hb && ha !== hb ? [`tool:${ha}`] : [];
  return [...new Set([...tool, ...a.filter((t) => !b.has(t))])].slice(0, 6);
}

/**
 * The part of a file's name that says its role (`previews.kt` of `CartPreviews.kt`, `stories.tsx`
 * of `cart.stories.tsx`), when the agent moved code from one file of a thing to another file of
 * the same thing with another role (`CartScreen.kt` → `CartPreviews.kt`): the kind of file the
 * code belongs in, which the same correction about another thing shares.
 */
function splitRole(from: string, to: string): string | undefined {
  const parts = (path: string) => {
    const name = path.slice(path.lastIndexOf("/") + 1);
    const dot = name.lastIndexOf(".");
    const stem = dot > 0 ? name.slice(0, dot) : name;
    const words = stem
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
      .split(/[\s._-]+/)
      .filter(Boolean)
      .map((w) => w.toLowerCase());
    return { words, ext: dot > 0 ? name.slice(dot + 1).toLowerCase() : "" };
  };
  const a = parts(from);
  const b = parts(to);
  if (a.words.length < 2 || b.words.length < 2 || a.ext !== b.ext) return undefined;
  // The same thing (every word but the last), another role (the last word).
  const thing = (w: readonly string[]) => w.slice(0, -1).join(" ");
  if (thing(a.words) !== thing(b.words) || a.words.at(-1) === b.words.at(-1)) return undefined;
  return `${b.words.at(-1)}.${b.ext}`;
}

/**
 * Of a chained command (`a && b`, `a; b`), the parts that run another program than the command
 * before it did, when there is such a part and another that does not (and none runs that command
 * again); else the command itself.
 */
function otherPart(before: string | undefined, after: string | undefined): string | undefined {
  const hb = commandHead(before);
  const tool = agentTool(after);
  if (!hb || !tool.startsWith("$ ")) return after;
  const parts = tool
    .slice(2)
    .split(/\s*(?:&&|\|\||;)\s*/)
    .filter(Boolean)
    .map((p) => `$ ${p}`);
  // The command before run again first (`pnpm build && git push` after `pnpm build`) is the task going on.
  const again = agentTool(before).slice(2).trim();
  if (parts.length < 2 || parts.some((p) => p.slice(2).trim() === again)) return after;
  const other = parts.filter((p) => {
    const h = commandHead(p);
    return h !== undefined && h !== hb && h !== "cd" && !READERS.has(h);
  });
  return other.length && other.length < parts.length ? `$ ${other.map((p) => p.slice(2)).join(" && ")}` : after;
}

/** A short name an edit may add (`ct`, `tz`, `id2`): evidence only as the whole of a small rewrite. */
const SHORT_TERM = /^[\p{L}][\p{L}\p{N}_]{1,3}$/u;
/** Short words of code that any rewrite may add. */
const CODE_WORDS = new Set(
  "if for var let val new int str def fn try nil null none true false and or not in is as".split(" "),
);

/** Programs that only read, and git's reading subcommands; `sed` reads when it prints (-n) and edits nothing (-i). */
const READERS = new Set("cat head tail less more bat grep rg ag ack ls find fd wc tree file stat which pwd".split(" "));
const GIT_READS = /^(?:diff|log|status|show|blame|grep|ls-files)$/;

/** The file name a `git checkout -- <path>` / `git restore <path>` puts back, if the action is one. */
function restoredFile(action: string | undefined): string | undefined {
  const words = commandArgs(action);
  if (words[0] !== "git" || !/^(?:checkout|restore)$/.test(words[1] ?? "")) return undefined;
  const rest = words.slice(2);
  const dash = rest.indexOf("--");
  const path = words[1] === "restore" ? rest.find((w) => !w.startsWith("-")) : dash >= 0 ? rest[dash + 1] : undefined;
  if (!path || path === "." || path === "&&") return undefined;
  return path.slice(path.lastIndexOf("/") + 1).toLowerCase();
}

/** Whether an agent action is a command that only reads files or state. */
function readsOnly(action: string | undefined): boolean {
  const head = commandHead(action);
  if (!head) return false;
  const words = commandArgs(action);
  if (READERS.has(head)) return true;
  if (head === "sed") return words.includes("-n") && !words.some((w) => /^-\w*i/.test(w));
  if (head === "git") return GIT_READS.test(words.find((w, k) => k > 0 && !w.startsWith("-")) ?? "");
  return false;
}

/** The program a command runs, past a leading `cd <dir> &&`, environment assignments and `sudo`. */
function commandHead(action: string | undefined): string | undefined {
  const head = commandArgs(action)[0]?.toLowerCase();
  return head ? head.slice(head.lastIndexOf("/") + 1) : undefined;
}

/**
 * A command's words past a leading `cd <dir> &&`, environment assignments and `sudo`, flags kept
 * (commandWords drops them); none for an edit.
 */
function commandArgs(action: string | undefined): string[] {
  const tool = agentTool(action);
  if (!tool.startsWith("$ ")) return [];
  return tool
    .slice(2)
    .trim()
    .split(/\s+/)
    .filter((w) => w && !/^\w+=/.test(w) && w !== "sudo");
}

/** Learned pairs as the book keeps them: "preferred|avoided" → times seen. */
export type LearnedPairs = Record<string, number>;

/** Each learned term's topic (`learned:<its group's first term>`), grouped from the pairs. */
export function learnedTopics(pairs: Readonly<LearnedPairs>): Map<string, string> {
  const parent = new Map<string, string>();
  const size = new Map<string, number>();
  const find = (x: string): string => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r)!;
    parent.set(x, r);
    return r;
  };
  const make = (x: string) => {
    if (!parent.has(x)) {
      parent.set(x, x);
      size.set(x, 1);
    }
  };
  // The most often seen pairs first: a group fills with what the user says most.
  const keys = Object.keys(pairs).sort((a, b) => pairs[b]! - pairs[a]! || (a < b ? -1 : 1));
  for (const k of keys) {
    const [x, y] = k.split("|") as [string, string];
    if (!x || !y) continue;
    make(x);
    make(y);
    const rx = find(x);
    const ry = find(y);
    if (rx === ry) continue;
    if (size.get(rx)! + size.get(ry)! > MAX_GROUP) continue;
    const [big, small] = rx < ry ? [rx, ry] : [ry, rx];
    parent.set(small, big);
    size.set(big, size.get(rx)! + size.get(ry)!);
  }
  const out = new Map<string, string>();
  for (const x of parent.keys()) out.set(x, `learned:${find(x)}`);
  return out;
}
