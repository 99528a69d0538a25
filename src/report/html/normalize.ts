import { normalizeEdit } from "./edits.ts";
import type { EditView, GateView, StageTotals, StepAction, StepView, SummaryView } from "./run-view.ts";
import { first, firstNum, isRec, num, type Rec, str } from "./values.ts";

/** Map any recorded action word onto the four the report distinguishes. */
export function normalizeAction(raw: string): StepAction {
  const a = raw.toLowerCase();
  if (a.includes("early")) return "rejected_early";
  if (a.startsWith("undecided")) return "undecided";
  if (a.startsWith("skip")) return "skipped";
  if (a.startsWith("reject") || a === "no_content") return "rejected";
  if (a.includes("accept")) return "accepted";
  return "skipped";
}

function stageMap(v: unknown, pick: (r: Rec) => number | null): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRec(v)) return out;
  for (const [stage, val] of Object.entries(v)) {
    if (stage.startsWith("_")) continue;
    const n = isRec(val) ? pick(val) : num(val);
    if (n !== null) out[stage] = n;
  }
  return out;
}

function tokensOf(r: Rec): number | null {
  const total = firstNum(r, ["total_tokens", "tokens", "total"]);
  if (total !== null) return total;
  const p = num(r.prompt_tokens) ?? 0;
  const c = num(r.completion_tokens) ?? 0;
  return p + c > 0 ? p + c : null;
}

function sum(values: Record<string, number>): number {
  return Object.values(values).reduce((a, b) => a + b, 0);
}

function tokensTotal(v: unknown): number | null {
  if (typeof v === "number") return v;
  if (!isRec(v)) return null;
  const total = num(v.total);
  if (total !== null) return total;
  const p = num(v.prompt ?? v.prompt_tokens);
  const c = num(v.completion ?? v.completion_tokens);
  // Neither key: this is upstream's per-stage map, summed by the caller.
  return p === null && c === null ? null : (p ?? 0) + (c ?? 0);
}

function countOf(v: unknown): number | null {
  return Array.isArray(v) ? v.length : num(v);
}

/** The `gate` field of a step record, when it has one with a Δ and bounds. */
function normalizeGate(v: unknown): GateView | null {
  if (!isRec(v)) return null;
  const delta = num(v.delta);
  const ci = Array.isArray(v.ci) ? v.ci.map(num) : [];
  if (delta === null || ci.length !== 2 || ci[0] === null || ci[1] === null) return null;
  const flips = isRec(v.flips) ? v.flips : {};
  return {
    rule: str(v.rule),
    verdict: str(v.verdict),
    reason: str(v.reason),
    delta,
    lo: ci[0]!,
    hi: ci[1]!,
    confidence: num(v.confidence),
    nUsed: num(v.n_used),
    nTotal: num(v.n_total),
    gained: num(flips.gained),
    lost: num(flips.lost),
    ...(v.low_evidence === true ? { lowEvidence: true } : {}),
  };
}

