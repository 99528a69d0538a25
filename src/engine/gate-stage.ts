import type { EvaluationRow } from "./checkpoint.ts";
import { scopeViolation } from "./edits.ts";
import type { SetOutcome } from "./evaluate.ts";
import { pairedRecord } from "./gate.ts";
import { itemScoresOf, judge } from "./gate-pass.ts";
import { adoptAccepted, noteAccepted, type PairedResult, partialRow, pruneItems } from "./paired-gate.ts";
import type { StepRecord } from "./records.ts";
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
  updated: Required<Pick<Updated, "candidate">> & Updated,
  selected: Selected,
): Promise<Gated> {
  const { env, state, step } = s;
  const { sc, clock } = env;
  const emit = (e: Parameters<typeof sc.events.emit>[0]) => sc.events.emit(e);
  const { text: candidate, hash } = updated.candidate;
  // A rejection reads the same to later analysts whether it was decided early or after the full
  // evaluation (no candidate score), so early rejection never changes what the optimizer sees.
  const rejected = (action: string): StepEnd["buffer"] => ({
    action,
    score_before: state.current.score,
    rejected_edits: selected.items.map(describeRejected),
    failed_edits: failedEdits(updated.report ?? []),
  });
  const kept = (action: string): StepEnd["buffer"] => ({ action, failed_edits: failedEdits(updated.report ?? []) });

  const violation =
    formatViolation(candidate, s.current, sc.cfg.optimizer.max_skill_tokens) ??
    (sc.bench.editScope ? scopeViolation(candidate, s.current, sc.bench.editScope) : undefined);
  if (violation) {
    emit({ type: "decision", step: step.global, action: "reject_format", rule: "format", violation });
    const end: StepEnd = {
      action: "reject_format",
      outcome: "rejected",
      count: "rejected",
      buffer: rejected("reject_format"),
    };
    return { end, record: { format_violation: violation }, evaluations: [] };
  }

  const t5 = clock.now();
  const g = sc.gate;
  const origin = `step_${String(step.global).padStart(4, "0")}`;
  const before = state.current;
  const curItems = state.selItems?.[state.current.hash] ?? [];
  const j = await judge(
    env.gate,
    { ev: env.ev, settings: g, state, order: env.pairedOrder },
    {
      candidate,
      hash,
      current: s.current,
      label: `selection step ${step.global}`,
      answers: `selection pass of step ${step.global}`,
      enforce: g.useGate,
      onStart: ({ paired, cacheHit }) =>
        emit({ type: "evaluate_start", step: step.global, items: env.selection.length, paired, cacheHit }),
    },
  );
  const took = seconds(clock, t5);

  if (j.kind === "items") {
    const p: PairedResult = j.paired;
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
      current_score_before: before.score,
      selection_calls_saved: saved,
    };
    const evaluations = [partialRow("candidate", hash, p.out, p.action)];
    emit({ type: "decision", step: step.global, action: p.action, rule: "paired", gate: d });
    let end: StepEnd;
    if (d.verdict === "accept") {
      adoptAccepted(state, hash, origin, p, step.global);
      end = { action: p.action, outcome: "accepted", count: "accepted", buffer: kept(p.action) };
    } else if (d.verdict === "reject")
      end = { action: "reject", outcome: "rejected", count: "rejected", buffer: rejected(p.action) };
    else end = { action: "undecided", outcome: "undecided", count: "undecided", buffer: rejected(p.action) };
    pruneItems(state);
    return { end, record, evaluations, seconds: took };
  }

  if (j.kind === "early") return earlyReject(s, j.out, hash, curItems, rejected("reject"), took);

  const { hard, soft, score, decision: d } = j;
  const prevCurrent = state.current.score;
  const prevBest = state.best.score;
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
    current_score_before: prevCurrent,
    gate,
  };
  const n = env.selection.length;
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
    current: prevCurrent,
    best: prevBest,
    gate,
  } as const;
  if (d.action === "reject") {
    emit(decision);
    pruneItems(state);
    const end: StepEnd = { action: "reject", outcome: "rejected", count: "rejected", buffer: rejected("reject") };
    return { end, record, evaluations, seconds: took };
  }
  if (d.action !== "force_accept") noteAccepted(state, step.global, origin, gate);
  state.current = { hash, hard, soft, score, origin };
  if (d.newBest) state.best = { ...state.current, step: step.global };
  pruneItems(state);
  emit(decision);
  const end: StepEnd = { action: d.action, outcome: "accepted", count: "accepted", buffer: kept(d.action) };
  return { end, record, evaluations, seconds: took };
}

/** The strict pass stopped early: the candidate could no longer beat the current score. */
function earlyReject(
  s: StepScope,
  out: SetOutcome,
  hash: string,
  curItems: NonNullable<StepScope["state"]["selItems"]>[string],
  buffer: StepEnd["buffer"],
  took: number,
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
  return { end, record, evaluations: [partialRow("candidate", hash, out, "reject_early")], seconds: took };
}
