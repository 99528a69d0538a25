import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  errorMessage,
  isCredentialShaped,
  log,
  maskCredentials,
  redactText,
  removeOrphanTemps,
  sha256,
  writeFileAtomic,
} from "../lib/index.ts";
import { readRegularFile } from "./adopt/read.ts";
import { familiesOf } from "./lesson-family.ts";
import { actionPair, contrastPairs, correctedAction, type LearnedPairs, learnedTopics } from "./lesson-learned.ts";
import { getRules, setLearned } from "./learned-block.ts";
import {
  actionKey,
  actionTerms,
  asSaid,
  announcedChange,
  asks,
  distinctiveFix,
  idfWeights,
  instructionsOf,
  lessonTokens,
  notARule,
  opposite,
  type Polarity,
  polarityOf,
  followUpOf,
  ownsUp,
  reactionOf,
  rerun,
  respell,
  topicsOf,
  sameInstruction,
  setLearnedTopics,
  setSpelling,
  settingChanged,
  settingsOf,
  swapChange,
  termCount,
  topicOfLoose,
  UNIFORM,
  undoesOnly,
  type Weights,
} from "./lesson-rule.ts";

/**
 * Lessons: recurring corrections and stated preferences, learned without a model.
 *
 * Rule (documented in docs/sleep.md, "Lessons"):
 * 1. An *instruction* is one sentence of a user prompt read as a standing rule by its shape and its
 *    context: the agent's action right before it, the family of practice it names, where it sits
 *    in the session (lesson-rule.ts, instructionsOf). Task requests, questions and anything
 *    credential-shaped are not rules. A model's rules, when a model read the session, pass the
 *    same reading (notARule).
 * 2. Two instructions say the same thing when their rarity-weighted terms match (sharing a word),
 *    they follow the same agent action and share a rare word, they name one topic of competing
 *    choices (of the table, or learned from this user's sessions: lesson-learned.ts) without
 *    contradicting each other, their corrected actions share a changed flag, path or folder, or
 *    they are about one family of practice and agree on more (the same action, or nothing else
 *    named), or one was said up front in an opening message and the agent's action the other
 *    corrected did what it avoids, or its redo took up what it names (a rare word of it).
 *    Clustered single-link, incrementally. With a model, a saying is read twice, in the
 *    model's normalised form and in the user's own words: either reading joins, either reading's
 *    contradiction keeps apart.
 * 3. A cluster is a *lesson* when it was said in ≥ 2 distinct sessions or on ≥ 2 distinct days.
 *    One-off remarks never become lessons.
 * 4. The rule is the model's normalised form, else the member closest to all others, in the user's
 *    own words (a leading "no," removed). With no model the proposal is marked **unverified**.
 */

/** One instruction seen in one session. */
interface Observation {
  session_id: string;
  source: string;
  /** ISO time of the session (its end, else its start; "" when unknown). */
  at: string;
  /** The sentence, redacted. */
  quote: string;
  /**
   * `reaction`: a short turn right after an agent command or edit that states no rule in its words
   * ("again.", "-race"); never a lesson alone, it joins the sayings that followed the same action
   * in other sessions (`key`).
   */
  kind: "correction" | "preference" | "reaction";
  /** The night that first read it. */
  night: number;
  /** The user's request just before it (what was being corrected), redacted; "" when none. */
  context?: string;
  /** The model's normalised form of the rule ("Use pnpm, not npm"), when a model read the session. */
  norm?: string;
  /**
   * Words of the normalised form that the user said around the rule, in the sentence the model
   * quoted, and that the rule-based reading cut away from it ("looks fine" of "looks fine, but keep
   * X"): they are no part of the rule, and are left out when the normalised form is clustered.
   */
  beside?: string[];
  /** Key terms of the agent's action right before it (`npm install`), when the harvest kept it. */
  act?: string[];
  /** The precise action right before it (`run:go test ingest`, `edit:ci.yml`; lesson-rule.ts actionKey). */
  key?: string;
  /**
   * Terms of the agent's action right after it that the action before it lacked (`-race`,
   * `pnpm`, `dir:internal/x`): what the agent changed in answer, evidence of what was corrected.
   */
  fix?: string[];
  /** The cluster it joined (assigned once; only new observations are clustered on a later night). */
  cluster?: number;
  /** Said in the session's opening message, before the agent did anything (a preference stated up front). */
  opening?: true;
}

/** What is remembered about one lesson across nights. */
interface LessonRecord {
  id: string;
  rule: string;
  /** Night it was first proposed. */
  proposed_night: number;
  /** Night the rule was first seen in the live memory file (adopted), 0 = not adopted. */
  adopted_night: number;
  /** Last night an observation supported it. */
  last_support_night: number;
  /** Explicitly replaced or retired by a later adopted proposal. */
  superseded_by?: string;
}

/** The per-project lesson book persisted in the state directory. */
export interface LessonBook {
  version: 1;
  project: string;
  observations: Observation[];
  lessons: LessonRecord[];
  /** In how many of this project's prompts each term occurs (the rarity weights of clustering). */
  df?: Record<string, number>;
  /** Prompts counted in `df`. */
  n_prompts?: number;
  /** The next cluster number. */
  next_cluster?: number;
  /** Rival terms learned from this user's turns and the agent's corrected commands ("pnpm|npm" → times seen). */
  learned?: LearnedPairs;
}

/**
 * Read and cluster with the topics this book has learned (lesson-learned.ts): the pairs a stated
 * contrast or a changed command seen twice backs (learnPairs' counts). A topic joins two sayings
 * that share no word, so one changed command is too little: the agent running `terraform fmt`
 * after a `git add` once made git and terraform rivals, and every terraform saying one topic.
 */
function useLearned(book: LessonBook): void {
  const proven = Object.fromEntries(Object.entries(book.learned ?? {}).filter(([, n]) => n >= 2));
  if (setLearnedTopics(learnedTopics(proven))) POLARITY.clear();
}

/**
 * Learn rival pairs from tonight's sessions: contrast forms in the turns (and in a model's
 * normalised rules), and the agent's changed commands.
 */
function learnPairs(
  book: LessonBook,
  digests: readonly LessonDigest[],
  modelRules?: ReadonlyMap<string, ModelRules>,
): void {
  const df = book.df ?? {};
  book.learned ??= {};
  const learned = book.learned;
  // A contrast the user stated ("polars, not pandas") counts twice: once is proof (useLearned).
  // A changed command once (`git add`, then `terraform fmt`) may be the task going on.
  const add = (pair: [string, string] | undefined, n: number) => {
    if (!pair) return;
    const k = `${pair[0]}|${pair[1]}`;
    learned[k] = (learned[k] ?? 0) + n;
  };
  for (const d of digests)
    d.user_prompts.forEach((raw, i) => {
      const p = maskCredentials(raw);
      for (const pair of contrastPairs(p, df, book.n_prompts ?? 0)) add(pair, 2);
      if (i > 0) add(actionPair(p, d.agent_before?.[i], afterTurn(d, i)), 1);
    });
  // A model's normalised rule ("Use pnpm, not npm.") states its contrast plainly.
  for (const d of digests)
    for (const r of modelRules?.get(d.session_id)?.rules ?? [])
      if (!isCredentialShaped(r.rule)) for (const pair of contrastPairs(r.rule, df, book.n_prompts ?? 0)) add(pair, 2);
  // The book keeps the most seen pairs.
  const keys = Object.keys(learned);
  if (keys.length > MAX_LEARNED) {
    keys.sort((a, b) => learned[a]! - learned[b]!);
    for (const k of keys.slice(0, keys.length - MAX_LEARNED)) delete learned[k];
  }
}

/** One source session of an evidence card. */
interface EvidenceSource {
  session_id: string;
  source: string;
  date: string;
  quote: string;
  /** The request the instruction was given on (used to replay the lesson). */
  context?: string;
}

/** The evidence card of one staged memory edit (issue 16 §3). */
export interface LessonCard {
  id: string;
  op: "add" | "replace" | "retire";
  rule: string;
  /** The adopted rule this replaces or retires. */
  previous_rule?: string;
  target: string;
  /** Every memory file the edit is staged for (the primary `target` first), when more than one. */
  targets?: string[];
  recurrences: number;
  n_sessions: number;
  first_seen: string;
  last_seen: string;
  sources: EvidenceSource[];
  /** "unverified" (no replay ran) or the gate's verdict on a replay. */
  verification:
    | "unverified"
    | {
        verdict: "accept" | "reject" | "undecided";
        delta: number;
        ci: [number, number];
        n: number;
        regressions: string[];
        /** The gate rule that decided (gated consolidation edits). */
        rule?: "strict" | "paired" | "posterior";
        /** Under the strict rule: what the paired test said on the same tasks. */
        paired_verdict?: "accept" | "reject" | "undecided";
      };
  cost: { tokens: number; cost_usd: number };
  note?: string;
}

/** Observations kept per project (oldest dropped first). */
const MAX_OBSERVATIONS = 2000;
/** Terms whose prompt counts are kept per project (the rarest go first past it). */
const MAX_DF_TERMS = 20_000;
/** Learned rival pairs kept per project. */
const MAX_LEARNED = 2_000;

export { instructionsOf, lessonTokens, sameInstruction } from "./lesson-rule.ts";

/** The digest fields lessons read. */
interface LessonDigest {
  session_id: string;
  source?: string;
  started_at?: string;
  ended_at?: string;
  user_prompts: readonly string[];
  /** What the agent did or said right before each prompt (index for index), when the harvest kept it. */
  agent_before?: readonly string[];
  /** What the agent did first after each prompt (index for index), when the harvest kept it. */
  agent_first?: readonly string[];
  /** The agent's first words after each prompt (index for index), when the harvest kept them. */
  agent_reply?: readonly string[];
}

/**
 * What the agent did right after prompt i: its first command or edit (the corrected action, after a
 * correction), else (a digest read before that was kept) its last action of that turn.
 */
function afterTurn(d: LessonDigest, i: number): string | undefined {
  return d.agent_first?.[i] || d.agent_before?.[i + 1];
}

/** A session's standing rules as a model read them (normalised form and the user's own words). */
export interface ModelRules {
  session_id: string;
  rules: Array<{ rule: string; quote: string }>;
}

/**
 * Add tonight's sessions to the book (a session re-read after new turns replaces its old
 * observations). With `modelRules` for a session, its observations are the model's rules (each
 * with the user's quote) instead of the rule-based reading. Returns how many sentences were kept
 * out because they held a credential.
 */
