import type { EvaluationRow } from "./checkpoint.ts";
import { isFailure } from "./evaluate.ts";
import { type Gated, gateStage } from "./gate-stage.ts";
import type { CallTotals } from "./ports.ts";
import type { CallsRecord, StepArtifacts, StepRecord } from "./records.ts";
import {
  type Aggregated,
  aggregateStage,
  type Reflected,
  reflectStage,
  type Rolled,
  rolloutStage,
  type Selected,
  type StepEnd,
  type StepEnv,
  type StepScope,
  seconds,
  selectStage,
  type Updated,
  updateStage,
} from "./stages.ts";
import type { LoopState } from "./state.ts";
import { failurePatterns, pushStepBuffer, renderStepBuffer } from "./step-buffer.ts";

interface StepOutcome {
  record: StepRecord;
  artifacts: StepArtifacts;
  newSkills: { hash: string; text: string; origin: string }[];
  evaluations: EvaluationRow[];
}

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

/**
 * One training step, its stages in order: ① rollout ② reflect ③ aggregate ④ select ⑤ update
 * ⑥ gate. Each stage takes the step's scope and the outputs it needs and returns its own typed
 * output; a step that has nothing to try next ends early. The record is assembled from the
 * outputs of the stages that ran (finish).
 */
export async function runStep(
  env: StepEnv,
  state: LoopState,
  step: StepScope["step"],
  meta: string,
): Promise<StepOutcome> {
  const t0 = env.clock.now();
  const before = env.accounting.snapshot();
  const s: StepScope = {
    env,
    state,
    step,
    meta,
    current: env.skills.get(state.current.hash)!,
    buffer: renderStepBuffer(state),
  };
  const done = (parts: StepParts, end: StepEnd) => finish(s, parts, end, t0, before);

  const rolled = await rolloutStage(s);
  const reflected = await reflectStage(s, rolled);
  if (!reflected.failure.length && !reflected.success.length && !reflected.notes.length) {
    env.sc.events.emit({ type: "skip", step: step.global, reason: "no_patches" });
    return done({ rolled, reflected }, { action: "skip_no_patches", outcome: "skipped", count: "skipped" });
  }
  const merged = await aggregateStage(s, reflected);
  const selected = await selectStage(s, rolled, merged);
  const updated = await updateStage(s, reflected, selected);
  if (updated.kind === "end") return done({ rolled, reflected, merged, selected, updated }, updated.end);
  const gated = await gateStage(s, updated, selected);
  return done({ rolled, reflected, merged, selected, updated, gated }, gated.end);
}

/** The outputs of the stages a step ran. */
interface StepParts {
  rolled: Rolled;
  reflected: Reflected;
  merged?: Aggregated;
  selected?: Selected;
  updated?: Updated;
  gated?: Gated;
}

/**
 * The step's record, artifacts, new skills and evaluations, from its stages' outputs and how it
 * ended; the loop state takes the ending's count, step-buffer entry and the items without answers.
 */
function finish(s: StepScope, p: StepParts, end: StepEnd, t0: number, before: CallTotals): StepOutcome {
  const { env, state, step } = s;
  const { rolled, reflected, merged, selected, updated, gated } = p;
  state.counts[end.count] = (state.counts[end.count] ?? 0) + 1;
  if (end.buffer) {
    const { action, ...extra } = end.buffer;
    const entry = {
      step: step.global,
      action,
      n_total: Math.max(rolled.all.length, 1),
      n_fail: rolled.all.filter(isFailure).length,
      failure_patterns: failurePatterns(rolled.all),
      ...extra,
    };
    pushStepBuffer(state, entry, env.sc.cfg.optimizer.step_buffer_window);
  }
  const errored = erroredCounts(rolled.errored);
  const timing: Record<string, number> = {
    rollout_s: rolled.seconds,
    reflect_s: reflected.seconds,
    ...(merged ? { aggregate_s: merged.seconds } : {}),
    ...(selected ? { select_s: selected.seconds } : {}),
    ...(updated ? { update_s: updated.seconds } : {}),
    ...(gated?.seconds === undefined ? {} : { evaluate_s: gated.seconds }),
  };
  const record: StepRecord = {
    ...rolled.record,
    ...reflected.record,
    ...merged?.record,
    ...selected?.record,
    ...updated?.record,
    ...gated?.record,
    action: end.action,
    outcome: end.outcome,
    current_score: state.current.score,
    best_score: state.best.score,
    best_step: state.best.step,
    current_origin: state.current.origin,
    best_origin: state.best.origin,
    current_hash: state.current.hash,
    skill_len: env.skills.get(state.current.hash)!.length,
    timing,
    errored,
    ...(rolled.errored.length ? { errored_items: rolled.errored.slice(0, 20) } : {}),
    ...callDelta(before, env.accounting.snapshot()),
    wall_time_s: seconds(env.clock, t0),
  };
  for (const [k, c] of Object.entries(errored)) state.errored[k] = (state.errored[k] ?? 0) + c;
  const artifacts: StepArtifacts = {
    raw_patches: reflected.raws,
    ...(merged ? { merged_patch: merged.patch } : {}),
    ...(selected?.lrDecision ? { lr_decision: selected.lrDecision } : {}),
    ...(selected ? { ranked_edits: selected.ranked } : {}),
    ...(updated?.report ? { edit_apply_report: updated.report } : {}),
  };
  const newSkills = updated?.kind === "candidate" ? [updated.candidate] : [];
  return { record, artifacts, newSkills, evaluations: gated?.evaluations ?? [] };
}
