import { aggregate } from "./aggregate.ts";
import type { EvaluationRow } from "./checkpoint.ts";
import type { EditReportRow } from "./edits.ts";
import { type ErroredItem, type Evaluator, isFailure, meanScores, requireAnswers, skillHash } from "./evaluate.ts";
import { decide, type Gate, gateScore, type ItemScores, pairedRecord, semanticDensity } from "./gate.ts";
import {
  adoptAccepted,
  noteAccepted,
  type PairedOrder,
  pairedGate,
  partialRow,
  pruneItems,
  rememberItems,
} from "./paired-gate.ts";
import type { CallAccounting, CallTotals, Clock, TaskItem } from "./ports.ts";
import { normalisePatches, type RawPatch, reflect } from "./reflect.ts";
import type { LrScheduler } from "./schedule.ts";
import { payloadKey, type Patch } from "./schemas.ts";
import { autonomousLr, rankAndSelect } from "./select.ts";
import { scopeViolation } from "./edits.ts";
import { packageLimits } from "./package.ts";
import { formatViolation } from "./skill-format.ts";
import { appendixNotes, mergeAppendix, setAppendix } from "./skill-doc.ts";
import { consolidateAppendix } from "./appendix.ts";
import type { StageContext } from "./stage-context.ts";
import type { LoopState } from "./state.ts";
import {
  describeRejected,
  failedEdits,
  failurePatterns,
  pushStepBuffer,
  renderStepBuffer,
  type StepBufferEntry,
} from "./step-buffer.ts";
import type { StageEvent } from "./events.ts";
import { update } from "./update.ts";
import {
  type CallsRecord,
  type LrDecision,
  STEP_RECORD_SCHEMA,
  type StepArtifacts,
  type StepAction,
  type StepOutcomeName,
  type StepRecord,
} from "./records.ts";

/** The step record's fields known before the step's result. */
type StepDraft = Omit<
  StepRecord,
  | "action"
  | "outcome"
  | "current_score"
  | "best_score"
  | "best_step"
  | "current_origin"
  | "best_origin"
  | "current_hash"
  | "skill_len"
  | "timing"
  | "errored"
  | "errored_items"
  | "calls"
  | "tokens"
  | "cost_usd"
  | "wall_time_s"
>;

interface StepEnv {
  sc: StageContext;
  ev: Evaluator;
  skills: Map<string, string>;
  selection: readonly TaskItem[];
  scheduler: LrScheduler;
  accounting: CallAccounting;
  clock: Clock;
  totalSteps: number;
  /** The gate chosen for the run (the epoch boundary's slow update decides through the same one). */
  decider: Gate;
  /** The paired gate's item order over the selection split. */
  pairedOrder: PairedOrder;
}

export interface BatchSpec {
  items: TaskItem[];
  seed: number;
  index: number;
}

interface StepOutcome {
  record: StepRecord;
  artifacts: StepArtifacts;
  newSkills: { hash: string; text: string; origin: string }[];
  evaluations: EvaluationRow[];
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
const r1 = (x: number) => Math.round(x * 10) / 10;

/** Items that got no answer, per stage. */
function erroredCounts(items: readonly { stage: string }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of items) out[e.stage] = (out[e.stage] ?? 0) + 1;
  return out;
}

/**
 * Structured results dropped per stage (stages with none left out), since `since` when given;
 * undefined when the accounting does not count drops.
 */
export function droppedByStage(t: CallTotals, since?: CallTotals): Record<string, number> | undefined {
  const stages = Object.entries(t.by_stage).filter(([, s]) => s.dropped !== undefined);
  if (!stages.length) return undefined;
  const out: Record<string, number> = {};
  for (const [k, s] of stages) {
    const n = s.dropped! - (since?.by_stage[k]?.dropped ?? 0);
    if (n > 0) out[k] = n;
  }
  return out;
}