export function observe(
  book: LessonBook,
  digests: readonly LessonDigest[],
  night: number,
  modelRules?: ReadonlyMap<string, ModelRules>,
): { credentialSentences: number } {
  const skipped = { credential: 0 };
  // Keyed by any word a user typed ("constructor", "__proto__"): an object without a prototype.
  book.df = Object.assign(Object.create(null) as Record<string, number>, book.df);
  const df = book.df;
  // Counted as typed (slips are read against the counts once they are complete).
  setSpelling(undefined);
  // Counted on the masked text: a credential is never a term of the lesson store.
  for (const d of digests) {
    for (const p of d.user_prompts)
      for (const t of lessonTokens(maskCredentials(p))) df[t] = (termCount(df, t) ?? 0) + 1;
    book.n_prompts = (book.n_prompts ?? 0) + d.user_prompts.length;
  }
  setSpelling(df);
  POLARITY.clear();
  // What tonight's sessions teach about rival choices reads tonight's sayings already.
  learnPairs(book, digests, modelRules);
  useLearned(book);
  for (const d of digests) {
    const fresh: Observation[] = [];
    const base = {
      session_id: d.session_id,
      source: d.source ?? "",
      at: d.ended_at || d.started_at || "",
      night,
    };
    // The rule-based reading, then the model's rules: the model's normalised form replaces the
    // user's words where both found the same saying, and what only the model found is added.
    d.user_prompts.forEach((typed, i) => {
      // Read with its slips of the keyboard undone ("beofre you say done"); quoted as typed.
      const p = respell(typed);
      const said = (quote: string) => maskCredentials(p === typed ? quote : asSaid(quote, typed));
      const context = maskCredentials((i > 0 ? d.user_prompts[i - 1]! : p).slice(0, 400));
      const agentBefore = i > 0 ? d.agent_before?.[i] : undefined;
      const agentAfter = i > 0 ? afterTurn(d, i) : undefined;
      const act = actionTerms(agentBefore);
      const key = actionKey(agentBefore);
      const fix = i > 0 ? correctedAction(agentBefore, agentAfter) : [];
      // Where the turn stood: the request before it and the agent's actions around it.
      const where = {
        ...base,
        context,
        ...(act.length ? { act } : {}),
        ...(key ? { key } : {}),
        ...(fix.length ? { fix } : {}),
      };
      const found = instructionsOf(p, i > 0, { agentBefore, agentAfter, skipped });
      // A rule said as how things are, after which the agent changed what it had just done, corrected it
      // ("every new page needs an entry in the table of contents", then an edit of SUMMARY.md); so
      // does any rule said right before the agent reran its command another way ("reword it pls: …",
      // then `git commit --amend`).
      const redone = fix.some(distinctiveFix);
      // The agent owned up to a mistake in answer ("You're right, switching to pnpm"): a correction.
      const acked = i > 0 && ownsUp(d.agent_reply?.[i]);
      for (const ins of found)
        fresh.push({
          ...where,
          ...(i === 0 && ins.kind === "preference" ? { opening: true as const } : {}),
          quote: said(ins.quote),
          // A bare "revert that" states no rule: it objects to the action before it, as a reaction does
          // (it joins what was said after that same action in another session, never a rule by its word).
          kind:
            key && undoesOnly(ins.quote)
              ? "reaction"
              : (ins.stated && redone) || (redone && rerun(agentBefore, agentAfter)) || acked
                ? "correction"
                : ins.kind,
        });
      const reaction =
        i > 0 && found.length === 0 ? (reactionOf(p, agentBefore, acked) ?? followUpOf(p, fix)) : undefined;
      if (reaction) fresh.push({ ...where, quote: said(reaction), kind: "reaction" });
    });
    for (const r of modelRules?.get(d.session_id)?.rules ?? []) {
      if (isCredentialShaped(r.rule) || isCredentialShaped(r.quote)) {
        skipped.credential++;
        continue;
      }
      if (notARule(r.quote, d.user_prompts) || CHATTER_RULE.test(r.rule.replace(/\s*\(not: [^)]*\)\.?$/, ""))) continue;
      const norm = maskCredentials(r.rule.slice(0, 240));
      const quote = maskCredentials(r.quote.slice(0, 240));
      const q = quote.toLowerCase();
      const same = fresh.find(
        (f) => !f.norm && (f.quote.toLowerCase().includes(q) || q.includes(f.quote.toLowerCase())),
      );
      if (same) {
        same.norm = norm;
        // The model's form may carry the words around the rule (its quote is the whole sentence).
        // Only its terms (never "not" or "only": what takes a side stays), and none the rule says.
        const own = lessonTokens(same.quote);
        const ownWords = new Set(plainWords(same.quote));
        const inNorm = new Set(plainWords(norm));
        const cutAway = (x: string) => {
          const t = lessonTokens(x);
          return !ownWords.has(x) && t.size > 0 && ![...t].some((y) => own.has(y));
        };
        const beside = [...new Set(plainWords(quote))].filter((x) => inNorm.has(x) && cutAway(x));
        if (beside.length) same.beside = beside;
        // A model read a rule in it: no longer a bare reaction.
        if (same.kind === "reaction") same.kind = "correction";
        continue;
      }
      const i = d.user_prompts.findIndex((p) => p.includes(r.quote.slice(0, 40)));
      const context = i > 0 ? maskCredentials(d.user_prompts[i - 1]!.slice(0, 400)) : "";
      const act = actionTerms(i > 0 ? d.agent_before?.[i] : undefined);
      const fix = i > 0 ? correctedAction(d.agent_before?.[i], afterTurn(d, i)) : [];
      fresh.push({
        ...base,
        quote,
        kind: "correction",
        norm,
        context,
        ...(act.length ? { act } : {}),
        ...(fix.length ? { fix } : {}),
      });
    }
    const old = book.observations.filter((o) => o.session_id === d.session_id);
    // Keep the night an observation was first read (support is counted from then), and its cluster.
    for (const f of fresh) {
      const was = old.find((o) => o.quote === f.quote && o.norm === f.norm);
      if (was) {
        f.night = was.night;
        if (was.cluster !== undefined) f.cluster = was.cluster;
      }
    }
    if (old.length) book.observations = book.observations.filter((o) => o.session_id !== d.session_id);
    book.observations.push(...fresh);
  }
  if (book.observations.length > MAX_OBSERVATIONS)
    book.observations.splice(0, book.observations.length - MAX_OBSERVATIONS);
  const terms = Object.keys(df);
  if (terms.length > MAX_DF_TERMS) {
    terms.sort((a, b) => (termCount(df, a) ?? 0) - (termCount(df, b) ?? 0));
    for (const t of terms.slice(0, terms.length - MAX_DF_TERMS)) delete df[t];
  }
  return { credentialSentences: skipped.credential };
}

interface Cluster {
  members: Observation[];
  tokens: Set<string>[];
}

/** Polarity of a text, memoised for one process (a night reads the same sayings many times). */
const POLARITY = new Map<string, Polarity>();
function polarityOfText(text: string): Polarity {
  let p = POLARITY.get(text);
  if (!p) {
    if (POLARITY.size > 20_000) POLARITY.clear();
    p = polarityOf(text);
    POLARITY.set(text, p);
  }
  return p;
}

/** A text's words, lower-cased, as typed (for comparing which words two texts share). */
const plainWords = (s: string) => s.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}_'’-]*/gu) ?? [];

/**
 * The text an observation is clustered on: normText, less the words the user said around the rule
 * that the rule-based reading cut away (`beside`).
 */