/** A step record (issue 4's fields, or upstream's step record) as a StepView. */
export function normalizeStep(v: unknown, index: number): StepView | null {
  if (!isRec(v)) return null;
  const rawAction = str(first(v, ["action", "decision"]));
  const outcome = str(v.outcome);
  const calls = v.calls;
  const byStage = isRec(calls) ? calls.by_stage : first(v, ["tokens_by_stage", "tokens"]);
  const tokensByStage = stageMap(byStage, tokensOf);
  const costByStage = stageMap(isRec(calls) ? calls.by_stage : first(v, ["cost_by_stage"]), (r) =>
    firstNum(r, ["cost_usd", "cost"]),
  );
  const editsRaw = first(v, ["edits", "edit_report", "edit_apply_report"]);
  const edits = Array.isArray(editsRaw) ? editsRaw.map(normalizeEdit).filter((e): e is EditView => e !== null) : [];
  const action = normalizeAction(outcome || rawAction);
  const early = first(v, ["rejected_early_at", "early_reject_at", "early_at"]);
  let earlyAt = isRec(early) ? `${str(early.k)}/${str(early.n ?? early.v)}` : str(early);
  const evaluated = num(v.selection_evaluated);
  const total = num(v.selection_total);
  if (!earlyAt && action === "rejected_early" && evaluated !== null && total !== null)
    earlyAt = `${evaluated}/${total}`;
  const tokens = tokensTotal(v.tokens) ?? firstNum(v, ["tokens_total", "total_tokens"]) ?? sum(tokensByStage);
  const applied = firstNum(v, ["edits_applied", "edit_apply_summary.applied", "n_applied"]);
  const summary = isRec(v.edit_apply_summary) ? v.edit_apply_summary : undefined;
  const failed =
    (summary ? (num(summary.total) ?? 0) - (num(summary.applied) ?? 0) : null) ??
    countOf(v.edits_failed) ??
    num(v.n_failed);
  return {
    step: firstNum(v, ["step"]) ?? index + 1,
    epoch: firstNum(v, ["epoch"]) ?? 1,
    lr: firstNum(v, ["learning_rate", "lr", "edit_budget", "budget"]),
    rolloutScore: firstNum(v, ["rollout_score", "rollout.score", "rollout_hard", "train_score"]),
    candidateScore: firstNum(v, [
      "candidate_score",
      "candidate_selection",
      "selection.candidate",
      "candidate_gate_score",
      "selection_hard",
    ]),
    currentScore: firstNum(v, ["current_score", "current_selection", "selection.current"]),
    bestScore: firstNum(v, ["best_score", "best_selection"]),
    action,
    rawAction: rawAction || outcome,
    earlyAt,
    gate: normalizeGate(v.gate),
    editsApplied: applied ?? edits.filter((e) => e.status === "applied").length,
    editsFailed: failed ?? edits.filter((e) => e.status === "failed").length,
    calls: firstNum(v, ["calls", "calls.total", "n_calls"]) ?? 0,
    tokens,
    costUsd: firstNum(v, ["cost_usd", "cost"]),
    seconds: firstNum(v, ["seconds", "wall_time_s", "wall_s", "elapsed_s"]),
    tokensByStage,
    costByStage,
    edits,
    reasoning: [],
    skillBefore: null,
    candidate: null,
  };
}

function triple(v: unknown): { selection: number | null; test: number | null; step: number | null } {
  if (!isRec(v)) return { selection: num(v), test: null, step: null };
  return {
    selection: firstNum(v, ["selection", "selection_hard", "score"]),
    test: firstNum(v, ["test", "test_hard"]),
    step: firstNum(v, ["step"]),
  };
}

function testByType(v: unknown): SummaryView["testByType"] {
  if (!isRec(v)) return [];
  const types = new Set<string>();
  for (const which of ["baseline", "best", "final"])
    if (isRec(v[which])) for (const t of Object.keys(v[which] as Rec)) types.add(t);
  const acc = (which: string, t: string) => {
    const w = v[which];
    const g = isRec(w) ? w[t] : undefined;
    return isRec(g) ? firstNum(g, ["hard_acc", "score", "hard"]) : null;
  };
  const total = (t: string) => {
    for (const which of ["best", "baseline", "final"]) {
      const w = v[which];
      const g = isRec(w) ? w[t] : undefined;
      if (isRec(g) && num(g.total) !== null) return num(g.total);
    }
    return null;
  };
  return [...types]
    .sort((a, b) => (a === "overall" ? 1 : b === "overall" ? -1 : a.localeCompare(b)))
    .map((t) => ({
      type: t,
      total: total(t),
      baseline: acc("baseline", t),
      best: acc("best", t),
      final: acc("final", t),
    }));
}

