import type { BoundaryRecord, CallsRecord, StepRecord, Summary } from "../../engine/index.ts";
import type { BoundaryView, GateView, StageTotals, StepView, SummaryView } from "./run-view.ts";

/*
 * Our run's records as the views the report renders. The records come parsed by src/run/records.ts
 * (their schemas live in engine/records.ts), so every field is read by its name and type: no key
 * guessing. The reference implementation's folders are read by normalize.ts instead.
 */

type StageRow = CallsRecord["by_stage"][string];

/** A stage's prompt + completion tokens, or null when it used none. */
function stageTokens(r: StageRow): number | null {
  const t = r.prompt_tokens + r.completion_tokens;
  return t > 0 ? t : null;
}

function byStage<T>(calls: CallsRecord, pick: (r: StageRow) => T | null): Record<string, T> {
  const out: Record<string, T> = {};
  for (const [stage, row] of Object.entries(calls.by_stage)) {
    if (stage.startsWith("_")) continue;
    const v = pick(row);
    if (v !== null) out[stage] = v;
  }
  return out;
}

function gateView(g: NonNullable<StepRecord["gate"]>): GateView {
  return {
    rule: g.rule,
    verdict: g.verdict,
    reason: g.reason,
    delta: g.delta,
    lo: g.ci[0],
    hi: g.ci[1],
    confidence: g.confidence,
    nUsed: g.n_used,
    nTotal: g.n_total,
    gained: g.flips.gained,
    lost: g.flips.lost,
    ...(g.low_evidence ? { lowEvidence: true } : {}),
  };
}

/** One of our step records as a StepView (without the per-step details the store or step folder adds). */
export function stepViewOf(r: StepRecord): StepView {
  const early =
    r.outcome === "rejected_early" && r.selection_evaluated !== undefined && r.selection_total !== undefined
      ? `${r.selection_evaluated}/${r.selection_total}`
      : "";
  const apply = r.edit_apply_summary;
  return {
    step: r.step,
    epoch: r.epoch,
    lr: r.learning_rate ?? r.edit_budget ?? null,
    rolloutScore: r.rollout_hard,
    candidateScore: r.candidate_gate_score ?? r.selection_hard ?? null,
    currentScore: r.current_score,
    bestScore: r.best_score,
    action: r.outcome,
    rawAction: r.action,
    earlyAt: early,
    gate: r.gate ? gateView(r.gate) : null,
    editsApplied: r.edits_applied ?? apply?.applied ?? 0,
    editsFailed: apply ? apply.total - apply.applied : (r.edits_failed?.length ?? 0),
    calls: r.calls.total,
    tokens: r.tokens.prompt + r.tokens.completion,
    costUsd: r.cost_usd,
    seconds: r.wall_time_s,
    tokensByStage: byStage(r.calls, stageTokens),
    costByStage: byStage(r.calls, (s) => s.cost_usd ?? null),
    edits: [],
    reasoning: [],
    skillBefore: null,
    candidate: null,
  };
}

type ByType = Summary["test_by_type"]["best"];

function testByType(t: Summary["test_by_type"]): SummaryView["testByType"] {
  const sides: ByType[] = [t.baseline, t.best, t.final];
  const types = new Set<string>();
  for (const side of sides) for (const name of Object.keys(side ?? {})) types.add(name);
  const total = (name: string) => t.best?.[name]?.total ?? t.baseline?.[name]?.total ?? t.final?.[name]?.total ?? null;
  return [...types]
    .sort((a, b) => (a === "overall" ? 1 : b === "overall" ? -1 : a.localeCompare(b)))
    .map((name) => ({
      type: name,
      total: total(name),
      baseline: t.baseline?.[name]?.hard_acc ?? null,
      best: t.best?.[name]?.hard_acc ?? null,
      final: t.final?.[name]?.hard_acc ?? null,
    }));
}

/** Our run summary as a SummaryView. */
export function summaryViewOf(s: Summary): SummaryView {
  const stages: StageTotals[] = Object.entries(s.calls.by_stage)
    .filter(([stage]) => !stage.startsWith("_"))
    .map(([stage, r]) => ({
      stage,
      calls: r.calls,
      cached: r.cached,
      tokens: stageTokens(r) ?? 0,
      costUsd: r.cost_usd ?? null,
    }));
  const nf = s.noise_floor;
  return {
    baseline: { selection: s.baseline.selection ?? s.baseline.selection_hard, test: s.baseline.test, step: null },
    best: { selection: s.best.selection ?? s.best.selection_hard, test: s.best.test, step: s.best.step },
    final: { selection: s.final.selection ?? s.final.selection_hard, test: s.final.test, step: null },
    steps: s.steps,
    accepted: s.accepted,
    rejected: s.rejected,
    calls: s.calls.total,
    cachedCalls: s.calls.cached,
    byStage: stages,
    tokens: s.tokens.total,
    costUsd: s.cost_usd,
    wallSeconds: s.wall_s,
    selectionCallsSaved: s.selection_calls_saved,
    ...(s.skill_tokens ? { skillTokens: s.skill_tokens } : {}),
    ...(s.search
      ? {
          search: {
            mode: s.search.mode,
            objective: s.search.objective,
            tokenWeight: s.search.token_weight,
            costBasis: s.search.cost_basis ?? "skill",
            frontier: s.search.frontier.map(({ skill_tokens, task_tokens, task_cost_usd, ...p }) => ({
              ...p,
              tokens: task_tokens ?? skill_tokens,
              skillTokens: skill_tokens,
              ...(task_cost_usd !== undefined ? { costUsd: task_cost_usd } : {}),
            })),
            ...(s.search.pool
              ? {
                  pool: s.search.pool.map(({ skill_tokens, task_tokens, task_cost_usd: _cost, items_best, ...p }) => ({
                    ...p,
                    tokens: task_tokens ?? skill_tokens,
                    skillTokens: skill_tokens,
                    itemsBest: items_best,
                  })),
                }
              : {}),
            ...(s.search.merges ? { merges: s.search.merges } : {}),
            ...(s.search.shortened ? { shortened: s.search.shortened } : {}),
          },
        }
      : {}),
    gateRule: s.gate_rule,
    ...(s.gate_choice?.configured === "auto" ? { gateWhy: s.gate_choice.why } : {}),
    ...(s.accepted_evidence ? { lowEvidenceAccepts: s.accepted_evidence.filter((e) => e.low_evidence).length } : {}),
    noiseFloor: nf
      ? {
          items: nf.items,
          flips: nf.flips,
          flipRate: nf.flip_rate,
          detectableGain: nf.detectable_gain,
          selectionItems: nf.selection_items,
          minEffect: nf.min_effect,
        }
      : null,
    testByType: testByType(s.test_by_type),
  };
}

/** One of our epoch-boundary records as a BoundaryView. */
export function boundaryViewOf(b: BoundaryRecord): BoundaryView {
  return {
    epoch: b.epoch,
    step: b.step,
    slowAction: b.slow_update?.action ?? "",
    slowScore: b.slow_update?.selection_hard ?? null,
    slowReasoning: b.slow_update?.reasoning ?? "",
    slowContent: b.slow_update?.slow_update_content ?? "",
    metaAction: b.meta_skill?.action ?? "",
    metaContent: b.meta_skill?.meta_skill_content ?? "",
  };
}
