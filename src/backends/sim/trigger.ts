/**
 * The simulator's side of trigger tasks (src/benchmarks/trigger), with known rules:
 *
 * Target: a skill's description is read as terms to use it for, minus "Not for …" sentences,
 * whose terms veto it. For a query, a skill's cover is the number of the query's content words
 * its description states (0 when a vetoed word occurs). The agent loads every skill covering at
 * least two of the query's words, and a skill covering one when no other covers as many; at the
 * lapse rate it decides the other way.
 *
 * Optimizer: from failed trigger tasks it proposes description edits: for missed queries, the
 * words that recur among them and the description lacks ("Use it for …"); for false triggers,
 * the words that set those queries apart ("Not for: …"). At the noise rate an edit is wrong (a
 * generic word, or a veto on one of the skill's own words) or vague; now and then it edits the
 * body, which a trigger benchmark refuses.
 */
import { contentWords, skillCard, stems } from "../../lib/index.ts";
import type { SimKnobs } from "./analyst.ts";
import { pickBy } from "./draw.ts";
import { quotedSkill } from "./skill-text.ts";

interface Card {
  name: string;
  description: string;
}

const VETO = /^\s*(?:not for|do not use|don't use|never use|not to be used)\b[:\s]*/i;

/** A description's terms: what it is for, and the words that veto it. */
function descriptionTerms(description: string): { use: Set<string>; veto: Set<string> } {
  const use = new Set<string>();
  const veto = new Set<string>();
  for (const sentence of description.split(/[.!?;]+/)) {
    const m = VETO.exec(sentence) ?? /\bnot for\b[:\s]*/i.exec(sentence);
    if (m) {
      for (const s of stems(sentence.slice(0, m.index))) use.add(s);
      for (const s of stems(sentence.slice(m.index + m[0].length))) veto.add(s);
    } else for (const s of stems(sentence)) use.add(s);
  }
  return { use, veto };
}

/** How many of the query's words a description covers (0 when one of its vetoed words occurs). */
function cover(query: Set<string>, description: string): number {
  const t = descriptionTerms(description);
  if ([...t.veto].some((s) => query.has(s))) return 0;
  return [...query].filter((s) => t.use.has(s)).length;
}

/** The skills the simulated agent loads for a query (before any lapse). */
export function simLoads(query: string, skills: readonly Card[]): string[] {
  const q = stems(query);
  const scores = skills.map((s) => ({ name: s.name, c: cover(q, s.description) }));
  return scores.filter((s) => s.c >= 2 || (s.c === 1 && scores.every((o) => o === s || o.c < 1))).map((s) => s.name);
}

/** The simulated target's reply to a trigger task block (the installed skills and the query). */
export function simTriggerReply(
  block: Record<string, unknown>,
  draw: (label: string) => number,
  lapseRate: number,
  reqKey: string,
): string {
  const skills = (Array.isArray(block.skills) ? block.skills : []).filter(
    (s): s is Card => Boolean(s) && typeof (s as Card).name === "string" && typeof (s as Card).description === "string",
  );
  const query = String(block.query ?? "");
  let loads = simLoads(query, skills);
  // A lapse: the agent decides the other way about one skill the request is closest to.
  if (draw(`trigger-lapse/${reqKey}`) < lapseRate && skills.length) {
    const q = stems(query);
    const near = [...skills].sort((a, b) => cover(q, b.description) - cover(q, a.description))[
      Math.floor(draw(`trigger-lapse-which/${reqKey}`) * Math.min(2, skills.length))
    ]!;
    loads = loads.includes(near.name) ? loads.filter((n) => n !== near.name) : [...loads, near.name];
  }
  return `<answer>${loads.length ? loads.join(", ") : "none"}</answer>`;
}

interface Seen {
  query: string;
  expected: boolean;
  passed: boolean;
}

/** Trigger trajectories of an analyst prompt (task_type should_trigger / should_not_trigger), or undefined when there are none. */
export function triggerEvidence(trajectories: unknown[]): Seen[] | undefined {
  const out: Seen[] = [];
  for (const t of trajectories) {
    const o = (t ?? {}) as Record<string, unknown>;
    if (o.task_type !== "should_trigger" && o.task_type !== "should_not_trigger") continue;
    out.push({ query: String(o.task ?? ""), expected: o.task_type === "should_trigger", passed: o.outcome === "pass" });
  }
  return out.length ? out : undefined;
}

/** Words of `queries` the description lacks, most frequent first (surface form of their first use). */
function recurring(queries: readonly string[], skip: Set<string>): { word: string; n: number }[] {
  const counts = new Map<string, { word: string; n: number }>();
  for (const q of queries) {
    const seen = new Set<string>();
    for (const w of contentWords(q)) {
      if (skip.has(w.stem) || seen.has(w.stem)) continue;
      seen.add(w.stem);
      const c = counts.get(w.stem) ?? { word: w.word, n: 0 };
      c.n++;
      counts.set(w.stem, c);
    }
  }
  return [...counts.values()].sort((a, b) => b.n - a.n || a.word.localeCompare(b.word));
}

const GENERIC_WORDS = ["documents", "files", "paperwork", "business tasks", "office work"];
const VAGUE = ["Use it whenever it seems relevant.", "Use it for related tasks.", "Helpful for many kinds of work."];

const list = (ws: readonly string[]) => (ws.length < 2 ? ws.join("") : `${ws.slice(0, -1).join(", ")} or ${ws.at(-1)}`);

/** The simulated analyst on trigger trajectories: description edits from the failed items. */
export function simTriggerAnalyst(
  k: SimKnobs,
  user: string,
  data: { side: string; budget: number | null; update_mode: string; trajectories: unknown[] },
  ev: Seen[],
  reqKey: string,
): Record<string, unknown> {
  const skill = quotedSkill(user);
  const desc = skillCard(skill).description ?? "";
  const terms = descriptionTerms(desc);
  const known = new Set([...terms.use, ...terms.veto]);
  const missed = ev.filter((e) => e.expected && !e.passed);
  const falseHits = ev.filter((e) => !e.expected && !e.passed);
  const edits: Record<string, unknown>[] = [];
  const summary: Record<string, unknown>[] = [];
  if (data.side === "failure" && missed.length) {
    // Words that recur among the missed requests; when none recur, the first few of them.
    const ranked = recurring(
      missed.map((e) => e.query),
      known,
    );
    const again = ranked.filter((w) => w.n >= 2);
    const words = (again.length ? again : ranked).slice(0, again.length ? 4 : 3).map((w) => w.word);
    const r = k.draw(`${reqKey}/trigger-miss/noise`);
    let content: string;
    if (r < k.noise / 2) content = `Use it for ${pickBy(k.draw(`${reqKey}/trigger-miss/generic`), GENERIC_WORDS)}.`;
    else if (r < k.noise || !words.length) content = pickBy(k.draw(`${reqKey}/trigger-miss/vague`), VAGUE);
    else content = `Use it for ${list(words)}.`;
    edits.push({ op: "append", content });
    summary.push({
      failure_type: "missed trigger",
      count: missed.length,
      description: "requests the skill is for did not load it; the description does not name what they are about",
    });
  }
  if (data.side === "failure" && falseHits.length) {
    const inMissed = new Set(missed.flatMap((e) => [...stems(e.query)]));
    const words = recurring(
      falseHits.map((e) => e.query),
      new Set([...known, ...inMissed]),
    )
      .filter((w) => w.n >= 2 || falseHits.length === 1)
      .slice(0, 3)
      .map((w) => w.word);
    const r = k.draw(`${reqKey}/trigger-fp/noise`);
    let content: string | undefined;
    if (r < k.noise / 2) {
      // Too narrow: veto a word the description itself is for.
      const own = contentWords(desc).map((w) => w.word);
      if (own.length) content = `Not for: ${pickBy(k.draw(`${reqKey}/trigger-fp/own`), own)}.`;
    } else if (words.length) content = `Not for: ${list(words)}.`;
    if (content) edits.push({ op: "append", content });
    summary.push({
      failure_type: "false trigger",
      count: falseHits.length,
      description: "the skill loaded for requests another skill (or none) should handle",
    });
  }
  // Now and then an edit aimed at the body, as real optimizers do; the trigger benchmark refuses it.
  if (edits.length && k.draw(`${reqKey}/trigger-body`) < 0.15) {
    const heading = skill.split("\n").find((l) => /^#\s/.test(l));
    if (heading)
      edits.push({ op: "insert_after", target: heading, content: "Load this skill for every money question." });
  }
  const L = data.budget ?? 99;
  const chosen = edits.slice(0, L);
  const reasoning = chosen.length
    ? "Adjusted the description to the requests it missed or wrongly caught."
    : "No trigger failures to act on.";
  const patch =
    data.update_mode === "patch"
      ? { reasoning, edits: chosen }
      : data.update_mode === "rewrite_from_suggestions"
        ? {
            reasoning,
            revise_suggestions: chosen.map((e) => ({
              type: "clarify",
              title: "description",
              motivation: "trigger failures",
              instruction: String(e.content),
              priority_hint: "high",
            })),
          }
        : { reasoning, skill_candidates: [] };
  return {
    batch_size: ev.length,
    ...(data.side === "failure" ? { failure_summary: summary } : { success_patterns: [] }),
    patch,
  };
}