/** Per-stage difference of two call snapshots. */
function callDelta(a: CallTotals, b: CallTotals): Pick<StepRecord, "calls" | "tokens" | "cost_usd"> {
  const byStage: CallsRecord["by_stage"] = {};
  const dropped = droppedByStage(b, a);
  for (const [k, s] of Object.entries(b.by_stage)) {
    const p = a.by_stage[k];
    const calls = s.calls - (p?.calls ?? 0);
    if (calls <= 0) continue;
    byStage[k] = {
      calls,
      cached: s.cached - (p?.cached ?? 0),
      prompt_tokens: s.prompt_tokens - (p?.prompt_tokens ?? 0),
      completion_tokens: s.completion_tokens - (p?.completion_tokens ?? 0),
      ...(s.dropped === undefined ? {} : { dropped: s.dropped - (p?.dropped ?? 0) }),
    };
  }
  const cost = a.cost_usd === null || b.cost_usd === null ? null : Math.round((b.cost_usd - a.cost_usd) * 1e6) / 1e6;
  return {
    calls: {
      total: b.calls - a.calls,
      cached: b.cached - a.cached,
      ...(dropped ? { dropped } : {}),
      by_stage: byStage,
    },
    tokens: { prompt: b.prompt_tokens - a.prompt_tokens, completion: b.completion_tokens - a.completion_tokens },
    cost_usd: cost,
  };
}

