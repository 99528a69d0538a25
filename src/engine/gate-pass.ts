import { type Evaluator, meanScores, requireAnswers, type SetOutcome } from "./evaluate.ts";
import {
  decide,
  type Gate,
  type GateAction,
  type GateSettings,
  gateScore,
  type ItemScores,
  semanticDensity,
} from "./gate.ts";
import { type PairedOrder, type PairedResult, pairedGate, rememberItems } from "./paired-gate.ts";
import type { LoopState } from "./state.ts";

/** What a selection pass reads of the run: the evaluator, the gate's settings, the loop state and the split's order. */
interface PassEnv {
  ev: Evaluator;
  settings: GateSettings;
  state: LoopState;
  order: PairedOrder;
}

/** A candidate skill to decide on the selection split against the current one. */
interface PassInput {
  candidate: string;
  hash: string;
  current: string;
  /** The evaluations' label ("selection step 3"). */
  label: string;
  /** What the no-answer check names ("selection pass of step 3"). */
  answers: string;
  /**
   * false: the pass only measures: the candidate is scored on the whole split (no early
   * rejection) and accepted whatever it scores (an ungated slow update, a run with use_gate off).
   */
  enforce: boolean;
  /** Told as the pass starts: item by item, or on means (with the cached score when there is one). */
  onStart?: (start: { paired: boolean; cacheHit: { hash: string; hard: number } | null }) => void;
}

/** How a selection pass ended. */
export type Judgement =
  /** An item-by-item rule decided (it may have stopped before the end of the split). */
  | { kind: "items"; paired: PairedResult }
  /** The strict pass stopped once the candidate could no longer beat the current score. */
  | { kind: "early"; out: SetOutcome }
  /** The candidate's means over the whole split (measured now, or known from the run's cache) and the verdict on them. */
  | {
      kind: "means";
      hard: number;
      soft: number;
      score: number;
      cached: boolean;
      /** Items the means are over (the whole split). */
      evaluated: number;
      total: number;
      decision: { action: GateAction; newBest: boolean };
    };

/** Per-item (hard, soft) scores of rollout results, in their order. */
export const itemScoresOf = (rs: readonly { hard?: unknown; soft?: unknown }[]): ItemScores[] =>
  rs.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);

/**
 * Decide a candidate with the run's gate: an item-by-item rule (paired, posterior) reads the
 * split in the gate's order and stops at its verdict; strict scores the whole split (stopping
 * early once the candidate cannot win) and compares means. The step's gate stage and the epoch
 * boundary's slow update both decide here, through the same Gate. The state learns the scores
 * measured (selection cache, per-item scores); what the caller keeps of the verdict is its own.
 */
export async function judge(gate: Gate, env: PassEnv, c: PassInput): Promise<Judgement> {
  const { ev, settings: g, state } = env;
  if (c.enforce && gate.itemwise) {
    c.onStart?.({ paired: true, cacheHit: null });
    const paired = await pairedGate(ev, g, gate, state, env.order, c.candidate, c.current, c.label);
    return { kind: "items", paired };
  }
  let scores = state.selCache[c.hash];
  const cached = scores !== undefined;
  let counted = { evaluated: env.order.selection.length, total: env.order.selection.length };
  if (scores) c.onStart?.({ paired: false, cacheHit: { hash: c.hash, hard: scores.hard } });
  else {
    c.onStart?.({ paired: false, cacheHit: null });
    const bonus = g.densityWeight ? g.densityWeight * semanticDensity(c.candidate, g.leadingWords) : 0;
    const early = c.enforce && g.earlyReject ? { gate: g, mustBeat: state.current.score, bonus } : undefined;
    const out = await ev.run(c.candidate, env.order.selection, c.label, early);
    // The gate compares scores over the same items: one left unanswered after the re-ask stops the run.
    requireAnswers(out, c.answers, { strict: true });
    if (!out.complete) return { kind: "early", out };
    scores = meanScores(out.results);
    counted = { evaluated: out.evaluated, total: out.total };
    state.selCache[c.hash] = scores;
    rememberItems(state, c.hash, itemScoresOf(out.results));
  }
  const { hard, soft } = scores;
  const score = gateScore(g, hard, soft, c.candidate);
  const decision = c.enforce
    ? decide(g, score, state.current.score, state.best.score)
    : { action: "force_accept" as const, newBest: score > state.best.score };
  return { kind: "means", hard, soft, score, cached, ...counted, decision };
}