/** summary.json (issue 4's shape, falling back to upstream's flat keys). */
export function normalizeSummary(v: unknown): SummaryView | null {
  if (!isRec(v)) return null;
  const calls = first(v, ["calls"]);
  const byStageRaw = isRec(calls) ? calls.by_stage : first(v, ["token_summary"]);
  const byStage: StageTotals[] = [];
  if (isRec(byStageRaw)) {
    for (const [stage, val] of Object.entries(byStageRaw)) {
      if (stage.startsWith("_")) continue;
      if (isRec(val)) {
        byStage.push({
          stage,
          calls: firstNum(val, ["calls", "total"]) ?? 0,
          cached: firstNum(val, ["cached"]) ?? 0,
          tokens: tokensOf(val) ?? 0,
          costUsd: firstNum(val, ["cost_usd", "cost"]),
        });
      } else {
        byStage.push({ stage, calls: num(val) ?? 0, cached: 0, tokens: 0, costUsd: null });
      }
    }
  }
  const baseline = triple(v.baseline);
  const best = triple(v.best);
  const final = triple(v.final);
  if (baseline.selection === null) baseline.selection = firstNum(v, ["baseline_selection_hard"]);
  if (baseline.test === null) baseline.test = firstNum(v, ["baseline_test_hard"]);
  if (best.selection === null) best.selection = firstNum(v, ["best_selection_hard"]);
  if (best.test === null) best.test = firstNum(v, ["test_hard"]);
  if (best.step === null) best.step = firstNum(v, ["best_step"]);
  if (final.selection === null) final.selection = firstNum(v, ["final_selection_hard"]);
  if (final.test === null) final.test = firstNum(v, ["final_test_hard"]);
  const tokens = first(v, ["tokens"]);
  return {
    baseline,
    best,
    final,
    steps: firstNum(v, ["steps", "total_steps"]) ?? 0,
    accepted: firstNum(v, ["accepted", "total_accepts"]) ?? 0,
    rejected: firstNum(v, ["rejected", "total_rejects"]) ?? 0,
    calls: isRec(calls)
      ? (firstNum(calls, ["total"]) ?? 0)
      : (num(calls) ?? sum(Object.fromEntries(byStage.map((s) => [s.stage, s.calls])))),
    cachedCalls: isRec(calls) ? (firstNum(calls, ["cached"]) ?? 0) : 0,
    byStage,
    tokens: isRec(tokens) ? (tokensOf(tokens) ?? 0) : (num(tokens) ?? byStage.reduce((a, s) => a + s.tokens, 0)),
    costUsd: firstNum(v, ["cost_usd", "cost"]),
    wallSeconds: firstNum(v, ["wall_s", "total_wall_time_s", "wall_time_s"]),
    selectionCallsSaved: firstNum(v, ["selection_calls_saved"]),
    ...(isRec(v.skill_tokens) &&
    [v.skill_tokens.baseline, v.skill_tokens.best, v.skill_tokens.final].every((x) => num(x) !== null)
      ? {
          skillTokens: {
            baseline: num(v.skill_tokens.baseline)!,
            best: num(v.skill_tokens.best)!,
            final: num(v.skill_tokens.final)!,
          },
        }
      : {}),
    gateRule: str(v.gate_rule),
    ...(isRec(v.gate_choice) && v.gate_choice.configured === "auto" ? { gateWhy: str(v.gate_choice.why) } : {}),
    ...(Array.isArray(v.accepted_evidence)
      ? { lowEvidenceAccepts: v.accepted_evidence.filter((e) => isRec(e) && e.low_evidence === true).length }
      : {}),
    noiseFloor: isRec(v.noise_floor)
      ? {
          items: num(v.noise_floor.items) ?? 0,
          flips: num(v.noise_floor.flips) ?? 0,
          flipRate: num(v.noise_floor.flip_rate) ?? 0,
          detectableGain: num(v.noise_floor.detectable_gain) ?? 0,
          selectionItems: num(v.noise_floor.selection_items) ?? 0,
          minEffect: num(v.noise_floor.min_effect) ?? 0,
        }
      : null,
    testByType: testByType(v.test_by_type),
  };
}