function clusterText(o: Observation): string {
  const text = normText(o);
  if (!o.norm || !o.beside?.length) return text;
  const cut = new Set(o.beside);
  return text
    .replace(/[\p{L}\p{N}][\p{L}\p{N}_'’-]*/gu, (x) => (cut.has(x.toLowerCase()) ? "" : x))
    .replace(/\s{2,}/g, " ");
}

/**
 * The text an observation is read by: the model's normalised form, else the user's words. A
 * trailing parenthesis of the normalised form that restates the agent's action ("… (not: npm
 * install)") is left out: the action is evidence of its own (`act`), and its words ("import",
 * "await") would join the rule to every other correction of the same kind of edit.
 */
function normText(o: Observation): string {
  if (!o.norm) return respell(o.quote);
  const act = o.act ?? [];
  const text = o.norm.replace(/[\s.]+$/, "");
  if (!act.length || !text.endsWith(")")) return o.norm;
  // The leftmost " (" whose tail restates the action (the tail may hold parentheses of its own).
  for (let i = text.indexOf(" ("); i > 0; i = text.indexOf(" (", i + 1)) {
    const tail = lessonTokens(text.slice(i));
    if (act.some((a) => tail.has(a))) return text.slice(0, i);
  }
  return o.norm;
}

/** Which text of a saying is read: the model's normalised form (clusterText) or the user's own words (saidText). */
type TextOf = (o: Observation) => string;

/**
 * A saying in the user's own words: the clause the rule-based reading cut from the sentence, or
 * the words a model quoted when only a model read it. Read beside a model's normalised form, so
 * that a poor form (the whole sentence, or a paraphrase that loses the term) never undoes what the
 * user's words join.
 */
const saidText: TextOf = (o) => respell(o.quote);

/**
 * The terms an observation is clustered on: its words, its topics (so that two sayings about one
 * topic meet in the index), and the agent's action it followed (`act:npm`, `act:install`): the
 * corrected action joins sayings that share few words.
 */
function clusterTokens(o: Observation, textOf: TextOf = clusterText): Set<string> {
  const text = textOf(o);
  const t = lessonTokens(text);
  for (const topic of topicsOf(polarityOfText(text))) t.add(`topic:${topic}`);
  for (const a of o.act ?? []) t.add(`act:${a}`);
  return t;
}

/** The format verbs a saying names (`%w`, `%v`, `%+v`): code its word reading leaves out. */
function formatVerbs(quote: string): string[] {
  return [...quote.matchAll(/(?<![\w%])%[+#]?[a-z](?![\w])/gi)].map((m) => m[0].toLowerCase());
}

/** An observation's cluster terms without its topics and the agent's action: its words alone. */
const wordsOf = (t: ReadonlySet<string>) =>
  new Set([...t].filter((x) => !x.startsWith("act:") && !x.startsWith("topic:")));

/**
 * Two sayings right after the same agent action (the same command, the same edited line) that
 * share a rare word correct the same thing, however else they are worded ("sort the imports" /
 * "one blank line between import groups", both after the same import edit).
 */
function sameActionSameWord(a: Observation, b: Observation, w: Weights): boolean {
  const aa = a.act ?? [];
  const ab = b.act ?? [];
  if (!aa.length || aa.length !== ab.length || !aa.every((x) => ab.includes(x))) return false;
  // The shared word is in the user's own words, not only in a model's normalised form (which may
  // restate the action: "… (not: git status)").
  const qb = lessonTokens(b.quote);
  for (const t of lessonTokens(a.quote)) if (qb.has(t) && w.distinctive(t)) return true;
  return false;
}

/** Parts of file names that name no particular file. */
const PLAIN_FILE_PART = new Set([
  "main",
  "index",
  "app",
  "mod",
  "lib",
  "src",
  "test",
  "tests",
  "spec",
  "util",
  "utils",
]);

/**
 * Two corrections right after the agent edited the same file, each naming that file in its own
 * words (a part of its name: "don't regenerate the detekt baseline" / "that xml is frozen", both
 * after an edit of detekt-baseline.xml): the file is what both object to.
 */
function sameFileNamed(a: Observation, b: Observation): boolean {
  if (a.kind !== "correction" || b.kind !== "correction" || a.session_id === b.session_id) return false;
  if (!a.key?.startsWith("edit:") || a.key !== b.key) return false;
  const parts = new Set(
    a.key
      .slice(5)
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter((x) => x.length >= 3 && !PLAIN_FILE_PART.has(x)),
  );
  const names = (o: Observation) => [...lessonTokens(o.quote)].some((t) => parts.has(t));
  return parts.size > 0 && names(a) && names(b);
}

/**
 * Two sayings about one family of practice (lesson-family.ts) that agree on more: right after the
 * same agent action ("exceptions belong at the edge" / "wrap it in err(…)", both after a `throw`
 * edit), or each about that one family and nothing else ("no any" / "don't silence the compiler
 * with ts-ignore").
 */
function sameFamily(a: Observation, b: Observation, fa: ReadonlySet<string>, fb: ReadonlySet<string>): boolean {
  const shared = [...fa].filter((f) => fb.has(f));
  if (!shared.length) return false;
  const aa = a.act ?? [];
  const ab = b.act ?? [];
  if (aa.length && aa.length === ab.length && aa.every((x) => ab.includes(x))) return true;
  return fa.size === 1 && fb.size === 1;
}

/** Two sayings in different sessions right after the same precise agent action (actionKey). */
function sameAction(a: Observation, b: Observation): boolean {
  return a.key !== undefined && a.key === b.key && a.session_id !== b.session_id;
}

/** The rarity weights of a book. */
function bookWeights(book: LessonBook): Weights {
  return book.df && book.n_prompts ? idfWeights(book.df, book.n_prompts) : UNIFORM;
}

/**
 * Give every observation that has none a cluster: an index from each term to the observations
 * holding it finds the candidates, so only new observations are compared, and only with those that
 * share a term. An observation joins every cluster it says the same as (single link, never across
 * opposite polarities); clusters it bridges merge. Nothing to do when nothing is new.
 */
function assignClusters(book: LessonBook, w: Weights): void {
  const obs = book.observations;
  if (!obs.some((o) => o.cluster === undefined)) return;
  // What each correction changed, with the namespace of a path-like term (`tracing::info` and
  // `tracing::debug` both moved to `tracing`).
  const fixOf = new Map(obs.map((o) => [o, withNamespaces(o.fix ?? [])] as const));
  const fixes = (o: Observation) => fixOf.get(o) ?? [];
  // A corrected action's term is evidence when few sayings share it.
  const fixCount = new Map<string, number>();
  for (const o of obs) for (const f of fixes(o)) fixCount.set(f, (fixCount.get(f) ?? 0) + 1);
  const withFix = obs.filter((o) => o.fix?.length).length;
  // What it changed: a flag, path, folder or new tool (`-race`, `dir:test/unit`, `tool:just`) or a
  // rarer word (`nextest`), not shell syntax, a one-letter flag or a command's common verb
  // (distinctiveFix); and shared by few sayings (a correction said in four or five sessions, each
  // followed by the same corrected action, is rare still).
  // A plain word must also be rare in the user's prompts: the project's own subject (`berth` in a
  // marina's app) is in many edits whatever they correct.
  const rareFix = (f: string) =>
    distinctiveFix(f) &&
    (fixCount.get(f) ?? 0) <= Math.max(6, 0.05 * withFix) &&
    (!/^\p{L}+$/u.test(f) || w.distinctive(f));
  // How many rare corrected-action terms two sayings of different sessions share. Sharing only
  // the tool the agent turned to (`./gradlew`) is no evidence when either also changed something
  // the other did not (`./gradlew spotlessApply` after "format first" is not "use the wrapper").
  const fixesShared = (a: Observation, b: Observation) => {
    if (a.session_id === b.session_id) return 0;
    const fa = fixes(a).filter(rareFix);
    const fb = fixes(b).filter(rareFix);
    const shared = fa.filter((f) => fb.some((g) => g === f || samePlace(f, g)));
    if (!shared.length) return 0;
    const ha = toolHeads(fixes(a));
    const hb = toolHeads(fixes(b));
    const toolOnly = shared.every((f) => isToolHead(f, ha));
    const more = (own: readonly string[], heads: ReadonlySet<string>, other: readonly string[]) =>
      own.some((f) => !isToolHead(f, heads) && !other.some((g) => g === f || samePlace(f, g)));
    return toolOnly && (more(fa, ha, fb) || more(fb, hb, fa)) ? 0 : shared.length;
  };
  const sharedFix = (a: Observation, b: Observation) => fixesShared(a, b) > 0;
  // The terms of the action a saying followed and of the rare things the agent changed after it.
  const termsOf = (xs: readonly string[]) => new Set(xs.flatMap((x) => [...lessonTokens(x)]));
  const acted = new Map<number, { before: Set<string>; after: Set<string> }>();
  const actedTerms = (k: number) => {
    let a = acted.get(k);
    if (!a) {
      const o = obs[k]!;
      a = {
        before: termsOf([...(o.act ?? []), o.key?.replace(/^\w+:/, "") ?? ""]),
        after: termsOf(
          fixes(o)
            .filter(rareFix)
            .map((f) => f.replace(/^\w+:/, "")),
        ),
      };
      acted.set(k, a);
    }
    return a;
  };
  const learnedTopic = (t: string | undefined) => t?.startsWith("learned:") === true;
  // A reaction states no rule: a term of it that is only a member of a topic learned from other
  // sayings' contrasts ("the build went from two minutes to ten" naming a learned term) is no side
  // it takes, so it keeps no reaction from the saying after the same action that avoids that term.
  const firm = (t: string) => !learnedTopic(topicOfLoose(t));
  // One reading of the sayings per text: the model's normalised form, and (when a model read any)
  // the user's own words as well. Two sayings join when either reading joins them.
  const readingOf = (textOf: TextOf) => {
    const toks = obs.map((o) => clusterTokens(o, textOf));
    // A preference joins on a corrected action only when both sayings name what the agent changed to
    // ("we're off joda now, java.time all the way" and "Instant not DateTime", each followed by
    // java.time.Instant): after a new wish the edit may as well be the task going on in that file.
    const sameFix = (i: number, j: number) => {
      const a = obs[i]!;
      const b = obs[j]!;
      if (a.kind === "reaction" || b.kind === "reaction" || !sharedFix(a, b)) return false;
      if (a.kind === "correction" && b.kind === "correction") return true;
      // Two rules said right after the same action, each followed by the same corrected action: two
      // changes announced ("maildev got replaced by smtp4dev" / "the old catcher is abandoned so we
      // switched", each then a query of the new inbox), or the agent turning to the same other tool
      // ("there's a make target for that" / "stop typing the raw docker commands", each after the same
      // `docker compose up` and then `make up`): the agent was told the same thing twice, in any words.
      // The same file edited again after a wish may be the task going on.
      if (sameAction(a, b) && changeOf(i) !== undefined && changeOf(j) !== undefined) return true;
      const fb = fixes(b);
      if (sameAction(a, b) && fixes(a).some((f) => f.startsWith("tool:") && fb.includes(f))) return true;
      return fixes(a).some((f) => rareFix(f) && fb.includes(f) && saysFix(toks[i]!, f) && saysFix(toks[j]!, f));
    };
    // One saying names what the agent changed to after the other ("cmp.Diff from now on" / "no more
    // require.Equal", after which the agent wrote cmp.Diff).
    // Naming only the tool it turned to (`cargo`, after `cargo clippy --workspace`) is no evidence:
    // another practice of that tool ("versions are cut with cargo release") names it too.
    const namedFix = (said: number, o: Observation) => {
      const fs = fixes(o).filter(rareFix);
      const heads = toolHeads(fixes(o));
      const more = fs.some((f) => !isToolHead(f, heads));
      return fs.some(
        (f) =>
          f.length >= 4 &&
          !(more && isToolHead(f, heads)) &&
          (namesTerm(toks[said]!, f) || namesTerm(toks[said]!, fileOfFix(f))),
      );
    };
    const namesFix = (i: number, j: number) =>
      obs[i]!.session_id !== obs[j]!.session_id && (namedFix(i, obs[j]!) || namedFix(j, obs[i]!));
    const pol = new Map<number, Polarity>();
    const polOf = (i: number) => {
      let p = pol.get(i);
      if (!p) {
        p = polarityOfText(textOf(obs[i]!));
        // A saying that announces a change takes sides on a learned topic only through what it gives up
        // or takes up: "the old catcher is abandoned so we switched, read the new one's v2 api" wants
        // no "api" of "composition api please, not the options object".
        const ch = changeOf(i);
        if (ch) {
          const aside = (t: string) => !ch.up.has(t) && !ch.off.has(t) && learnedTopic(topicOfLoose(t));
          p = {
            prefer: new Set([...p.prefer].filter((t) => !aside(t))),
            avoid: new Set([...p.avoid].filter((t) => !aside(t))),
          };
        }
        pol.set(i, p);
      }
      return p;
    };
    const stanceOf = (k: number): Polarity => {
      const p = polOf(k);
      if (obs[k]!.kind !== "reaction") return p;
      return { prefer: new Set([...p.prefer].filter(firm)), avoid: new Set([...p.avoid].filter(firm)) };
    };
    const fams = obs.map((o) => familiesOf(textOf(o), o.act));
    // A saying that announces a change never joins sayings it goes against ("we moved the logs to
    // json" and "plain log lines please", after which the agent dropped its json renderer).
    const changes = new Map<number, Change | undefined>();
    const changeOf = (i: number) => {
      if (!changes.has(i)) changes.set(i, obs[i]!.kind === "reaction" ? undefined : announcedChange(textOf(obs[i]!)));
      return changes.get(i);
    };
    // Each saying's own evidence, read once (a cluster's members are checked against many candidates).
    const evidence = new Map<number, ReturnType<typeof evidenceOf>>();
    const evidenceAt = (i: number) => {
      let e = evidence.get(i);
      if (!e) {
        e = evidenceOf([obs[i]!], textOf);
        // A reaction's words ask for no member of a learned topic (stanceOf); what the agent then changed still counts.
        if (obs[i]!.kind === "reaction") {
          const fixed = new Set(fixes(obs[i]!).map((f) => f.replace(/^tool:/, "")));
          e = { asks: new Set([...e.asks].filter((t) => firm(t) || fixed.has(t))), avoids: e.avoids };
        }
        evidence.set(i, e);
      }
      return e;
    };
    const leaves = (i: number, j: number) => changeOf(i) !== undefined && leavesBehind(obs[i]!, obs[j]!, textOf);
    const settings = new Map<number, Map<string, string>>();
    const settingsAt = (i: number) => {
      let s = settings.get(i);
      if (!s) {
        s = obs[i]!.kind === "reaction" ? new Map() : settingsOf(textOf(obs[i]!));
        settings.set(i, s);
      }
      return s;
    };
    const announcedAgainst = (i: number, j: number) => {
      const ci = changeOf(i);
      const cj = changeOf(j);
      if ((ci !== undefined && goesAgainst(ci, evidenceAt(j))) || (cj !== undefined && goesAgainst(cj, evidenceAt(i))))
        return true;
      if (leaves(i, j) || leaves(j, i)) return true;
      if (settingChanged(settingsAt(i), settingsAt(j))) return true;
      // One avoids what the other asks for, in words or in what its correction moved to ("swap the
      // http.get for the new client" after a correction that made the agent write http.get).
      const ej = evidenceAt(j).asks;
      const ei = evidenceAt(i).asks;
      return [...stanceOf(i).avoid].some((t) => ej.has(t)) || [...stanceOf(j).avoid].some((t) => ei.has(t));
    };
    // Two sayings that take the same side on a rare term, in any words: both want it, or both give it
    // up or avoid it ("we switched off noImplicitAny" / "noImplicitAny is false on purpose now").
    const sides = new Map<number, { up: string[]; off: Set<string> }>();
    const side = (k: number) => {
      let s = sides.get(k);
      if (!s) {
        const p = polOf(k);
        const ch = changeOf(k);
        const off = new Set([...p.avoid, ...(ch?.off ?? [])]);
        s = { up: [...p.prefer, ...(ch?.up ?? [])].filter((t) => !off.has(t)), off };
        sides.set(k, s);
      }
      return s;
    };
    const sameStance = (i: number, j: number) => {
      const a = side(i);
      const b = side(j);
      // Rare enough to name one thing (in at most about one prompt in seven): a stance taken in
      // several sayings makes its own term more frequent than the rarest words.
      const rare = (t: string) => !t.startsWith("topic:") && w.weight(t) >= 2;
      return [...a.off].some((t) => b.off.has(t) && rare(t)) || a.up.some((t) => b.up.includes(t) && rare(t));
    };
    // A topic learned from these sessions is met by a saying only through a rare word of it: a common
    // word ("check" of "lint check before you say done") is said of many things, and does not put
    // the saying on the topic learned from another one ("a null check, not a bang").
    const onTopic = (k: number, t: string) =>
      [...polOf(k).prefer, ...polOf(k).avoid].filter((x) => topicOfLoose(x) === t);
    const commonWordOnly = (t: string, i: number, j: number) =>
      learnedTopic(t) && (!onTopic(i, t).some((x) => w.distinctive(x)) || !onTopic(j, t).some((x) => w.distinctive(x)));
    // A rule said up front in a session's opening message meets the same correction said elsewhere
    // through what the agent did there, with a rare word of it (in few of this user's prompts): the
    // redo took up a word the rule does not avoid ("the web folder is a pnpm workspace" / "stop
    // that", after `npm install` and then `pnpm install`), or the corrected action did what the rule
    // avoids ("don't amend on the shared branch" / "others already pulled those", after `git commit
    // --amend`). An action that merely names the rule's word (`pnpm test`) is no evidence: the agent
    // may have followed the rule there and been corrected on something else.
    const rareOwn = new Map<number, string[]>();
    const rareWordsOf = (k: number) => {
      let r = rareOwn.get(k);
      if (!r) {
        r = [...wordsOf(toks[k]!)].filter((t) => t.length >= 2 && w.distinctive(t) && w.weight(t) >= 2);
        rareOwn.set(k, r);
      }
      return r;
    };
    const upFront = (p: number, c: number) => {
      const a = obs[p]!;
      const b = obs[c]!;
      if (!a.opening || b.opening || a.session_id === b.session_id || !b.fix?.length) return false;
      const { before, after } = actedTerms(c);
      const pol = polOf(p);
      // A tool's own file names the tool: the rule's "Makefile" is the redo's `make` (after a stated
      // correction only: a bare reaction's redo to `make fmt` may answer another rule of that tool).
      const took = (t: string) =>
        after.has(t) || (b.kind !== "reaction" && /^\w{3,}file$/.test(t) && after.has(t.slice(0, -4)));
      return rareWordsOf(p).some((t) => (took(t) && !pol.avoid.has(t)) || (before.has(t) && pol.avoid.has(t)));
    };
    const meetsUpFront = (i: number, j: number) => upFront(i, j) || upFront(j, i);
    // What a reaction's words share with other sayings: distinctive terms (code-ish ones too: a flag,
    // a `%w` verb, a file name) and families of practice.
    const said = new Map<number, Set<string>>();
    const saidAt = (k: number) => {
      let s = said.get(k);
      if (!s) {
        s = new Set([...wordsOf(toks[k]!)].filter((t) => w.distinctive(t)));
        for (const v of formatVerbs(textOf(obs[k]!))) s.add(v);
        for (const f of fams[k]!) s.add(`family:${f}`);
        said.set(k, s);
      }
      return s;
    };
    const wordsWith = (i: number, members: readonly number[]) => {
      const mine = saidAt(i);
      if (!mine.size) return 0;
      const theirs = new Set(members.filter((k) => k !== i).flatMap((k) => [...saidAt(k)]));
      return [...mine].filter((t) => theirs.has(t)).length;
    };
    // After the same action, two sayings that each have distinctive words of their own (none shared)
    // and corrected actions that share nothing, or of which only one changed something rare, object
    // to two different things ("did the type checker even run" and "assertions go through the fluent
    // helpers", both after one test file's edit).
    // A bare request to undo ("nah, roll that back") says nothing of its own: the action is all it is about.
    const actionOnlyApart = (i: number, j: number) => {
      if (!saidAt(i).size || !saidAt(j).size || undoesOnly(obs[i]!.quote) || undoesOnly(obs[j]!.quote)) return false;
      const fi = fixes(obs[i]!).filter(rareFix);
      const fj = fixes(obs[j]!).filter(rareFix);
      // Two new files named alike but for their numbers (`V25__add_note.sql`, `V30__add_note.sql`) are one change.
      const shape = (f: string) => f.replace(/\d+/g, "#");
      if (fi.some((f) => fj.some((g) => shape(f) === shape(g)))) return false;
      return fi.length > 0 || fj.length > 0;
    };
    // The index keys: an observation's terms and its families (two sayings of one family may share no word).
    // A reaction ("again.") is found only through the action it followed.
    const keys = (i: number) => {
      const o = obs[i]!;
      const action = o.key ? [`key:${o.key}`] : [];
      // What an opening rule names and what an action did meet in the index (upFront).
      const did = o.opening
        ? rareWordsOf(i).map((t) => t.replace(/^(\w{3,})file$/, "$1"))
        : o.fix?.length
          ? [...actedTerms(i).before, ...actedTerms(i).after]
          : [];
      const actedKeys = did.map((t) => `acted:${t}`);
      if (o.kind === "reaction")
        return [
          ...actedKeys,
          ...action,
          ...fixes(o)
            .filter(rareFix)
            .map((f) => `fix:${f}`),
        ];
      const fixed = fixes(o).filter(rareFix);
      return [
        ...toks[i]!,
        ...[...fams[i]!].map((f) => `family:${f}`),
        ...fixed.map((f) => `fix:${f}`),
        // The file or folder the agent then changed, as a saying's own term names it (namesFix).
        ...fixed.filter((f) => /^(?:file|dir):/.test(f)).map(fileOfFix),
        ...action,
        ...actedKeys,
      ];
    };
    // Two sayings that must never join: opposite sides, or a change announced against the other.
    const against = (i: number, j: number) => opposite(stanceOf(i), stanceOf(j)) || announcedAgainst(i, j);
    // Two stated sayings (not reactions) that say the same thing.
    const joins = (i: number, j: number) => {
      // The same words (rarity-weighted), or the same topic with no contradiction ("we don't use
      // prettier" / "formatting = biome"), say the same thing.
      const sameTopic = [...topicsOf(polOf(i))].some((t) => topicsOf(polOf(j)).has(t) && !commonWordOnly(t, i, j));
      // The agent's action is more evidence, never less: two sayings whose words match join
      // even when they followed different actions. It is never all the evidence: the words must
      // share a term too ("Amend that" and "we migrated to vitest", both after `git commit`, are
      // two things), or a family of practice must agree (sameFamily).
      const wi = wordsOf(toks[i]!);
      const wj = wordsOf(toks[j]!);
      const sharesWord = [...wi].some((t) => wj.has(t));
      return (
        sameTopic ||
        sameStance(i, j) ||
        (sharesWord && (sameInstruction(toks[i]!, toks[j]!, w) || sameInstruction(wi, wj, w))) ||
        sameActionSameWord(obs[i]!, obs[j]!, w) ||
        sameFileNamed(obs[i]!, obs[j]!) ||
        sameFix(i, j) ||
        namesFix(i, j) ||
        meetsUpFront(i, j) ||
        sameFamily(obs[i]!, obs[j]!, fams[i]!, fams[j]!)
      );
    };
    return { keys, against, joins, meetsUpFront, wordsWith, actionOnlyApart };
  };
  const readings = [readingOf(clusterText), ...(obs.some((o) => o.norm) ? [readingOf(saidText)] : [])];
  const keys = (i: number) => [...new Set(readings.flatMap((r) => r.keys(i)))];
  const index = new Map<string, number[]>();
  const addToIndex = (i: number) => {
    for (const t of keys(i)) {
      const l = index.get(t);
      if (l) l.push(i);
      else index.set(t, [i]);
    }
  };
  for (let i = 0; i < obs.length; i++) if (obs[i]!.cluster !== undefined) addToIndex(i);
  // Each cluster's observations, and whether two stated sayings contradict each other.
  const byCluster = new Map<number, number[]>();
  for (let i = 0; i < obs.length; i++) {
    const c = obs[i]!.cluster;
    if (c === undefined) continue;
    const members = byCluster.get(c);
    if (members) members.push(i);
    else byCluster.set(c, [i]);
  }
  // A contradiction in either reading keeps two sayings apart (the user's words may show one the form lost).
  const clash = (a: number, b: number) =>
    obs[a]!.kind !== "reaction" && obs[b]!.kind !== "reaction" && readings.some((r) => r.against(a, b));
  // The clusters holding a stated rule (not reactions alone).
  const stated = new Set(obs.filter((o) => o.cluster !== undefined && o.kind !== "reaction").map((o) => o.cluster!));
  let next = book.next_cluster ?? 1 + Math.max(0, ...obs.map((o) => o.cluster ?? 0));
  for (let i = 0; i < obs.length; i++) {
    if (obs[i]!.cluster !== undefined) continue;
    const seen = new Set<number>();
    const joined = new Set<number>();
    let latest: { cluster: number; at: string; score: number } | undefined;
    for (const t of keys(i)) {
      for (const j of index.get(t) ?? []) {
        if (seen.has(j)) continue;
        seen.add(j);
        // The readings in which the two do not go against each other.
        const open = readings.filter((r) => !r.against(i, j));
        if (!open.length) continue;
        // The agent repeated one action in two sessions and the user objected both times: a short
        // reaction that states no rule ("again.") is the same correction as what was said after
        // that action elsewhere. A reaction joins on that alone, one cluster only (it never bridges
        // two rules): the one said last, the user's current wish. A stated rule gathers the
        // reactions that are still alone, never a cluster through one (old and new sides of a flip
        // may follow the same action).
        if (obs[i]!.kind === "reaction" || obs[j]!.kind === "reaction") {
          // The evidence: the same action before, each rare term of what the agent changed after, a
          // rule said up front that the action met, and each distinctive term or family the words
          // share (with the cluster, for a reaction choosing one): "%w, not %v" after a build belongs
          // with the rule about wrapping errors said after it, not with a later one about log lines
          // said after that same build.
          const action = sameAction(obs[i]!, obs[j]!) ? 1 : 0;
          const fixed = fixesShared(obs[i]!, obs[j]!);
          const upFront = open.some((r) => r.meetsUpFront(i, j)) ? 1 : 0;
          if (!action && !fixed && !upFront) continue;
          const members = obs[i]!.kind === "reaction" ? (byCluster.get(obs[j]!.cluster!) ?? [j]) : [j];
          const words = Math.max(...open.map((r) => r.wordsWith(i, members)));
          // The action alone, with words and corrected actions that disagree, is no evidence.
          if (!fixed && !upFront && !words && open.every((r) => r.actionOnlyApart(i, j))) continue;
          const score = action + fixed + upFront + words;
          if (obs[i]!.kind === "reaction") {
            // The best-supported saying, and among equals the latest (`./gradlew spotlessApply` after
            // the objection belongs with "format first", not with "use ./gradlew" through `./gradlew`).
            if (!latest || score > latest.score || (score === latest.score && obs[j]!.at >= latest.at))
              latest = { cluster: obs[j]!.cluster!, at: obs[j]!.at, score };
          } else if (!stated.has(obs[j]!.cluster!)) joined.add(obs[j]!.cluster!);
          continue;
        }
        if (open.some((r) => r.joins(i, j))) joined.add(obs[j]!.cluster!);
      }
    }
    if (latest) joined.add(latest.cluster);
    // Never a cluster holding a saying that says the opposite, and never two clusters that
    // contradict each other merged through a saying that links both (single link is transitive:
    // "keep it under 88" and "we bumped it to 120" both near a third saying about wrapping).
    const ids: number[] = [];
    for (const x of [...joined].sort((a, b) => a - b)) {
      const members = byCluster.get(x) ?? [];
      if (members.some((k) => clash(i, k) || ids.some((y) => (byCluster.get(y) ?? []).some((l) => clash(k, l)))))
        continue;
      ids.push(x);
    }
    const id = ids[0] ?? next++;
    obs[i]!.cluster = id;
    if (obs[i]!.kind !== "reaction" || ids.some((x) => stated.has(x))) stated.add(id);
    const into = byCluster.get(id) ?? [];
    into.push(i);
    byCluster.set(id, into);
    if (ids.length > 1) {
      const merge = new Set(ids.slice(1));
      for (const o of obs) if (o.cluster !== undefined && merge.has(o.cluster)) o.cluster = id;
      for (const x of merge) {
        into.push(...(byCluster.get(x) ?? []));
        byCluster.delete(x);
      }
    }
    addToIndex(i);
  }
  book.next_cluster = next;
}

/**
 * Two paths of one place: the same folder, or one inside the other at a segment boundary
 * (`backend/tests/data` and `backend/tests/data/quote.json`; a saying's `tests/data` and the
 * corrected action's `backend/tests/data/quote.json`). Both must be paths of two segments or more.
 */
function samePlace(a: string, b: string): boolean {
  if (!a.includes("/") || !b.includes("/")) return false;
  const x = a.replace(/^(?:dir:|\.\/)/, "").replace(/\/$/, "");
  const y = b.replace(/^(?:dir:|\.\/)/, "").replace(/\/$/, "");
  if (x.length < 5 || y.length < 5) return false;
  const inside = (p: string, q: string) => `/${q}/`.includes(`/${p}/`);
  return inside(x, y) || inside(y, x);
}

/** A corrected action's file or folder as a saying's term would name it (`file:summary.md` → `summary.md`). */
const fileOfFix = (f: string) => f.replace(/^(?:file|dir):/, "");

/** A saying names a term: the term itself, or a path naming the same place. */
function namesTerm(toks: ReadonlySet<string>, f: string): boolean {
  if (toks.has(f)) return true;
  if (!f.includes("/")) return false;
  for (const t of toks) if (samePlace(t, f)) return true;
  return false;
}

/**
 * Whether a saying's terms name a corrected-action term: itself, its file, the package it is in or
 * its last name (`java.time` or `instant` for `java.time.instant`).
 */
function saysFix(toks: ReadonlySet<string>, f: string): boolean {
  const bare = f.replace(/^(?:file|tool|dir):|^\+/, "");
  if (namesTerm(toks, bare)) return true;
  for (const t of toks)
    if (t.length >= 4 && (bare.startsWith(`${t}.`) || bare.startsWith(`${t}::`) || bare.endsWith(`.${t}`))) return true;
  return false;
}

/** Terms with the namespace of each `a::b` term added (`tracing::info` → also `tracing`). */
function withNamespaces(fix: readonly string[]): string[] {
  const out = [...fix];
  for (const f of fix) {
    const ns = /^([a-z_][\w]*)::\w/.exec(f)?.[1];
    if (ns && ns.length >= 4 && !out.includes(ns)) out.push(ns);
  }
  return out;
}

/** The book's clusters that tonight's observations touched (all of them with `all`). */
function clustersOf(book: LessonBook, night: number, all = false): Cluster[] {
  const touched = new Set<number>();
  for (const o of book.observations) if (all || o.night === night) touched.add(o.cluster!);
  const by = new Map<number, Cluster>();
  for (const o of book.observations) {
    if (!touched.has(o.cluster!)) continue;
    const c = by.get(o.cluster!) ?? { members: [], tokens: [] };
    c.members.push(o);
    c.tokens.push(clusterTokens(o));
    by.set(o.cluster!, c);
  }
  return [...by.values()];
}

const day = (iso: string) => iso.slice(0, 10);

/**
 * A cluster that is a lesson: enough sayings, recurring, and at least one member that says what to
 * do, or reactions that agree on what the agent then did differently (agreedReactions).
 */
function isLesson(c: Cluster, minRecurrence: number): boolean {
  if (c.members.length < minRecurrence || !isRecurring(c)) return false;
  return c.members.some((m) => m.kind !== "reaction") || agreedReactions(c);
}

/**
 * Reactions alone are a lesson when, in two sessions, the user objected right after the same agent
 * action and the agent then changed the same distinctive thing (`go test` redone with `-race`, one
 * pinned commit): the correction is that change. A look around afterwards (`git status`, `sed -n`)
 * changes nothing. At least one of them must have words to stand as the rule, and none may be a
 * question ("does this handle the empty case?" asks, it corrects nothing).
 */
function agreedReactions(c: Cluster): boolean {
  if (!agreedFixes(c).length || c.members.some((m) => asks(m.quote))) return false;
  return c.members.some((m) => m.kind === "reaction" && wordsOf(lessonTokens(m.quote)).size >= 3);
}

/**
 * The tool a corrected action turned to, as its terms name it (`tool:gradlew` and `gradlew`), and
 * with `runnersToo` the program a package runner ran (`biome` of `pnpm biome format --write`).
 */
function toolHeads(fix: readonly string[], runnersToo = true): Set<string> {
  const heads = new Set(fix.filter((f) => f.startsWith("tool:")).flatMap((f) => [f, f.slice(5)]));
  if (!runnersToo) return heads;
  // The program a package runner runs is a tool too (`biome` of `pnpm biome format --write`).
  for (let k = 1; k < fix.length; k++)
    if (RUNNERS.has(fix[k - 1]!) && !RUNNER_VERBS.has(fix[k]!) && !fix[k]!.startsWith("-")) heads.add(fix[k]!);
  return heads;
}
/** Package runners, and their words that only say "run": what follows is the program run. */
const RUNNERS = new Set("pnpm npx yarn bunx npm uv poetry bundle pipx".split(" "));
const RUNNER_VERBS = new Set("run exec dlx x".split(" "));

/** Whether a corrected-action term is only that tool (`tool:gradlew`, `./gradlew`), not what it did with it. */
function isToolHead(f: string, heads: ReadonlySet<string>): boolean {
  return heads.has(f) || heads.has(f.slice(f.lastIndexOf("/") + 1));
}

/** A command that only looks: what the agent ran after a turn to read, not to redo. */
const LOOK_ONLY =
  /^(?:tool:)?(?:git|status|log|diff|show|sed|cat|ls|grep|rg|head|tail|less|find|wc|-n|--short|--stat)$/;

/** The distinctive changes the agent made after the same action in two or more sessions (agreedReactions). */
function agreedFixes(c: Cluster): string[] {
  const bySessions = new Map<string, Set<string>>();
  for (const m of c.members) {
    // A redo of the same command or file. Another tool afterwards is the task going on (`just ci`,
    // then `git push`) unless it does something distinctive (`./gradlew spotlessApply` after
    // `git add`): then that, not the tool, is what changed.
    if (!m.key) continue;
    const fix = m.fix ?? [];
    // What a runner runs may be the change itself here (`pnpm vitest` after `pnpm jest`).
    const heads = toolHeads(fix, false);
    for (const f of new Set(fix)) {
      if (isToolHead(f, heads) || !distinctiveFix(f) || LOOK_ONLY.test(f)) continue;
      const k = `${m.key}\n${f}`;
      const s = bySessions.get(k) ?? new Set<string>();
      s.add(m.session_id);
      bySessions.set(k, s);
    }
  }
  const fixes = [...bySessions].filter(([, s]) => s.size >= 2).map(([k]) => k.slice(k.indexOf("\n") + 1));
  return [...new Set(fixes)];
}

/** A cluster said in ≥ 2 sessions or on ≥ 2 days (rule 3). */
function isRecurring(c: Cluster): boolean {
  return (
    new Set(c.members.map((m) => m.session_id)).size >= 2 ||
    new Set(c.members.map((m) => day(m.at)).filter(Boolean)).size >= 2
  );
}

/**
 * The rule text (rule 4): among the model's normalised forms when a model read the sayings (without
 * a trailing restatement of the agent's action), else among the user's own words: the saying
 * closest to all others, each copy of the same normalised form counting as one more agreement,
 * preferring a saying that says both what to do and what not to, shortest on ties. A model's forms
 * vary from session to session ("the build needs X" one night, "Use X, not Y" the next): the one
 * that says the rule best wins, not the shortest.
 */
function representative(c: Cluster, w: Weights): string {
  // Without a restatement of one session's action ("… (not: export const config)"): the rule is for every session.
  const normed = c.members.some((m) => m.norm);
  const text = (m: Observation) => (normed ? normText(m) : m.quote);
  const copies = new Map<string, number>();
  if (normed) for (const m of c.members) if (m.norm) copies.set(text(m), (copies.get(text(m)) ?? 0) + 1);
  let best = -1;
  let bestScore = -1;
  // In a large cluster the latest 40 sayings choose (the choice is quadratic in them).
  const from = Math.max(0, c.members.length - 40);
  // Reactions speak only for a cluster of reactions (agreedReactions).
  const onlyReactions = c.members.every((m) => m.kind === "reaction");
  c.members.forEach((m, i) => {
    if (i < from || (m.kind === "reaction" && !onlyReactions) || (normed && !m.norm)) return;
    const said = text(m);
    let s = 2 * ((copies.get(said) ?? 1) - 1);
    for (let j = from; j < c.tokens.length; j++) if (i !== j && sameInstruction(c.tokens[i]!, c.tokens[j]!, w)) s++;
    const p = polarityOfText(said);
    // A saying that takes a side reads better as a rule than one that gives a reason; both sides, better still.
    if (p.prefer.size || p.avoid.size) s += 0.25;
    if (p.prefer.size && p.avoid.size) s += 0.5;
    // A saying that names what to do reads better as a rule than "amend that".
    s += 0.1 * Math.min(5, c.tokens[i]!.size - (m.act?.length ?? 0));
    if (said.length > 160) s -= 0.5;
    if (best < 0 || s > bestScore || (s === bestScore && said.length < text(c.members[best]!).length)) {
      best = i;
      bestScore = s;
    }
  });
  const q = text(c.members[Math.max(0, best)]!).replace(/\s+/g, " ").trim();
  if (normed) return q;
  // Reactions' words alone do not say what to do: the change the agent made after them does.
  const then = onlyReactions
    ? ` (then: ${[...new Set(agreedFixes(c).map((f) => f.replace(/^tool:/, "")))].join(", ")})`
    : "";
  return q.charAt(0).toUpperCase() + q.slice(1) + then;
}

/** A model's "rule" that is only an acknowledgement ("Ok", "Hmm ok."). */
const CHATTER_RULE = /^\s*(?:h+m+|ok(?:ay)?|sure|thanks|fine|got it)?[\s.!,]*(?:ok(?:ay)?)?[\s.!,]*$/i;

/** A rule in the user's words, without the change a reactions' lesson names after them (representative). */
const userWords = (rule: string) => rule.replace(/ \(then: [^)]*\)$/, "");

/** What a cluster prefers and avoids: the polarity its members agree on. */
function clusterPolarity(c: { members: readonly Observation[] }, textOf: TextOf = clusterText): Polarity {
  const prefer = new Set<string>();
  const avoid = new Set<string>();
  for (const m of c.members) {
    const p = polarityOfText(textOf(m));
    for (const x of p.prefer) prefer.add(x);
    for (const x of p.avoid) avoid.add(x);
  }
  for (const x of avoid) prefer.delete(x);
  return { prefer, avoid };
}

/** What sayings ask for and avoid: in their words, and in what their corrections changed (the action before → the fix). */
function evidenceOf(
  members: readonly Observation[],
  textOf: TextOf = clusterText,
): { asks: Set<string>; avoids: Set<string> } {
  const pol = clusterPolarity({ members }, textOf);
  const asks = new Set(pol.prefer);
  const avoids = new Set(pol.avoid);
  for (const o of members) {
    const fix = (o.fix ?? []).filter(distinctiveFix).map((f) => f.replace(/^tool:/, ""));
    for (const f of fix) asks.add(f);
    if (fix.length) for (const a of o.act ?? []) if (!fix.includes(a) && distinctiveFix(a)) avoids.add(a);
  }
  return { asks, avoids };
}

type Change = NonNullable<ReturnType<typeof announcedChange>>;

/**
 * An announced change goes against what sayings ask: it gives up what they ask for ("drop the dev
 * text handler" after "text logs in dev please"), or takes up what they avoid and nothing they ask for.
 */
function goesAgainst(ch: Change, ev: ReturnType<typeof evidenceOf>): boolean {
  if ([...ch.off].some((t) => ev.asks.has(t))) return true;
  return [...ch.up].some((t) => ev.avoids.has(t)) && ![...ch.up].some((t) => ev.asks.has(t));
}

/**
 * The adopted lesson that a saying of `c` said tonight announces a change from (announcedChange,
 * goesAgainst the sayings the lesson was learned from). One saying is enough for this: the user
 * declared that a rule they adopted changed.
 */
function announcedFlip(
  c: Cluster,
  night: number,
  book: LessonBook,
  live: ReadonlySet<string>,
  w: Weights,
): LessonRecord | undefined {
  // Read in the model's normalised forms, then in the user's own words (a poor form may lose the change).
  const flip = announcedFlipIn(c, night, book, live, w, clusterText);
  return flip ?? (c.members.some((m) => m.norm) ? announcedFlipIn(c, night, book, live, w, saidText) : undefined);
}

/** announcedFlip, reading each saying's text with `textOf`. */
function announcedFlipIn(
  c: Cluster,
  night: number,
  book: LessonBook,
  live: ReadonlySet<string>,
  w: Weights,
  textOf: TextOf,
): LessonRecord | undefined {
  const said = c.members.filter((m) => m.night === night && m.kind !== "reaction");
  const changes = said.map((m) => announcedChange(textOf(m)) ?? swapChange(textOf(m))).filter((x) => x !== undefined);
  // A setting given another value ("MAIL_HOST=mailpit now" against "MAIL_HOST should be mailhog").
  const values = said.map((m) => settingsOf(textOf(m))).filter((v) => v.size > 0);
  if (!changes.length && !values.length) return undefined;
  const announcing = said.filter((m) => announcedChange(textOf(m)) !== undefined);
  for (const l of book.lessons) {
    if (!l.adopted_night || l.superseded_by || !live.has(norm(l.rule))) continue;
    const ruleSettings = settingsOf(userWords(l.rule));
    if (values.some((v) => settingChanged(v, ruleSettings))) return l;
    if (!changes.length) continue;
    const ruleToks = lessonTokens(userWords(l.rule));
    const home = book.observations.find(
      (o) => !c.members.includes(o) && sameInstruction(ruleToks, lessonTokens(textOf(o)), w),
    );
    if (!home) continue;
    const homes = book.observations.filter((o) => o.cluster === home.cluster);
    const ev = evidenceOf(homes, textOf);
    if (changes.some((ch) => goesAgainst(ch, ev)) || contradicts(l.rule, c, textOf)) return l;
    if (announcing.some((m) => homes.some((h) => leavesBehind(m, h, textOf)))) return l;
  }
  return undefined;
}

/**
 * A change of practice said where it leaves another saying behind: it undoes what that saying's
 * correction made the agent do (undoesFix), or it moved the practice elsewhere (movedElsewhere).
 */
function leavesBehind(said: Observation, other: Observation, textOf: TextOf = clusterText): boolean {
  return undoesFix(said, other) || movedElsewhere(said, other, textOf);
}

/**
 * A saying right after the agent did what another saying's correction had made it do: the action it
 * objects to is that correction ("we review commit by commit now" right after the `git reset --soft`
 * that "one commit per branch" brought about). Said with a change of practice, it goes against it.
 */
function undoesFix(said: Observation, other: Observation): boolean {
  const did = (said.act ?? []).filter(distinctiveFix);
  return did.length > 0 && did.every((t) => (other.fix ?? []).includes(t));
}

/**
 * A saying right after the same agent action as another's (another session), after which the agent
 * changed mostly other things than it did after that one ("point phpunit.xml at the test database
 * from now on" then `pgsql`, where "tests use sqlite :memory:" was followed by `sqlite`). Said with a
 * change of practice, it moves the practice elsewhere. Not from another change announced ("the
 * pretty mode is gone" and "moved off .pretty()" may each be followed by other json settings).
 */
function movedElsewhere(said: Observation, other: Observation, textOf: TextOf = clusterText): boolean {
  if (!sameAction(said, other) || announcedChange(textOf(other))) return false;
  const a = (said.fix ?? []).filter(distinctiveFix);
  const b = (other.fix ?? []).filter(distinctiveFix);
  // Most of what it changed differs (a value changed beside a key both set: `DB_DATABASE`).
  return a.length > 0 && b.length > 0 && 2 * a.filter((t) => b.includes(t)).length < Math.min(a.length, b.length);
}

/** True when a new lesson says the opposite of an adopted rule ("use jest, not vitest"; "use tabs" then "we switched to spaces"). */
function contradicts(rule: string, c: Cluster, textOf: TextOf = clusterText): boolean {
  return opposite(polarityOfText(rule), clusterPolarity(c, textOf));
}

function lessonId(rule: string): string {
  return `lesson_${sha256([...lessonTokens(rule)].sort().join(" ")).slice(0, 12)}`;
}

/** The book of a project (a fresh one when absent or unreadable). */
export function loadBook(stateDir: string, project: string): LessonBook {
  const path = bookPath(stateDir, project);
  if (existsSync(path)) {
    try {
      const text = readRegularFile(path).toString("utf8");
      const b = JSON.parse(text) as LessonBook;
      if (b.version === 1 && Array.isArray(b.observations) && Array.isArray(b.lessons)) {
        LOADED.set(b, text);
        return b;
      }
      log.warn(`sleep: ${path} is not a lesson book; starting a new one`);
    } catch (err) {
      log.warn(`sleep: cannot read ${path} (${String(err)}); starting a new lesson book`);
    }
  }
  return { version: 1, project, observations: [], lessons: [] };
}

function bookPath(stateDir: string, project: string): string {
  return join(stateDir, "lessons", `${sha256(project).slice(0, 16)}.json`);
}

/** The text each loaded book was read from (an unchanged book is not written again). */
const LOADED = new WeakMap<LessonBook, string>();

/**
 * Write the book when it changed. The lesson store is scanned like a staged file: the texts of
 * tonight's observations and every lesson's rule are masked when something credential-shaped is
 * left in them (earlier nights' observations were scanned on their own night); returns whether
 * something was.
 */
export function saveBook(stateDir: string, book: LessonBook, night?: number): { written: boolean; masked: boolean } {
  const path = bookPath(stateDir, book.project);
  let masked = false;
  const scrub = (t: string | undefined) => {
    if (!t) return t;
    const m = maskCredentials(t);
    if (m !== t) masked = true;
    return m;
  };
  for (const o of book.observations) {
    if (night !== undefined && o.night !== night) continue;
    o.quote = scrub(o.quote)!;
    o.context = scrub(o.context);
    o.norm = scrub(o.norm);
  }
  for (const l of book.lessons) l.rule = scrub(l.rule)!;
  const text = `${JSON.stringify(book, null, 2)}\n`;
  if (LOADED.get(book) === text) return { written: false, masked };
  // A night killed while saving its book left the temp file beside it.
  removeOrphanTemps(dirname(path));
  // Lessons quote the user's sessions: private, as the rest of the state directory.
  writeFileAtomic(path, text, { mode: 0o600 });
  LOADED.set(book, text);
  return { written: true, masked };
}

/** What the lesson pass proposes for one night. */
export interface LessonPlan {
  cards: LessonCard[];
  /** The memory text with every proposed lesson edit applied ("" when nothing changes). */
  memory: string;
  notes: string[];
}

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

/**
 * Plan tonight's lesson edits on `memory` (the live memory text): new recurring lessons are added,
 * a new lesson that contradicts an adopted one replaces it, an adopted lesson with no support for
 * `retireAfterNights` nights is proposed for retirement, and an adopted lesson whose correction
 * keeps recurring is reported as not working. Mutates `book` (lesson records).
 */
export function planLessons(
  book: LessonBook,
  night: number,
  memory: string,
  o: { target: string; retireAfterNights: number; minRecurrence?: number; covered?: readonly string[] },
): LessonPlan {
  useLearned(book);
  setSpelling(book.df);
  POLARITY.clear();
  const covered = (o.covered ?? []).map(lessonTokens);
  const live = getRules(memory);
  const liveNorm = new Set(live.map(norm));
  const notes: string[] = [];
  const cards: LessonCard[] = [];
  let rules = [...live];
  // Adoption is what the live file says: a proposed rule present in it was adopted.
  for (const l of book.lessons) {
    if (!l.adopted_night && liveNorm.has(norm(l.rule))) l.adopted_night = night;
    if (l.adopted_night && !liveNorm.has(norm(l.rule)) && !l.superseded_by)
      l.superseded_by = "removed from the live file by the user";
  }
  const w = bookWeights(book);
  // Only new observations are clustered (against the index of the old ones), and only the
  // clusters tonight's observations touched are read: a night with nothing new does no clustering.
  assignClusters(book, w);
  // A change announced once ("we switched the logs to json last week") replaces the adopted lesson it goes against.
  const flips = new Map<Cluster, LessonRecord>();
  const touched = clustersOf(book, night);
  for (const c of touched) {
    const l = announcedFlip(c, night, book, liveNorm, w);
    if (l) flips.set(c, l);
  }
  const recurring = touched.filter((c) => flips.has(c) || isLesson(c, o.minRecurrence ?? 2));
  // Two recurring clusters that say opposite things: the one said last is the user's current wish,
  // counting the sayings that take a side against the other (not a neutral saying that joined late).
  const pols = recurring.map((c) => clusterPolarity(c));
  const lastSaid = (c: Cluster, against: Polarity) => {
    const sided = c.members.filter((x) => opposite(polarityOfText(clusterText(x)), against));
    return (
      (sided.length ? sided : c.members)
        .map((x) => x.at)
        .sort()
        .at(-1) ?? ""
    );
  };
  const clusters = recurring.filter(
    (c, i) =>
      !recurring.some(
        (d, j) => j !== i && opposite(pols[i]!, pols[j]!) && lastSaid(d, pols[i]!) > lastSaid(c, pols[j]!),
      ),
  );
  const claimed = new Set<LessonRecord>();
  for (const c of clusters) {
    const rule = representative(c, w);
    const ruleToks = lessonTokens(rule);
    const cpol = clusterPolarity(c);
    const known = book.lessons.find(
      (l) =>
        !claimed.has(l) &&
        l !== flips.get(c) &&
        !opposite(polarityOfText(l.rule), cpol) &&
        (l.id === lessonId(rule) ||
          sameInstruction(lessonTokens(userWords(l.rule)), ruleToks, w) ||
          c.tokens.some((t) => sameInstruction(lessonTokens(userWords(l.rule)), t, w))),
    );
    const sessions = new Set(c.members.map((m) => m.session_id));
    const times = c.members
      .map((m) => m.at)
      .filter(Boolean)
      .sort();
    const card = (op: LessonCard["op"], text: string, previous?: string, note?: string): LessonCard => ({
      id: lessonId(text),
      op,
      rule: text,
      ...(previous ? { previous_rule: previous } : {}),
      target: o.target,
      recurrences: c.members.length,
      n_sessions: sessions.size,
      first_seen: times[0] ?? "",
      last_seen: times.at(-1) ?? "",
      sources: c.members
        .slice()
        .sort((a, b) => (a.at < b.at ? -1 : 1))
        .slice(-8)
        .map((m) => ({
          session_id: m.session_id,
          source: m.source,
          date: m.at,
          quote: m.quote,
          ...(m.context ? { context: m.context } : {}),
        })),
      verification: "unverified",
      cost: { tokens: 0, cost_usd: 0 },
      ...(note ? { note } : {}),
    });
    if (known) {
      claimed.add(known);
      if (c.members.some((m) => m.night === night)) known.last_support_night = night;
      if (known.adopted_night && !known.superseded_by) {
        // Read on or after the first night the rule was in the live file: said again although adopted.
        const after = c.members.filter((m) => m.night >= known.adopted_night);
        if (after.length)
          notes.push(
            `lesson not working: "${known.rule}" is in ${o.target}, yet the same correction recurred ${after.length} time(s) since it was adopted \
(night ${known.adopted_night})`,
          );
        continue;
      }
      if (liveNorm.has(norm(known.rule)) || known.superseded_by) continue;
      // Still pending (proposed on an earlier night, not adopted yet): propose it again with fresh evidence.
    }
    // Proposed only on a night that brought new evidence: a rejected or ignored lesson comes back
    // when the user says it again, not every night.
    if (!c.members.some((m) => m.night === night)) continue;
    // A new lesson contradicting an adopted one replaces it (never silently).
    const opposed =
      flips.get(c) ??
      book.lessons.find(
        (l) => l.adopted_night && !l.superseded_by && liveNorm.has(norm(l.rule)) && contradicts(l.rule, c),
      );
    if (opposed) {
      rules = rules.map((r) => (norm(r) === norm(opposed.rule) ? rule : r));
      cards.push(card("replace", rule, opposed.rule, `contradicts the adopted lesson "${opposed.rule}"`));
    } else {
      if (rules.some((r) => norm(r) === norm(rule) || sameInstruction(lessonTokens(r), ruleToks, w))) continue;
      // Already a rule of the skill (live, or tonight's accepted proposal): not learned twice.
      if (covered.some((t) => sameInstruction(t, ruleToks, w))) continue;
      rules.push(rule);
      cards.push(card("add", rule));
    }
    if (!known)
      book.lessons.push({
        id: lessonId(rule),
        rule,
        proposed_night: night,
        adopted_night: 0,
        last_support_night: night,
      });
  }
  // Retirement: an adopted lesson nobody has needed for a long time may go — proposed, never removed silently.
  if (o.retireAfterNights > 0) {
    for (const l of book.lessons) {
      if (!l.adopted_night || l.superseded_by || !liveNorm.has(norm(l.rule))) continue;
      if (cards.some((c) => c.previous_rule === l.rule)) continue;
      const idle = night - Math.max(l.last_support_night, l.adopted_night);
      if (idle < o.retireAfterNights) continue;
      rules = rules.filter((r) => norm(r) !== norm(l.rule));
      cards.push({
        id: l.id,
        op: "retire",
        rule: l.rule,
        previous_rule: l.rule,
        target: o.target,
        recurrences: 0,
        n_sessions: 0,
        first_seen: "",
        last_seen: "",
        sources: [],
        verification: "unverified",
        cost: { tokens: 0, cost_usd: 0 },
        note: `no session has needed this lesson for ${idle} night(s) (retire_after_nights=${o.retireAfterNights})`,
      });
    }
  }
  const changed = cards.length > 0;
  return { cards, memory: changed ? setLearned(memory, rules) : "", notes };
}

/** A Cursor rule file needs front matter to apply to every request. */
const MDC_HEAD =
  "---\ndescription: Lessons SkillOpt-Sleep learned from your sessions (adopted by you)\nalwaysApply: true\n---\n";

/**
 * The same lesson edits applied to another memory file's learned block ("" when nothing changes):
 * an added rule is added unless present, a replaced rule is swapped (or added), a retired one removed.
 * A new `.mdc` file gets Cursor's front matter so the rules always apply.
 */
export function applyLessonCards(memory: string, cards: readonly LessonCard[], path: string): string {
  let rules = getRules(memory);
  const has = (r: string) => rules.some((x) => norm(x) === norm(r));
  for (const c of cards) {
    if (c.op === "add" && !has(c.rule)) rules.push(c.rule);
    if (c.op === "replace") {
      if (c.previous_rule && has(c.previous_rule))
        rules = rules.map((x) => (norm(x) === norm(c.previous_rule!) ? c.rule : x));
      else if (!has(c.rule)) rules.push(c.rule);
    }
    if (c.op === "retire") rules = rules.filter((x) => norm(x) !== norm(c.rule));
  }
  const next = setLearned(memory, rules);
  return next === memory ? "" : withRuleHead(memory, next, path);
}

/** `next` with Cursor's front matter when it creates a `.mdc` rule file (`memory` was empty). */
export function withRuleHead(memory: string, next: string, path: string): string {
  return next && memory.trim() === "" && path.endsWith(".mdc") ? `${MDC_HEAD}\n${next}` : next;
}

/** Render evidence cards as Markdown (report.md, `sleep diff`). */
export function renderCards(cards: readonly LessonCard[], esc: (s: string) => string = (s) => s): string[] {
  const lines: string[] = [];
  for (const c of cards) {
    const head = c.op === "add" ? "add" : c.op === "replace" ? "replace" : "retire";
    const cv = c.verification;
    const v =
      cv === "unverified"
        ? "**unverified** (no replay was run)"
        : `${cv.verdict}${cv.rule ? ` by the ${cv.rule} rule` : ""} (Δ ${cv.delta.toFixed(3)}, 95% CI [${cv.ci[0].toFixed(3)}, ${cv.ci[1].toFixed(3)}], \
n=${cv.n})${cv.paired_verdict && cv.paired_verdict !== cv.verdict ? `; the paired test on the same tasks: ${cv.paired_verdict}` : ""}`;
    lines.push(`### [${head}] ${esc(c.rule)}`, "");
    if (c.previous_rule && c.op !== "add")
      lines.push(`- ${c.op === "retire" ? "removes" : "replaces"}: ${esc(c.previous_rule)}`);
    lines.push(
      c.targets && c.targets.length > 1 ? `- targets: ${c.targets.map(esc).join(", ")}` : `- target: ${esc(c.target)}`,
    );
    lines.push(`- verification: ${v}`);
    if (c.verification !== "unverified" && c.verification.regressions.length)
      lines.push(`- per-task regressions: ${esc(c.verification.regressions.join(", "))}`);
    else lines.push("- per-task regressions: none measured");
    if (c.op !== "retire")
      lines.push(
        `- recurred ${c.recurrences} time(s) in ${c.n_sessions} session(s), ${esc(c.first_seen.slice(0, 10))} – ${esc(c.last_seen.slice(0, 10))}`,
      );
    if (c.note) lines.push(`- note: ${esc(c.note)}`);
    lines.push(`- night cost: ${c.cost.tokens} tokens, $${c.cost.cost_usd.toFixed(4)}`);
    for (const s of c.sources)
      lines.push(
        `  - ${esc(s.date.slice(0, 10) || "unknown date")} · ${esc(s.source || "?")} · ${esc(s.session_id)}: “${esc(s.quote)}”`,
      );
    lines.push("");
  }
  return lines;
}

/**
 * The evidence cards a published night carries (its report.json), [] when none. The report is
 * read like every other night file (never through a link, never blocking on a FIFO or device);
 * one that cannot be read is named in a warning and yields no cards.
 */
export function nightEvidence(stagingDir: string): LessonCard[] {
  const path = join(stagingDir, "report.json");
  let r: { lessons?: unknown; edit_evidence?: unknown };
  try {
    const bytes = readRegularFile(path, { missingOk: true, maxBytes: 16 * 1024 * 1024 });
    if (!bytes) return [];
    r = JSON.parse(bytes.toString("utf8")) as { lessons?: unknown; edit_evidence?: unknown };
  } catch (err) {
    log.warn(`sleep: evidence not shown: ${errorMessage(err)}`);
    return [];
  }
  if (!r || typeof r !== "object") return [];
  return [
    ...(Array.isArray(r.edit_evidence) ? (r.edit_evidence as LessonCard[]) : []),
    ...(Array.isArray(r.lessons) ? (r.lessons as LessonCard[]) : []),
  ];
}

/** Paired per-task differences → mean Δ with a normal-approximation 95% interval (a summary for gate trials that recorded no decision). */
function pairedVerdict(diffs: readonly number[]): {
  verdict: "accept" | "reject" | "undecided";
  delta: number;
  ci: [number, number];
  n: number;
} {
  const n = diffs.length;
  if (n === 0) return { verdict: "undecided", delta: 0, ci: [0, 0], n };
  const mean = diffs.reduce((a, b) => a + b, 0) / n;
  const sd = n > 1 ? Math.sqrt(diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (n - 1)) : 0;
  const half = n > 1 ? (1.96 * sd) / Math.sqrt(n) : Number.POSITIVE_INFINITY;
  const ci: [number, number] = [mean - half, mean + half];
  const verdict =
    n >= 2 && ci[0] > 0 ? "accept" : ci[1] < 0 || (n >= 2 && mean <= 0 && ci[1] <= 0) ? "reject" : "undecided";
  return { verdict, delta: mean, ci: [Number.isFinite(ci[0]) ? ci[0] : -1, Number.isFinite(ci[1]) ? ci[1] : 1], n };
}

/** A replay task that checks one lesson on one request it was given on. */
export function lessonTask(card: LessonCard, src: EvidenceSource, i: number): import("./types.ts").TaskRecord {
  return {
    id: `${card.id}_${i}`,
    project: "",
    intent: src.context || src.quote,
    context_excerpt: "",
    system: "",
    attempted_solution: "",
    outcome: "fail",
    reference_kind: "rubric",
    reference: `Score 1 only if the response follows this standing instruction from the user: "${card.rule}". Score 0 if it contradicts or ignores it.`,
    judge: {},
    tags: ["lesson"],
    source_sessions: [src.session_id],
    split: "val",
    origin: "real",
    derived_from: card.id,
    skill_hint: "",
  };
}

/**
 * Evidence cards of a night's gated consolidation edits: the sessions behind the replayed tasks,
 * and the gate's per-task changes as a paired Δ with its interval, n and regressions.
 */
export function editCards(
  edits: readonly import("./types.ts").EditRecord[],
  o: {
    tasks: readonly import("./types.ts").TaskRecord[];
    trials: readonly import("./types.ts").GateTrial[];
    targets: { skill: string; memory: string };
    dates: ReadonlyMap<string, { source: string; at: string }>;
    cost: { tokens: number; cost_usd: number };
  },
): LessonCard[] {
  const fallback = [...o.trials].reverse().find((t) => t.accepted) ?? o.trials.at(-1);
  const same = (a: import("./types.ts").EditRecord, b: import("./types.ts").EditRecord) =>
    a.target === b.target && a.op === b.op && a.content === b.content;
  // Each edit's own trial (the last that evaluated it), so its verdict is the one the gate gave it.
  const verification = (e: import("./types.ts").EditRecord): LessonCard["verification"] => {
    const trial = [...o.trials].reverse().find((t) => t.edits?.some((x) => same(x, e))) ?? fallback;
    if (!trial) return "unverified";
    const deltas = trial.task_deltas.filter((d) => d.baseline_score !== null && d.candidate_score !== null);
    // The gate's own decision when it recorded one (Δ with its always-valid bounds), else the paired summary.
    const g = trial.gate;
    const v = g
      ? { delta: g.delta, ci: g.ci, n: g.n_used }
      : pairedVerdict(deltas.map((d) => d.candidate_score! - d.baseline_score!));
    const regressions = deltas.filter((d) => d.status === "regressed").map((d) => d.task_id);
    const verdict = trial.blocked_by_regression ? "reject" : g ? g.verdict : trial.accepted ? "accept" : "reject";
    return {
      ...v,
      verdict,
      regressions,
      ...(g ? { rule: g.rule } : {}),
      ...(g?.paired_verdict ? { paired_verdict: g.paired_verdict } : {}),
    };
  };
  const train = o.tasks.filter((t) => t.split === "train" && t.origin === "real");
  const sources = train
    .flatMap((t) =>
      t.source_sessions.map((sid) => ({
        session_id: sid,
        source: o.dates.get(sid)?.source ?? "",
        date: o.dates.get(sid)?.at ?? "",
        quote: redactText(t.intent.slice(0, 240)),
      })),
    )
    .slice(0, 8);
  return edits.map((e) => ({
    id: `edit_${sha256(`${e.target}:${e.op}:${e.content}`).slice(0, 12)}`,
    op: e.op === "delete" ? "retire" : e.op === "replace" ? "replace" : "add",
    rule: e.content,
    ...(e.anchor && e.op !== "add" ? { previous_rule: e.anchor } : {}),
    target: e.target === "skill" ? o.targets.skill : o.targets.memory,
    recurrences: train.length,
    n_sessions: new Set(train.flatMap((t) => t.source_sessions)).size,
    first_seen: "",
    last_seen: "",
    sources,
    verification: verification(e),
    cost: o.cost,
    ...(e.rationale ? { note: e.rationale } : {}),
  }));
}