/** One training step: ① rollout ② reflect ③ aggregate ④ select ⑤ update ⑥ evaluate and gate. */
export async function runStep(
  env: StepEnv,
  state: LoopState,
  step: { global: number; epoch: number; inEpoch: number; batches: BatchSpec[] },
  meta: string,
): Promise<StepOutcome> {
  const { sc, ev, clock } = env;
  const emit = (e: StageEvent) => sc.events.emit(e);
  const t0 = clock.now();
  const before = env.accounting.snapshot();
  const current = env.skills.get(state.current.hash)!;
  const key = payloadKey(sc.mode);
  const timing: Record<string, number> = {};
  const artifacts: StepArtifacts = {};
  const evaluations: StepOutcome["evaluations"] = [];
  const newSkills: StepOutcome["newSkills"] = [];
  const bufferText = renderStepBuffer(state);

  // ① rollout: every accumulation batch in the same round.
  const acc = step.batches.length;
  for (const b of step.batches)
    emit({ type: "rollout_start", step: step.global, items: b.items.length, batch: b.index, batchSeed: b.seed });
  const rolled = await Promise.all(
    step.batches.map((b) => ev.run(current, b.items, `rollout step ${step.global}`, undefined, { seed: b.seed })),
  );
  // Training on a batch the target mostly never answered would only teach noise: stop, resumably
  // (nothing of this step is kept). Items that got no answer are left out of the mean and of reflection.
  step.batches.forEach((b, i) => {
    requireAnswers(rolled[i]!, `training batch ${b.index} of step ${step.global}`);
  });
  const erroredItems: (ErroredItem & { stage: string })[] = rolled.flatMap((r) =>
    r.errored.map((e) => ({ ...e, stage: "rollout" })),
  );
  const all = rolled.flatMap((r) => r.results);
  const rs = meanScores(all);
  timing.rollout_s = r1((clock.now() - t0) / 1000);
  emit({ type: "rollout_done", step: step.global, hard: rs.hard, soft: rs.soft });
  const rec: StepDraft = {
    schema: STEP_RECORD_SCHEMA,
    step: step.global,
    epoch: step.epoch,
    step_in_epoch: step.inEpoch,
    rollout_hard: r6(rs.hard),
    rollout_soft: r6(rs.soft),
    rollout_n: all.length,
    rollout_errored: erroredItems.length,
    accumulation_batches: [],
    n_patches: 0,
    n_failure_patches: 0,
    n_success_patches: 0,
  };
  const set = (fields: Partial<StepDraft>) => Object.assign(rec, fields);

  // ② reflect: all batches' analysts together.
  const t1 = clock.now();
  const reflections = await Promise.all(
    step.batches.map((b, i) =>
      reflect(sc, {
        results: rolled[i]!.results,
        skill: current,
        batchSeed: b.seed,
        step: step.global,
        batch: acc > 1 ? b.index : null,
        stepBuffer: bufferText,
        meta,
      }),
    ),
  );
  const raws: RawPatch[] = reflections.flatMap((r) => r.patches);
  const { failure, success } = normalisePatches(raws, sc.mode);
  timing.reflect_s = r1((clock.now() - t1) / 1000);
  rec.accumulation_batches = step.batches.map((b, i) => {
    const s = meanScores(rolled[i]!.results);
    const mine = reflections[i]!.patches;
    return {
      batch_idx: b.index,
      batch_seed: b.seed,
      n_envs: b.items.length,
      hard: r6(s.hard),
      soft: r6(s.soft),
      n_failure_patches: mine.filter((p) => p.source_type === "failure").length,
      n_success_patches: mine.filter((p) => p.source_type === "success").length,
    };
  });
  set({
    n_patches: failure.length + success.length,
    n_failure_patches: failure.length,
    n_success_patches: success.length,
  });
  artifacts.raw_patches = raws;
  emit({ type: "reflect_done", step: step.global, failurePatches: failure.length, successPatches: success.length });
  const notes = raws.flatMap((r) => r.appendix_notes);

  const finish = (action: StepAction, outcome: StepOutcomeName): StepOutcome => {
    const wall = (clock.now() - t0) / 1000;
    const record: StepRecord = {
      ...rec,
      action,
      outcome,
      current_score: state.current.score,
      best_score: state.best.score,
      best_step: state.best.step,
      current_origin: state.current.origin,
      best_origin: state.best.origin,
      current_hash: state.current.hash,
      skill_len: env.skills.get(state.current.hash)!.length,
      timing,
      errored: erroredCounts(erroredItems),
      ...(erroredItems.length ? { errored_items: erroredItems.slice(0, 20) } : {}),
      ...callDelta(before, env.accounting.snapshot()),
      wall_time_s: r1(wall),
    };
    for (const [k, c] of Object.entries(erroredCounts(erroredItems))) state.errored[k] = (state.errored[k] ?? 0) + c;
    return { record, artifacts, newSkills, evaluations };
  };

  const buffer = (action: string, extra: Partial<StepBufferEntry> = {}) => {
    const entry = {
      step: step.global,
      action,
      n_total: Math.max(all.length, 1),
      n_fail: all.filter(isFailure).length,
      failure_patterns: failurePatterns(all),
      ...extra,
    };
    pushStepBuffer(state, entry, sc.cfg.optimizer.step_buffer_window);
  };

  if (!failure.length && !success.length && !notes.length) {
    emit({ type: "skip", step: step.global, reason: "no_patches" });
    state.counts.skipped += 1;
    return finish("skip_no_patches", "skipped");
  }

  // ③ aggregate
  const t2 = clock.now();
  emit({
    type: "aggregate_start",
    step: step.global,
    failure: failure.length,
    success: success.length,
    workers: sc.cfg.gradient.analyst_workers,
  });
  const merged = await aggregate(sc, current, meta, failure, success);
  const mergedItems = (merged.patch[key] as unknown[] | undefined) ?? [];
  timing.aggregate_s = r1((clock.now() - t2) / 1000);
  rec.n_edits_merged = mergedItems.length;
  artifacts.merged_patch = merged.patch;
  emit({
    type: "aggregate_done",
    step: step.global,
    merged: mergedItems.length,
    unit: sc.mode === "patch" ? "edits" : "items",
  });

  // ④ select
  const t3 = clock.now();
  let ranked: Patch;
  let budget: number | null = null;
  let lrDecision: LrDecision | undefined;
  if (sc.mode === "full_rewrite_minibatch") {
    ranked = merged.patch;
    emit({
      type: "select",
      step: step.global,
      merged: mergedItems.length,
      selected: mergedItems.length,
      unit: "candidates",
      budget: null,
      lrControl: sc.lrControl,
    });
  } else {
    if (sc.lrControl === "autonomous") {
      lrDecision = await autonomousLr(
        sc,
        current,
        meta,
        merged.patch,
        {
          rollout_n: all.length,
          rollout_hard: rs.hard,
          rollout_soft: rs.soft,
          proposed_update_items: mergedItems.length,
          update_item_type: key,
        },
        bufferText,
      );
      budget = lrDecision.learning_rate;
      artifacts.lr_decision = lrDecision;
      rec.lr_decision = lrDecision;
    } else {
      budget = env.scheduler.step();
      state.schedulerStep = env.scheduler.current;
    }
    ranked = (await rankAndSelect(sc, current, meta, merged.patch, budget)).patch;
    emit({
      type: "select",
      step: step.global,
      merged: mergedItems.length,
      selected: ((ranked[key] as unknown[]) ?? []).length,
      unit: sc.mode === "patch" ? "edits" : "suggestions",
      budget,
      lrControl: sc.lrControl,
    });
  }
  const rankedItems = (ranked[key] as Record<string, unknown>[]) ?? [];
  timing.select_s = r1((clock.now() - t3) / 1000);
  set({
    n_edits_ranked: rankedItems.length,
    edit_budget: budget,
    learning_rate: budget,
    lr_control_mode: sc.lrControl,
    support_counts: rankedItems.map((i) => Number(i.support_count ?? 1)),
  });
  artifacts.ranked_edits = ranked;

  // ⑤ update
  const t4 = clock.now();
  const up = await update(sc, current, ranked, bufferText);
  timing.update_s = r1((clock.now() - t4) / 1000);
  let report: EditReportRow[] = [];
  if (up.report) {
    report = up.report;
    rec.edit_apply_summary = up.summary;
    rec.edits_failed = failedEdits(report);
    rec.edits_applied = up.summary?.applied ?? 0;
    artifacts.edit_apply_report = report;
  }
  if (up.changeSummary) rec.rewrite_change_summary = up.changeSummary;
  let candidate = up.candidate;
  if (candidate === undefined && !notes.length) {
    emit({ type: "skip", step: step.global, reason: "no_rewrite" });
    state.counts.skipped += 1;
    return finish("skip_no_rewrite", "skipped");
  }
  candidate ??= current;
  if (notes.length) {
    // Execution-lapse notes join the candidate, so they are validated with it (spec §10.2).
    const m = mergeAppendix(candidate, notes);
    candidate = m.skill;
    set({ n_execution_lapse_notes: notes.length, n_appendix_notes_added: m.added, n_appendix_notes_total: m.total });
    const threshold = sc.cfg.optimizer.skill_aware_consolidate_threshold;
    if (threshold > 0 && m.total > threshold) {
      const compact = await consolidateAppendix(sc, appendixNotes(candidate));
      if (compact) {
        candidate = setAppendix(candidate, compact);
        rec.n_appendix_notes_consolidated = compact.length;
      }
    }
  }
  const cHash = skillHash(candidate);
  set({ candidate_hash: cHash, candidate_skill_len: candidate.length });
  emit({
    type: "update",
    step: step.global,
    before: current.length,
    after: candidate.length,
    applied: up.summary?.applied ?? null,
    total: up.summary?.total ?? null,
  });
  if (cHash === state.current.hash) {
    emit({ type: "skip", step: step.global, reason: "no_change" });
    buffer("skip_no_change", { failed_edits: failedEdits(report) });
    state.counts.skipped += 1;
    return finish("skip_no_change", "skipped");
  }
  env.skills.set(cHash, candidate);
  newSkills.push({ hash: cHash, text: candidate, origin: `candidate_step_${String(step.global).padStart(4, "0")}` });
  // A rejection reads the same to later analysts whether it was decided early or after the full
  // evaluation (no candidate score), so early rejection never changes what the optimizer sees.
  const rejectEntry = (action: string) =>
    buffer(action, {
      score_before: state.current.score,
      rejected_edits: rankedItems.map(describeRejected),
      failed_edits: failedEdits(report),
    });

  const violation =
    formatViolation(candidate, current, sc.cfg.optimizer.max_skill_tokens, packageLimits(sc.cfg.optimizer)) ??
    (sc.bench.editScope ? scopeViolation(candidate, current, sc.bench.editScope) : undefined);
  if (violation) {
    emit({ type: "decision", step: step.global, action: "reject_format", rule: "format", violation });
    rec.format_violation = violation;
    rejectEntry("reject_format");
    state.counts.rejected += 1;
    return finish("reject_format", "rejected");
  }

  // ⑥ evaluate and gate
  const t5 = clock.now();
  const g = sc.gate;
  const origin = `step_${String(step.global).padStart(4, "0")}`;
  if (g.useGate && env.decider.itemwise) {
    emit({ type: "evaluate_start", step: step.global, items: env.selection.length, paired: true, cacheHit: null });
    const before = state.current;
    const p = await pairedGate(
      ev,
      g,
      env.decider,
      state,
      env.pairedOrder,
      candidate,
      current,
      `selection step ${step.global}`,
    );
    timing.evaluate_s = r1((clock.now() - t5) / 1000);
    const d = p.decision;
    // The run's history of observed gains (the posterior rule's prior for the next decision).
    state.gateHistory = [...(state.gateHistory ?? []), r6(d.delta)];
    const saved = p.out.total - p.out.launched;
    state.selectionSaved += saved;
    const verdictAction = p.action;
    evaluations.push(partialRow("candidate", cHash, p.out, verdictAction));
    set({
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
    });
    emit({ type: "decision", step: step.global, action: verdictAction, rule: "paired", gate: d });
    if (d.verdict === "accept") {
      adoptAccepted(state, cHash, origin, p, step.global);
      state.counts.accepted += 1;
      pruneItems(state);
      buffer(verdictAction, { failed_edits: failedEdits(report) });
      return finish(verdictAction, "accepted");
    }
    rejectEntry(verdictAction);
    pruneItems(state);
    if (d.verdict === "reject") {
      state.counts.rejected += 1;
      return finish("reject", "rejected");
    }
    state.counts.undecided = (state.counts.undecided ?? 0) + 1;
    return finish("undecided", "undecided");
  }
  const cached = state.selCache[cHash];
  const curItems = state.selItems?.[state.current.hash] ?? [];
  const byIndex = (rs: readonly { hard?: unknown; soft?: unknown }[]): ItemScores[] =>
    rs.map((r) => [Number(r.hard) || 0, Number(r.soft) || 0] as const);
  let hard: number;
  let soft: number;
  if (cached) {
    ({ hard, soft } = cached);
    emit({
      type: "evaluate_start",
      step: step.global,
      items: env.selection.length,
      paired: false,
      cacheHit: { hash: cHash, hard },
    });
    set({
      selection_evaluated: env.selection.length,
      selection_total: env.selection.length,
      selection_cache_hit: true,
    });
  } else {
    emit({ type: "evaluate_start", step: step.global, items: env.selection.length, paired: false, cacheHit: null });
    const bonus = g.densityWeight ? g.densityWeight * semanticDensity(candidate, g.leadingWords) : 0;
    const early = g.useGate && g.earlyReject ? { gate: g, mustBeat: state.current.score, bonus } : undefined;
    const out = await ev.run(candidate, env.selection, `selection step ${step.global}`, early);
    // The gate compares scores over the same items: one left unanswered after the re-ask stops the run.
    requireAnswers(out, `selection pass of step ${step.global}`, { strict: true });
    timing.evaluate_s = r1((clock.now() - t5) / 1000);
    set({ selection_evaluated: out.evaluated, selection_total: out.total });
    if (!out.complete) {
      // Against full evaluation: a candidate rejected early before would have been scored then and
      // found in selCache now, so full evaluation runs nothing for it and all it runs here is extra.
      const repeat = state.earlyRejected?.includes(cHash) ?? false;
      const saved = repeat ? -out.launched : out.total - out.launched;
      if (!repeat) state.earlyRejected = [...(state.earlyRejected ?? []), cHash];
      state.selectionSaved += saved;
      evaluations.push(partialRow("candidate", cHash, out, "reject_early"));
      emit({
        type: "decision",
        step: step.global,
        action: "reject_early",
        rule: "early",
        evaluated: out.evaluated,
        total: out.total,
        current: state.current.score,
      });
      set({
        gate_metric: g.metric,
        selection_hard: null,
        selection_soft: null,
        candidate_gate_score: null,
        current_score_before: state.current.score,
        selection_calls_saved: saved,
        gate: pairedRecord(g, byIndex(out.results), curItems, "strict", "reject", "cannot_reach"),
      });
      rejectEntry("reject");
      state.counts.rejected_early += 1;
      return finish("reject_early", "rejected_early");
    }
    ({ hard, soft } = meanScores(out.results));
    state.selCache[cHash] = { hard, soft };
    rememberItems(state, cHash, byIndex(out.results));
  }
  timing.evaluate_s ??= r1((clock.now() - t5) / 1000);
  const score = gateScore(g, hard, soft, candidate);
  evaluations.push({
    kind: "candidate",
    hash: cHash,
    split: "val",
    hard,
    soft,
    score,
    evaluated: env.selection.length,
    total: env.selection.length,
  });
  const prevCurrent = state.current.score;
  const prevBest = state.best.score;
  const d = decide(g, score, prevCurrent, prevBest);
  const record = pairedRecord(
    g,
    state.selItems?.[cHash] ?? [],
    curItems,
    "strict",
    d.action === "reject" ? "reject" : "accept",
  );
  // The strict rule compares means; the record's Δ is the mean difference on the items both have.
  set({
    selection_hard: r6(hard),
    selection_soft: r6(soft),
    gate_metric: g.metric,
    candidate_gate_score: r6(score),
    current_score_before: prevCurrent,
    gate: record,
  });
  evaluations[evaluations.length - 1]!.action = d.action;
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
    gate: record,
  } as const;
  if (d.action === "reject") {
    emit(decision);
    rejectEntry("reject");
    state.counts.rejected += 1;
    pruneItems(state);
    return finish("reject", "rejected");
  }
  if (d.action !== "force_accept") noteAccepted(state, step.global, origin, record);
  state.current = { hash: cHash, hard, soft, score, origin };
  if (d.newBest) state.best = { ...state.current, step: step.global };
  state.counts.accepted += 1;
  pruneItems(state);
  emit(decision);
  buffer(d.action, { failed_edits: failedEdits(report) });
  return finish(d.action, "accepted");
}
