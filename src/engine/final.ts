import { type Objective, searchSummary } from "./search.ts";
import type { CheckpointContent, EvaluationRow } from "./checkpoint.ts";
import type { Evaluator } from "./evaluate.ts";
import { meanScores, requireAnswers } from "./evaluate.ts";
import type { EngineEvents } from "./events.ts";
import type { Gate, GateSettings } from "./gate.ts";
import type { CallAccounting, RolloutResult, TaskItem } from "./ports.ts";
import { SUMMARY_SCHEMA, type Summary } from "./records.ts";
import { estimateTokens } from "./skill-format.ts";
import type { LoopState } from "./state.ts";
import { droppedByStage } from "./step.ts";

/** What the final evaluation needs, passed explicitly. */
interface FinalInput {
  state: LoopState;
  skills: ReadonlyMap<string, string>;
  ev: Evaluator;
  gate: GateSettings;
  /** The run's gate (its rule decided the run). */
  rule: Gate;
  benchmark: string;
  /** The test items the three skills are scored on; none: no test pass. */
  testItems: readonly TaskItem[];
  epochs: number;
  totalSteps: number;
  selectionItems: number;
  accounting: CallAccounting;
  events: EngineEvents;
  /** Wall seconds of the run over all its invocations, now. */
  wallSeconds(): number;
  commit(cp: CheckpointContent): void;
  /** optimizer.search and the objective (summary.json's `search`). */
  search: { mode: "single" | "pool"; objective: Objective };
}

/** Per task type: {total, hard_acc} plus `overall` (spec §2.13). */
export function byTaskType(results: readonly RolloutResult[]): Record<string, { total: number; hard_acc: number }> {
  const buckets = new Map<string, { total: number; hard: number }>();
  for (const r of results) {
    for (const k of [String(r.task_type ?? "other"), "overall"]) {
      const b = buckets.get(k) ?? { total: 0, hard: 0 };
      b.total += 1;
      b.hard += Number(r.hard) || 0;
      buckets.set(k, b);
    }
  }
  return Object.fromEntries(
    [...buckets].map(([k, b]) => [
      k,
      { total: b.total, hard_acc: Math.round((b.hard / Math.max(b.total, 1)) * 1e6) / 1e6 },
    ]),
  );
}

const r6 = (x: number | null | undefined) => (x === null || x === undefined ? null : Math.round(x * 1e6) / 1e6);

/**
 * End of training: the baseline, best and final skills are tested on the test split in one round
 * (each distinct text once), then the summary is committed. The final skill's selection score is
 * always measured already (every unvalidated change is re-validated), so there is no separate
 * final-validation pass and promotion happened when the score was measured (spec §10.3).
 */
