import { aggregate } from "./aggregate.ts";
import { consolidateAppendix } from "./appendix.ts";
import type { EditReportRow } from "./edits.ts";
import { type ErroredItem, type Evaluator, meanScores, requireAnswers, skillHash } from "./evaluate.ts";
import type { StageEvent } from "./events.ts";
import type { Gate } from "./gate.ts";
import type { PairedOrder } from "./paired-gate.ts";
import type { CallAccounting, Clock, RolloutResult, TaskItem } from "./ports.ts";
import {
  type LrDecision,
  STEP_RECORD_SCHEMA,
  type StepAction,
  type StepOutcomeName,
  type StepRecord,
} from "./records.ts";
import { normalisePatches, type RawPatch, reflect } from "./reflect.ts";
import type { LrScheduler } from "./schedule.ts";
import { type Patch, payloadKey } from "./schemas.ts";
import { autonomousLr, rankAndSelect } from "./select.ts";
import { appendixNotes, mergeAppendix, setAppendix } from "./skill-doc.ts";
import type { StageContext } from "./stage-context.ts";
import type { LoopState } from "./state.ts";
import { failedEdits, type StepBufferEntry } from "./step-buffer.ts";
import { update } from "./update.ts";

/** What every step of a run shares. */
export interface StepEnv {
  sc: StageContext;
  ev: Evaluator;
  skills: Map<string, string>;
  selection: readonly TaskItem[];
  scheduler: LrScheduler;
  accounting: CallAccounting;
  clock: Clock;
  totalSteps: number;
  /** The gate chosen for the run (the epoch boundary's slow update decides through the same one). */
  gate: Gate;
  /** The paired gate's item order over the selection split. */
  pairedOrder: PairedOrder;
}

export interface BatchSpec {
  items: TaskItem[];
  seed: number;
  index: number;
}

/** Where a step is and what it starts from; the stages may update the loop state (a copy the trainer commits). */
export interface StepScope {
  env: StepEnv;
  state: LoopState;
  step: { global: number; epoch: number; inEpoch: number; batches: BatchSpec[] };
  /** The current skill's text. */
  current: string;
  /** The epoch's step buffer as the prompts show it. */
  buffer: string;
  /** The optimizer's meta skill for this epoch ("" when none). */
  meta: string;
}

