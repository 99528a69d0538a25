import type { EvaluationRow } from "./checkpoint.ts";
import { type Evaluator, meanScores, type PairedOutcome, requireAnswers } from "./evaluate.ts";
import { type Gate, type GateSettings, gateScore, type ItemScores, itemScore, withEvidence } from "./gate.ts";
import type { RolloutResult, TaskItem } from "./ports.ts";
import type { GateDecision } from "./sequential.ts";
import type { LoopState } from "./state.ts";

/** The selection items in the paired gate's order (a seeded permutation of selection indices). */
export interface PairedOrder {
  selection: readonly TaskItem[];
  /** order[k] = the selection index evaluated k-th. */
  order: readonly number[];
}

export interface PairedResult {
  decision: GateDecision;
  out: PairedOutcome;
  /**
   * The candidate's selection scores: measured on the whole split when accepted, otherwise the
   * current's plus the paired mean differences on the items used (an estimate, for the record).
   */
  estimate: { hard: number; soft: number; score: number };
  /** The candidate's per-item scores by selection index (null where not evaluated). */
  candidateItems: (ItemScores | null)[];
  /** The action the verdict records: an accepted candidate above the best score is a new best. */
  action: "accept_new_best" | "accept" | "reject" | "undecided";
}

/** Per-item scores of a skill by selection index, as the state keeps them. */
function knownItems(state: LoopState, hash: string): readonly (ItemScores | null)[] {
  return state.selItems?.[hash] ?? [];
}

/** Remember a skill's per-item selection scores (merging with what is known). */
export function rememberItems(state: LoopState, hash: string, byIndex: readonly (ItemScores | null)[]): void {
  state.selItems ??= {};
  const prev = state.selItems[hash] ?? [];
  const n = Math.max(prev.length, byIndex.length);
  state.selItems[hash] = Array.from({ length: n }, (_, i) => byIndex[i] ?? prev[i] ?? null);
}

/** Keep per-item scores only for the skills a later decision can compare against. */
export function pruneItems(state: LoopState): void {
  if (!state.selItems) return;
  const keep = new Set([state.current.hash, state.best.hash, state.baseline.hash]);
  // The pool's candidates keep theirs: the per-item frontier and later re-decisions read them.
  for (const e of state.pool?.entries ?? []) keep.add(e.hash);
  for (const h of Object.keys(state.selItems)) if (!keep.has(h)) delete state.selItems[h];
  for (const h of Object.keys(state.selUsage ?? {})) if (!keep.has(h)) delete state.selUsage![h];
}

function pairedAction(
  verdict: PairedResult["decision"]["verdict"],
  estimate: number,
  bestScore: number,
): PairedResult["action"] {
  if (verdict === "accept") return estimate > bestScore ? "accept_new_best" : "accept";
  return verdict === "reject" ? "reject" : "undecided";
}

/**
 * The selection row of a candidate whose pass stopped before it had a full score (a paired verdict,
 * or an early rejection): the means of the items answered, and no score.
 */
export function partialRow(
  kind: "candidate" | "slow_update",
  hash: string,
  out: { results: readonly RolloutResult[]; evaluated: number; total: number },
  action: string,
): EvaluationRow {
  const { hard, soft } = meanScores(out.results);
  return { kind, hash, split: "val", hard, soft, score: null, evaluated: out.evaluated, total: out.total, action };
}

/** Keep the evidence behind an accepted candidate for the summary (Δ, bounds, n, items won/lost). */
export function noteAccepted(state: LoopState, step: number, origin: string, d: GateDecision): void {
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  state.acceptedEvidence = [
    ...(state.acceptedEvidence ?? []),
    {
      step,
      origin,
      rule: d.rule,
      delta: r4(d.delta),
      ci: [r4(d.ci[0]), r4(d.ci[1])],
      n_used: d.n_used,
      n_total: d.n_total,
      won: d.flips.gained,
      lost: d.flips.lost,
      low_evidence: !(d.ci[0] > 0),
      ...(d.prob_gain === undefined ? {} : { prob_gain: d.prob_gain }),
    },
  ];
}

/** A candidate the paired gate accepted becomes the current skill (and the best, on a new best). */
export function adoptAccepted(state: LoopState, hash: string, origin: string, p: PairedResult, step: number): void {
  noteAccepted(state, step, origin, p.decision);
  const { hard, soft, score } = p.estimate;
  state.current = { hash, hard, soft, score, origin };
  state.selCache[hash] = { hard, soft };
  rememberItems(state, hash, p.candidateItems);
  if (p.action === "accept_new_best") state.best = { ...state.current, step };
}

/**
 * Decide a candidate against the current skill item by item with the run's gate (the paired
 * sequential test or the posterior rule, docs/gate.md). The current's per-item scores rolled out
 * on the way are added to the state.
 */
export async function pairedGate(
  ev: Evaluator,
  g: GateSettings,
  gate: Gate,
  state: LoopState,
  po: PairedOrder,
  candidate: string,
  current: string,
  label: string,
): Promise<PairedResult> {
  const n = po.order.length;
  const knownSel = knownItems(state, state.current.hash);
  const known = po.order.map((i) => knownSel[i] ?? null);
  const test = gate.test(n, { flipRate: state.noiseFloor?.flip_rate, history: state.gateHistory ?? [] }, (k) =>
    known[k] ? 1 - itemScore(g, known[k]![0], known[k]![1]) : 1,
  );
  const items = po.order.map((i) => po.selection[i]!);
  const out = await ev.runPaired({ candidate, current, items, known, test, gate: g, label });
  const back = (xs: readonly (ItemScores | null)[]) => {
    const bySel: (ItemScores | null)[] = new Array(po.selection.length).fill(null);
    po.order.forEach((sel, k) => {
      bySel[sel] = xs[k] ?? null;
    });
    return bySel;
  };
  rememberItems(state, state.current.hash, back(out.currentFresh));
  const decision = withEvidence(test.result());
  let dh = 0;
  let ds = 0;
  let used = 0;
  for (let k = 0; k < n; k++) {
    const c = out.candidate[k];
    const u = out.current[k];
    if (!c || !u) continue;
    dh += c[0] - u[0];
    ds += c[1] - u[1];
    used += 1;
  }
  const m = (x: number) => (used ? x / used : 0);
  const clamp = (x: number) => Math.min(1, Math.max(0, x));
  let candidateItems = back(out.candidate);
  let estimate = {
    hard: clamp(state.current.hard + m(dh)),
    soft: clamp(state.current.soft + m(ds)),
    score: state.current.score + decision.delta,
  };
  if (decision.verdict === "accept" && out.evaluated < n) {
    // A mean over the prefix where a sequential test stopped is biased upwards (it stopped
    // because the prefix looked good). The accepted skill becomes the current one, whose
    // per-item results the next decisions need anyway: score it on the whole split now (the
    // prefix comes from the run's cache) so its recorded selection score is a plain mean.
    const full = await ev.run(candidate, po.selection, `${label} (completing the accepted skill)`);
    requireAnswers(full, `selection pass of ${label}`, { strict: true });
    const sc = meanScores(full.results);
    candidateItems = full.results.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
    estimate = { hard: sc.hard, soft: sc.soft, score: gateScore(g, sc.hard, sc.soft, candidate) };
  }
  const action = pairedAction(decision.verdict, estimate.score, state.best.score);
  return { decision, out, estimate, candidateItems, action };
}