export async function finalEvaluation(f: FinalInput): Promise<Summary> {
  const { state, events } = f;
  const test: Record<
    string,
    { hard: number; soft: number; by_type: Record<string, { total: number; hard_acc: number }> } | null
  > = {
    baseline: null,
    best: null,
    final: null,
  };
  const evaluations: EvaluationRow[] = [];
  // A budget stop skips the test pass (it would spend past the cap); a stop condition does not.
  if (!state.stopped || state.stopCondition) {
    const items = f.testItems;
    if (items.length) {
      const which = { baseline: state.baseline.hash, best: state.best.hash, final: state.current.hash };
      const distinct = [...new Set(Object.values(which))];
      events.emit({ type: "test_start", skills: distinct.length, items: items.length });
      const outs = await Promise.all(
        distinct.map((h) =>
          f.ev.run(f.skills.get(h)!, items, `test ${h.slice(0, 8)}`, undefined, undefined, 0, "eval"),
        ),
      );
      // Test scores are over the answered items; a test pass mostly without answers stops the run.
      outs.forEach((o, i) => {
        requireAnswers(o, `test pass of skill ${distinct[i]!.slice(0, 8)}`);
      });
      const testErrored = outs.reduce((k, o) => k + o.errored.length, 0);
      if (testErrored) state.errored.test = (state.errored.test ?? 0) + testErrored;
      const byHash = new Map(distinct.map((h, i) => [h, outs[i]!.results]));
      for (const [name, h] of Object.entries(which)) {
        const rs = byHash.get(h)!;
        const m = meanScores(rs);
        test[name] = { hard: m.hard, soft: m.soft, by_type: byTaskType(rs) };
      }
      distinct.forEach((h, i) => {
        const m = meanScores(outs[i]!.results);
        evaluations.push({
          kind: "test",
          hash: h,
          split: "test",
          hard: m.hard,
          soft: m.soft,
          score: null,
          evaluated: outs[i]!.results.length,
          total: items.length,
        });
      });
    }
  }
  const totals = f.accounting.snapshot();
  const dropped = droppedByStage(totals);
  const wall = f.wallSeconds();
  const summary: Summary = {
    schema: SUMMARY_SCHEMA,
    status: state.stopped ? "stopped" : "finished",
    ...(state.stopped ? { stopped_reason: state.stopped } : {}),
    benchmark: f.benchmark,
    gate_metric: f.gate.metric,
    gate_rule: f.gate.useGate ? f.rule.rule : "off",
    ...(f.gate.useGate && state.gateRule
      ? { gate_choice: { configured: state.gateRule.configured, why: state.gateRule.why } }
      : {}),
    ...(f.rule.itemwise
      ? { gate_confidence: 1 - f.gate.sequential.alpha, gate_min_effect: f.gate.sequential.minEffect }
      : {}),
    ...(f.gate.sequential.maxRegressions === null ? {} : { gate_max_regressions: f.gate.sequential.maxRegressions }),
    noise_floor: state.noiseFloor ?? null,
    baseline: {
      selection: r6(state.baseline.score),
      selection_hard: r6(state.baseline.hard),
      test: r6(test.baseline?.hard),
      hash: state.baseline.hash,
    },
    best: {
      selection: r6(state.best.score),
      selection_hard: r6(state.best.hard),
      test: r6(test.best?.hard),
      step: state.best.step,
      origin: state.best.origin,
      hash: state.best.hash,
    },
    final: {
      selection: r6(state.current.score),
      selection_hard: r6(state.current.hard),
      test: r6(test.final?.hard),
      origin: state.current.origin,
      hash: state.current.hash,
    },
    steps: state.lastStep,
    total_steps: f.totalSteps,
    accepted: state.counts.accepted,
    rejected: state.counts.rejected + state.counts.rejected_early,
    rejected_early: state.counts.rejected_early,
    skipped: state.counts.skipped,
    undecided: state.counts.undecided ?? 0,
    accepted_evidence: state.acceptedEvidence ?? [],
    calls: { total: totals.calls, cached: totals.cached, ...(dropped ? { dropped } : {}), by_stage: totals.by_stage },
    tokens: {
      prompt: totals.prompt_tokens,
      completion: totals.completion_tokens,
      total: totals.prompt_tokens + totals.completion_tokens,
    },
    cost_usd: totals.cost_usd === null ? null : Math.round(totals.cost_usd * 1e6) / 1e6,
    wall_s: Math.round(wall * 10) / 10,
    selection_calls_saved: state.selectionSaved,
    // Items that got no answer, per stage: left out of every score (never counted as zeros).
    errored: { ...state.errored },
    rollouts_reused: f.ev.rolloutsReused,
    selection_items: f.selectionItems,
    test_by_type: {
      baseline: test.baseline?.by_type ?? null,
      best: test.best?.by_type ?? null,
      final: test.final?.by_type ?? null,
    },
    test_soft: { baseline: r6(test.baseline?.soft), best: r6(test.best?.soft), final: r6(test.final?.soft) },
    // What a user pays on every task the skill is loaded into: its size (the same ≈4 chars/token
    // estimate as optimizer.max_skill_tokens, over the whole document as written to best_skill.md).
    skill_tokens: {
      baseline: estimateTokens(f.skills.get(state.baseline.hash) ?? ""),
      best: estimateTokens(f.skills.get(state.best.hash) ?? ""),
      final: estimateTokens(f.skills.get(state.current.hash) ?? ""),
    },
    search: searchSummary(state, f.skills, f.search.mode, f.search.objective, f.gate),
  };
  if (!state.stopped) state.finished = true;
  f.commit({ kind: "final", step: state.lastStep, epoch: f.epochs, skills: [], record: summary, evaluations });
  events.emit({ type: "done", summary });
  return summary;
}
