import type { EvaluationRow } from "./checkpoint.ts";
import { scopeViolation } from "./edits.ts";
import type { SetOutcome } from "./evaluate.ts";
import { type ItemScores, pairedRecord } from "./gate.ts";
import { itemScoresOf, type Judgement, judge } from "./gate-pass.ts";
import { adoptAccepted, noteAccepted, type PairedResult, partialRow, pruneItems } from "./paired-gate.ts";
import type { StepRecord } from "./records.ts";
import { packageLimits } from "./package.ts";
import { formatViolation } from "./skill-format.ts";
import { seconds, type StepEnd, type StepScope, type Updated, type Selected } from "./stages.ts";
import { describeRejected, failedEdits } from "./step-buffer.ts";

type GateRecord = Pick<
  StepRecord,
  | "format_violation"
  | "gate_metric"
  | "gate"
  | "selection_evaluated"
  | "selection_total"
  | "selection_hard"
  | "selection_soft"
  | "selection_cache_hit"
  | "candidate_gate_score"
  | "candidate_score_estimated"
  | "current_score_before"
  | "selection_calls_saved"
>;

/** ⑥ gate: the candidate's format checked, then decided on the selection split by the run's Gate. */
export interface Gated {
  end: StepEnd;
  record: GateRecord;
  evaluations: EvaluationRow[];
  /** Seconds of the selection pass (none when the format check rejected the candidate). */
  seconds?: number;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

export async function gateStage(
  s: StepScope,
  updated: Extract<Updated, { kind: "candidate" }>,
  selected: Selected,
): Promise<Gated> {
  const { env, state, step } = s;
  const { sc, clock } = env;
  const { text: candidate, hash } = updated.candidate;
  const failed = failedEdits(updated.report ?? []);
  // A rejection reads the same to later analysts whether it was decided early or after the full
  // evaluation (no candidate score), so early rejection never changes what the optimizer sees.
  const buffer: BufferFor = (action, kept) =>
    kept
      ? { action, failed_edits: failed }
      : {
          action,
          score_before: state.current.score,
          rejected_edits: selected.items.map(describeRejected),
          failed_edits: failed,
        };

  const violation =
    formatViolation(candidate, s.current, sc.cfg.optimizer.max_skill_tokens, packageLimits(sc.cfg.optimizer)) ??
    (sc.bench.editScope ? scopeViolation(candidate, s.current, sc.bench.editScope) : undefined);
  if (violation) {
    sc.events.emit({ type: "decision", step: step.global, action: "reject_format", rule: "format", violation });
    const end: StepEnd = {
      action: "reject_format",
      outcome: "rejected",
      count: "rejected",
      buffer: buffer("reject_format", false),
    };
    return { end, record: { format_violation: violation }, evaluations: [] };
  }

  const t5 = clock.now();
  const before = { score: state.current.score, best: state.best.score };
  const curItems = state.selItems?.[state.current.hash] ?? [];
  const j = await judge(
    env.gate,
    { ev: env.ev, settings: sc.gate, state, order: env.pairedOrder },
    {
      candidate,
      hash,
      current: s.current,
      label: `selection step ${step.global}`,
      answers: `selection pass of step ${step.global}`,
      enforce: sc.gate.useGate,
      onStart: ({ paired, cacheHit }) =>
        sc.events.emit({ type: "evaluate_start", step: step.global, items: env.selection.length, paired, cacheHit }),
    },
  );
  const took = seconds(clock, t5);
  const gated =
    j.kind === "items"
      ? itemsVerdict(s, j.paired, hash, before.score, buffer)
      : j.kind === "early"
        ? earlyReject(s, j.out, hash, curItems, buffer("reject", false))
        : meansVerdict(s, j, hash, before, curItems, buffer);
  return { ...gated, seconds: took };
}

/** The step-buffer entry of a verdict: kept (the edits that did not apply) or rejected (with the rejected edits too). */
type BufferFor = (action: string, kept: boolean) => StepEnd["buffer"];

/** A step's origin name (the candidate of step 3 is `step_0003`). */
const originOf = (s: StepScope) => `step_${String(s.step.global).padStart(4, "0")}`;

/** An item-by-item rule decided: an accepted candidate becomes the current skill; each gain feeds the posterior's prior. */
function itemsVerdict(s: StepScope, p: PairedResult, hash: string, scoreBefore: number, buffer: BufferFor): Gated {
  const { state, step } = s;
  const g = s.env.sc.gate;
  const d = p.decision;
  // The run's history of observed gains (the posterior rule's prior for the next decision).
  state.gateHistory = [...(state.gateHistory ?? []), r6(d.delta)];
  const saved = p.out.total - p.out.launched;
  state.selectionSaved += saved;
  const record: GateRecord = {
    gate_metric: g.metric,
    gate: d,
    selection_evaluated: p.out.evaluated,
    selection_total: p.out.total,
    selection_hard: d.verdict === "accept" ? r6(p.estimate.hard) : null,
    selection_soft: d.verdict === "accept" ? r6(p.estimate.soft) : null,
    candidate_gate_score: r6(p.estimate.score),
    candidate_score_estimated: d.verdict !== "accept",
    current_score_before: scoreBefore,
    selection_calls_saved: saved,
  };
  const evaluations = [partialRow("candidate", hash, p.out, p.action)];
  s.env.sc.events.emit({ type: "decision", step: step.global, action: p.action, rule: "paired", gate: d });
  let end: StepEnd;
  if (d.verdict === "accept") {
    adoptAccepted(state, hash, originOf(s), p, step.global);
    end = { action: p.action, outcome: "accepted", count: "accepted", buffer: buffer(p.action, true) };
  } else if (d.verdict === "reject")
    end = { action: "reject", outcome: "rejected", count: "rejected", buffer: buffer(p.action, false) };
  else end = { action: "undecided", outcome: "undecided", count: "undecided", buffer: buffer(p.action, false) };
  pruneItems(state);
  return { end, record, evaluations };
}

/** strict (or no gate) decided on the candidate's means over the whole split. */
function meansVerdict(
  s: StepScope,
  j: Extract<Judgement, { kind: "means" }>,
  hash: string,
  before: { score: number; best: number },
  curItems: readonly (ItemScores | null)[],
  buffer: BufferFor,
): Gated {
  const { state, step } = s;
  const g = s.env.sc.gate;
  const { hard, soft, score, decision: d } = j;
  const verdict = d.action === "reject" ? "reject" : "accept";
  // The strict rule compares means; the record's Δ is the mean difference on the items both have.
  const gate = pairedRecord(g, state.selItems?.[hash] ?? [], curItems, "strict", verdict);
  const record: GateRecord = {
    selection_evaluated: j.evaluated,
    selection_total: j.total,
    ...(j.cached ? { selection_cache_hit: true } : {}),
    selection_hard: r6(hard),
    selection_soft: r6(soft),
    gate_metric: g.metric,
    candidate_gate_score: r6(score),
    current_score_before: before.score,
    gate,
  };
  const n = s.env.selection.length;
  const evaluations: EvaluationRow[] = [
    { kind: "candidate", hash, split: "val", hard, soft, score, evaluated: n, total: n, action: d.action },
  ];
  const decision = {
    type: "decision",
    step: step.global,
    action: d.action,
    rule: "strict",
    metric: g.metric,
    mixedWeight: g.mixedWeight,
    score,
    hard,
    soft,
    current: before.score,
    best: before.best,
    gate,
  } as const;
  if (d.action === "reject") {
    s.env.sc.events.emit(decision);
    pruneItems(state);
    const end: StepEnd = { action: "reject", outcome: "rejected", count: "rejected", buffer: buffer("reject", false) };
    return { end, record, evaluations };
  }
  const origin = originOf(s);
  if (d.action !== "force_accept") noteAccepted(state, step.global, origin, gate);
  state.current = { hash, hard, soft, score, origin };
  if (d.newBest) state.best = { ...state.current, step: step.global };
  pruneItems(state);
  s.env.sc.events.emit(decision);
  return {
    end: { action: d.action, outcome: "accepted", count: "accepted", buffer: buffer(d.action, true) },
    record,
    evaluations,
  };
}

/** The strict pass stopped early: the candidate could no longer beat the current score. */
function earlyReject(
  s: StepScope,
  out: SetOutcome,
  hash: string,
  curItems: readonly (ItemScores | null)[],
  buffer: StepEnd["buffer"],
): Gated {
  const { state, step } = s;
  const g = s.env.sc.gate;
  // Against full evaluation: a candidate rejected early before would have been scored then and
  // found in selCache now, so full evaluation runs nothing for it and all it runs here is extra.
  const repeat = state.earlyRejected?.includes(hash) ?? false;
  const saved = repeat ? -out.launched : out.total - out.launched;
  if (!repeat) state.earlyRejected = [...(state.earlyRejected ?? []), hash];
  state.selectionSaved += saved;
  s.env.sc.events.emit({
    type: "decision",
    step: step.global,
    action: "reject_early",
    rule: "early",
    evaluated: out.evaluated,
    total: out.total,
    current: state.current.score,
  });
  const record: GateRecord = {
    selection_evaluated: out.evaluated,
    selection_total: out.total,
    gate_metric: g.metric,
    selection_hard: null,
    selection_soft: null,
    candidate_gate_score: null,
    current_score_before: state.current.score,
    selection_calls_saved: saved,
    gate: pairedRecord(g, itemScoresOf(out.results), curItems, "strict", "reject", "cannot_reach"),
  };
  const end: StepEnd = { action: "reject_early", outcome: "rejected_early", count: "rejected_early", buffer };
  return { end, record, evaluations: [partialRow("candidate", hash, out, "reject_early")] };
}
