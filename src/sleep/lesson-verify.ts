import { BudgetExhaustedError } from "./budget.ts";
import { getRules, setLearned } from "./learned-block.ts";
import { decideOnItems } from "../engine/index.ts";
import { SLEEP_SEQUENTIAL } from "./gate.ts";
import { type LessonCard, lessonTask } from "./lessons.ts";
import { type ReplayContext, replayBatch } from "./replay.ts";
import type { SleepBackend } from "./backend/types.ts";

/**
 * Replay-verify tonight's lesson edits with a model: each lesson is replayed on the requests it was
 * given on, with the memory file before and after the edit, and judged against the lesson; the
 * paired per-task differences give Δ, a 95% interval and n, and the verdict (accept / reject /
 * undecided). Rejected lessons leave the proposal; the others stay with their verdict on the card.
 * The verdict is the engine's paired sequential gate (decideOnItems, Sleep's settings), the same
 * test the night's consolidation gate uses.
 */
export async function verifyLessons(
  ctx: ReplayContext,
  cards: LessonCard[],
  o: { skill: string; baseMemory: string; proposedMemory: string },
): Promise<{ memory: string; notes: string[] }> {
  const notes: string[] = [];
  const drop = new Set<LessonCard>();
  for (const card of cards) {
    if (card.op === "retire") continue;
    const tasks = card.sources.map((s, i) => lessonTask(card, s, i));
    const without =
      card.op === "replace"
        ? o.baseMemory
        : setLearned(
            o.baseMemory,
            getRules(o.baseMemory).filter((r) => r !== card.rule),
          );
    const withRule =
      card.op === "replace"
        ? setLearned(
            o.baseMemory,
            getRules(o.baseMemory).map((r) => (r === card.previous_rule ? card.rule : r)),
          )
        : setLearned(o.baseMemory, [...getRules(o.baseMemory), card.rule]);
    try {
      const base = await replayBatch(ctx, tasks, o.skill, without, "lesson_base");
      const cand = await replayBatch(ctx, tasks, o.skill, withRule, "lesson_candidate");
      // A task either side could not score (no answer) is left out, never counted as a zero.
      const scored = tasks
        .map((_, i) => i)
        .filter((i) =>
          [base[i], cand[i]].every((r) => r !== undefined && r.response !== "" && Number.isFinite(r.soft)),
        );
      const diffs = scored.map((i) => cand[i]!.soft - base[i]!.soft);
      const d = decideOnItems(
        diffs,
        scored.map((i) => base[i]!.hard >= 1 && cand[i]!.hard < 1),
        "paired",
        SLEEP_SEQUENTIAL,
      );
      const v = { verdict: d.verdict, delta: d.delta, ci: d.ci, n: d.n_used };
      card.verification = { ...v, regressions: scored.filter((_i, k) => diffs[k]! < 0).map((i) => tasks[i]!.id) };
      ctx.evidence?.log("lessons", "verified", { id: card.id, verdict: v.verdict, delta: v.delta, ci: v.ci, n: v.n });
      if (v.verdict === "reject") {
        drop.add(card);
        notes.push(`lesson rejected by replay (Δ ${v.delta.toFixed(3)}, n=${v.n}): ${card.rule}`);
      }
    } catch (err) {
      if (!(err instanceof BudgetExhaustedError)) throw err;
      notes.push(`budget exhausted: lesson left unverified: ${card.rule}`);
    }
  }
  return { memory: withoutCards(cards, drop, o.baseMemory, o.proposedMemory), notes };
}

/**
 * Ask the model, before any replay, whether each recurring rule is a standing rule or a one-off
 * request (issue 29 §3); a one-off leaves the proposal, with a note. Unanswered stays in.
 */
export async function checkStanding(
  backend: Pick<SleepBackend, "standing">,
  cards: LessonCard[],
  o: { baseMemory: string; proposedMemory: string },
): Promise<{ memory: string; notes: string[] }> {
  const notes: string[] = [];
  const drop = new Set<LessonCard>();
  for (const card of cards) {
    if (card.op === "retire" || !backend.standing) continue;
    const standing = await backend.standing(
      card.rule,
      card.sources.map((s) => s.quote),
    );
    if (standing === false) {
      drop.add(card);
      notes.push(`lesson left out: the model read it as a one-off request, not a standing rule: ${card.rule}`);
    }
  }
  return { memory: withoutCards(cards, drop, o.baseMemory, o.proposedMemory), notes };
}

/** The proposal without the dropped cards (a dropped replacement keeps the old rule); "" when no card is left. */
function withoutCards(
  cards: LessonCard[],
  drop: ReadonlySet<LessonCard>,
  baseMemory: string,
  proposedMemory: string,
): string {
  if (drop.size === 0) return proposedMemory;
  let rules = getRules(proposedMemory);
  for (const c of drop)
    rules =
      c.op === "replace" && c.previous_rule
        ? rules.map((r) => (r === c.rule ? c.previous_rule! : r))
        : rules.filter((r) => r !== c.rule);
  for (const c of drop) cards.splice(cards.indexOf(c), 1);
  return cards.length ? setLearned(baseMemory, rules) : "";
}