/** How a step ended: its action, outcome, the counter it adds to and what the step buffer keeps of it. */
export interface StepEnd {
  action: StepAction;
  outcome: StepOutcomeName;
  count: "accepted" | "rejected" | "rejected_early" | "skipped" | "undecided";
  /** The step-buffer entry's action and extra fields (none: the step leaves no entry). */
  buffer?: { action: string } & Partial<StepBufferEntry>;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;
export const seconds = (clock: Clock, since: number) => Math.round(((clock.now() - since) / 1000) * 10) / 10;
const emitter = (s: StepScope) => (e: StageEvent) => s.env.sc.events.emit(e);

/** ① rollout: every accumulation batch's items with the current skill, in the same round. */
export interface Rolled {
  perBatch: RolloutResult[][];
  all: RolloutResult[];
  errored: (ErroredItem & { stage: string })[];
  record: Pick<
    StepRecord,
    "schema" | "step" | "epoch" | "step_in_epoch" | "rollout_hard" | "rollout_soft" | "rollout_n" | "rollout_errored"
  >;
  seconds: number;
}

export async function rolloutStage(s: StepScope): Promise<Rolled> {
  const { step } = s;
  const emit = emitter(s);
  const t0 = s.env.clock.now();
  for (const b of step.batches)
    emit({ type: "rollout_start", step: step.global, items: b.items.length, batch: b.index, batchSeed: b.seed });
  const rolled = await Promise.all(
    step.batches.map((b) =>
      s.env.ev.run(s.current, b.items, `rollout step ${step.global}`, undefined, { seed: b.seed }),
    ),
  );
  // Training on a batch the target mostly never answered would only teach noise: stop, resumably
  // (nothing of this step is kept). Items that got no answer are left out of the mean and of reflection.
  step.batches.forEach((b, i) => {
    requireAnswers(rolled[i]!, `training batch ${b.index} of step ${step.global}`);
  });
  const errored = rolled.flatMap((r) => r.errored.map((e) => ({ ...e, stage: "rollout" })));
  const all = rolled.flatMap((r) => r.results);
  const rs = meanScores(all);
  const took = seconds(s.env.clock, t0);
  emit({ type: "rollout_done", step: step.global, hard: rs.hard, soft: rs.soft });
  return {
    perBatch: rolled.map((r) => r.results),
    all,
    errored,
    record: {
      schema: STEP_RECORD_SCHEMA,
      step: step.global,
      epoch: step.epoch,
      step_in_epoch: step.inEpoch,
      rollout_hard: r6(rs.hard),
      rollout_soft: r6(rs.soft),
      rollout_n: all.length,
      rollout_errored: errored.length,
    },
    seconds: took,
  };
}

/** ② reflect: every batch's analysts together; their patches split into failure and success lists. */
export interface Reflected {
  raws: RawPatch[];
  failure: Patch[];
  success: Patch[];
  /** Execution-lapse notes for the skill's appendix. */
  notes: string[];
  record: Pick<StepRecord, "accumulation_batches" | "n_patches" | "n_failure_patches" | "n_success_patches">;
  seconds: number;
}

export async function reflectStage(s: StepScope, rolled: Rolled): Promise<Reflected> {
  const { step, env } = s;
  const t1 = env.clock.now();
  const reflections = await Promise.all(
    step.batches.map((b, i) =>
      reflect(env.sc, {
        results: rolled.perBatch[i]!,
        skill: s.current,
        batchSeed: b.seed,
        step: step.global,
        batch: step.batches.length > 1 ? b.index : null,
        stepBuffer: s.buffer,
        meta: s.meta,
      }),
    ),
  );
  const raws: RawPatch[] = reflections.flatMap((r) => r.patches);
  const { failure, success } = normalisePatches(raws, env.sc.mode);
  const took = seconds(env.clock, t1);
  const accumulation_batches = step.batches.map((b, i) => {
    const m = meanScores(rolled.perBatch[i]!);
    const mine = reflections[i]!.patches;
    return {
      batch_idx: b.index,
      batch_seed: b.seed,
      n_envs: b.items.length,
      hard: r6(m.hard),
      soft: r6(m.soft),
      n_failure_patches: mine.filter((p) => p.source_type === "failure").length,
      n_success_patches: mine.filter((p) => p.source_type === "success").length,
    };
  });
  emitter(s)({
    type: "reflect_done",
    step: step.global,
    failurePatches: failure.length,
    successPatches: success.length,
  });
  return {
    raws,
    failure,
    success,
    notes: raws.flatMap((r) => r.appendix_notes),
    record: {
      accumulation_batches,
      n_patches: failure.length + success.length,
      n_failure_patches: failure.length,
      n_success_patches: success.length,
    },
    seconds: took,
  };
}

/** ③ aggregate: the patches merged into one (hierarchically, in parallel). */
export interface Aggregated {
  patch: Patch;
  record: Pick<StepRecord, "n_edits_merged">;
  seconds: number;
}

export async function aggregateStage(s: StepScope, reflected: Reflected): Promise<Aggregated> {
  const { sc, clock } = s.env;
  const emit = emitter(s);
  const t2 = clock.now();
  const { failure, success } = reflected;
  emit({
    type: "aggregate_start",
    step: s.step.global,
    failure: failure.length,
    success: success.length,
    workers: sc.cfg.gradient.analyst_workers,
  });
  const merged = await aggregate(sc, s.current, s.meta, failure, success);
  const items = (merged.patch[payloadKey(sc.mode)] as unknown[] | undefined) ?? [];
  const took = seconds(clock, t2);
  emit({
    type: "aggregate_done",
    step: s.step.global,
    merged: items.length,
    unit: sc.mode === "patch" ? "edits" : "items",
  });
  return { patch: merged.patch, record: { n_edits_merged: items.length }, seconds: took };
}

/** ④ select: the merged items ranked and clipped to the learning rate (schedule or the optimizer's own choice). */
export interface Selected {
  ranked: Patch;
  /** The items kept, in rank order. */
  items: Record<string, unknown>[];
  lrDecision?: LrDecision;
  record: Pick<
    StepRecord,
    "lr_decision" | "n_edits_ranked" | "edit_budget" | "learning_rate" | "lr_control_mode" | "support_counts"
  >;
  seconds: number;
}

export async function selectStage(s: StepScope, rolled: Rolled, merged: Aggregated): Promise<Selected> {
  const { sc, clock, scheduler } = s.env;
  const emit = emitter(s);
  const t3 = clock.now();
  const key = payloadKey(sc.mode);
  const mergedCount = merged.record.n_edits_merged ?? 0;
  let ranked: Patch;
  let budget: number | null = null;
  let lrDecision: LrDecision | undefined;
  if (sc.mode === "full_rewrite_minibatch") {
    ranked = merged.patch;
    emit({
      type: "select",
      step: s.step.global,
      merged: mergedCount,
      selected: mergedCount,
      unit: "candidates",
      budget: null,
      lrControl: sc.lrControl,
    });
  } else {
    if (sc.lrControl === "autonomous") {
      const rs = meanScores(rolled.all);
      lrDecision = await autonomousLr(
        sc,
        s.current,
        s.meta,
        merged.patch,
        {
          rollout_n: rolled.all.length,
          rollout_hard: rs.hard,
          rollout_soft: rs.soft,
          proposed_update_items: mergedCount,
          update_item_type: key,
        },
        s.buffer,
      );
      budget = lrDecision.learning_rate;
    } else {
      budget = scheduler.step();
      s.state.schedulerStep = scheduler.current;
    }
    ranked = (await rankAndSelect(sc, s.current, s.meta, merged.patch, budget)).patch;
    emit({
      type: "select",
      step: s.step.global,
      merged: mergedCount,
      selected: ((ranked[key] as unknown[]) ?? []).length,
      unit: sc.mode === "patch" ? "edits" : "suggestions",
      budget,
      lrControl: sc.lrControl,
    });
  }
  const items = (ranked[key] as Record<string, unknown>[]) ?? [];
  return {
    ranked,
    items,
    ...(lrDecision ? { lrDecision } : {}),
    record: {
      ...(lrDecision ? { lr_decision: lrDecision } : {}),
      n_edits_ranked: items.length,
      edit_budget: budget,
      learning_rate: budget,
      lr_control_mode: sc.lrControl,
      support_counts: items.map((i) => Number(i.support_count ?? 1)),
    },
    seconds: seconds(clock, t3),
  };
}

type UpdateRecord = Pick<
  StepRecord,
  | "edit_apply_summary"
  | "edits_failed"
  | "edits_applied"
  | "rewrite_change_summary"
  | "n_execution_lapse_notes"
  | "n_appendix_notes_added"
  | "n_appendix_notes_total"
  | "n_appendix_notes_consolidated"
  | "candidate_hash"
  | "candidate_skill_len"
>;

/**
 * Execution-lapse notes join the candidate, so they are validated with it (spec §10.2); past
 * the consolidation threshold the optimizer compacts the appendix.
 */
async function withNotes(
  sc: StageContext,
  skill: string,
  notes: readonly string[],
): Promise<{ skill: string; record: UpdateRecord }> {
  if (!notes.length) return { skill, record: {} };
  const m = mergeAppendix(skill, [...notes]);
  const record: UpdateRecord = {
    n_execution_lapse_notes: notes.length,
    n_appendix_notes_added: m.added,
    n_appendix_notes_total: m.total,
  };
  const threshold = sc.cfg.optimizer.skill_aware_consolidate_threshold;
  if (!(threshold > 0 && m.total > threshold)) return { skill: m.skill, record };
  const compact = await consolidateAppendix(sc, appendixNotes(m.skill));
  if (!compact) return { skill: m.skill, record };
  return { skill: setAppendix(m.skill, compact), record: { ...record, n_appendix_notes_consolidated: compact.length } };
}

/**
 * ⑤ update: the selected items applied (or the rewrite), the execution-lapse notes joined to the
 * candidate; a candidate that changes nothing ends the step here.
 */
export type Updated = {
  /** What became of each edit (patch mode; undefined when the update mode reports none). */
  report?: EditReportRow[];
  record: UpdateRecord;
  seconds: number;
} & (
  | /** A new candidate, registered as the run's skill of its hash, for the gate. */
  { kind: "candidate"; candidate: { text: string; hash: string; origin: string } }
  /** No candidate to gate: how the step ended. */
  | { kind: "end"; end: StepEnd }
);

export async function updateStage(s: StepScope, reflected: Reflected, selected: Selected): Promise<Updated> {
  const { sc, clock } = s.env;
  const { step, state, current } = s;
  const emit = emitter(s);
  const t4 = clock.now();
  const up = await update(sc, current, selected.ranked, s.buffer);
  const took = seconds(clock, t4);
  const report = up.report;
  const edited: UpdateRecord = {
    ...(up.report
      ? {
          edit_apply_summary: up.summary,
          edits_failed: failedEdits(up.report),
          edits_applied: up.summary?.applied ?? 0,
        }
      : {}),
    ...(up.changeSummary ? { rewrite_change_summary: up.changeSummary } : {}),
  };
  if (up.candidate === undefined && !reflected.notes.length) {
    emit({ type: "skip", step: step.global, reason: "no_rewrite" });
    const end: StepEnd = { action: "skip_no_rewrite", outcome: "skipped", count: "skipped" };
    return { kind: "end", end, report, record: edited, seconds: took };
  }
  const noted = await withNotes(sc, up.candidate ?? current, reflected.notes);
  const candidate = noted.skill;
  const hash = skillHash(candidate);
  const record: UpdateRecord = {
    ...edited,
    ...noted.record,
    candidate_hash: hash,
    candidate_skill_len: candidate.length,
  };
  emit({
    type: "update",
    step: step.global,
    before: current.length,
    after: candidate.length,
    applied: up.summary?.applied ?? null,
    total: up.summary?.total ?? null,
  });
  if (hash === state.current.hash) {
    emit({ type: "skip", step: step.global, reason: "no_change" });
    const end: StepEnd = {
      action: "skip_no_change",
      outcome: "skipped",
      count: "skipped",
      buffer: { action: "skip_no_change", failed_edits: failedEdits(report ?? []) },
    };
    return { kind: "end", end, report, record, seconds: took };
  }
  s.env.skills.set(hash, candidate);
  const origin = `candidate_step_${String(step.global).padStart(4, "0")}`;
  return { kind: "candidate", candidate: { text: candidate, hash, origin }, report, record, seconds: took };
}
