import { isCredentialShaped, redactText } from "../lib/index.ts";
import { type GateMetric, type GateRule, itemScore } from "../engine/index.ts";
import { BudgetExhaustedError } from "./budget.ts";
import type { ContrastSet } from "./backend/types.ts";
import { gateEdits, type Incumbent, resultsScore, SLEEP_SEQUENTIAL, sleepDecision, taskDeltas } from "./gate.ts";
import { applyEdits } from "./learned-block.ts";
import { type ReplayContext, replayBatch, replayOne, requireAnswered } from "./replay.ts";
import type { ConsolidateResult, EditRecord, GateAction, GateTrial, ReplayResult, TaskRecord } from "./types.ts";

/** Inputs of one consolidation (spec §6.3). */
export interface ConsolidateOptions {
  tasks: readonly TaskRecord[];
  skill: string;
  memory: string;
  editBudget: number;
  metric: GateMetric;
  noRegression: boolean;
  gateOn: boolean;
  granularity: "edit" | "batch";
  /** Required improvement over the incumbent (noise guard, §12.1 #12); default 0. */
  margin?: number;
  /** Gate rule (docs/gate.md): strict (default for Sleep), paired, posterior or auto. */
  rule?: GateRule | "auto";
  confidence?: number;
  evolveSkill: boolean;
  evolveMemory: boolean;
  minVal: number;
  preferences: string;
  /** Independent samples per train task (> 1 enables contrastive reflection, spec §5.6). */
  rolloutsK?: number;
  /** Edit texts rejected on earlier nights (shown to the optimizer, never re-proposed). */
  rejectedBefore: readonly string[];
}

/** k samples per train task; sets with a score spread, widest first, top 6 (spec §5.6). */
async function contrastSets(
  ctx: ReplayContext,
  train: readonly TaskRecord[],
  first: readonly ReplayResult[],
  skill: string,
  memory: string,
  k: number,
  metric: GateMetric,
  phase: string,
): Promise<ContrastSet[]> {
  const samples: ReplayResult[][] = first.map((r) => [r]);
  for (let s = 1; s < k; s++) {
    const more = await Promise.all(train.map((t) => replayOne(ctx, t, skill, memory, `${phase}:rollout`, s)));
    requireAnswered(more, `${phase}:rollout`);
    for (const [i, r] of more.entries()) samples[i]!.push(r);
  }
  const score = (r: ReplayResult) => itemScore(metric, r.hard, r.soft);
  return train
    .map((task, i) => {
      const sorted = [...samples[i]!].sort((a, b) => score(b) - score(a));
      const best = sorted[0]!;
      const worst = sorted[sorted.length - 1]!;
      return { task, best, worst, bestScore: score(best), worstScore: score(worst) };
    })
    .filter((s) => s.bestScore - s.worstScore > 0)
    .sort((a, b) => b.bestScore - b.worstScore - (a.bestScore - a.worstScore))
    .slice(0, 6);
}

/** Train/val split with the leak rules of spec §6.3 step 1. */
function splitForGate(tasks: readonly TaskRecord[]): { train: TaskRecord[]; val: TaskRecord[]; leaked: boolean } {
  let train = tasks.filter((t) => t.split === "train");
  let val = tasks.filter((t) => t.split === "val");
  const nonTest = tasks.filter((t) => t.split !== "test");
  let leaked = false;
  if (val.length === 0) {
    val = train.length ? train : nonTest;
    leaked = val.length > 0;
  }
  if (train.length === 0) {
    train = val;
    leaked = leaked || train.length > 0;
  }
  const valIds = new Set(val.map((t) => t.id));
  if (!leaked && train.some((t) => valIds.has(t.id))) leaked = true;
  return { train, val, leaked };
}

/** Reflect → gate → (memory) reflect → gate → final decision, stopping cleanly on a budget ceiling. */
export async function consolidate(ctx: ReplayContext, o: ConsolidateOptions): Promise<ConsolidateResult> {
  const { train, val, leaked } = splitForGate(o.tasks);
  const notes: string[] = [];
  const trials: GateTrial[] = [];
  const applied: EditRecord[] = [];
  const rejected: EditRecord[] = [];
  const unmatched: EditRecord[] = [];
  let skill = o.skill;
  let memory = o.memory;
  let reflectRaw = "";
  let baseline = 0;
  let baseResults: ReplayResult[] = [];
  let current: Incumbent = { doc: "", score: 0, results: [] };
  let budgetHit: BudgetExhaustedError | undefined;
  let reflected = false;
  const ev = ctx.evidence;
  try {
    if (o.gateOn && val.length > 0) {
      baseResults = await replayBatch(ctx, val, skill, memory, "baseline_val");
      baseline = resultsScore(baseResults, o.metric);
      ev?.log("gate", "baseline", { n_val: val.length, score: baseline });
    }
    current = { doc: "", score: baseline, results: baseResults };
    const step = async (which: "skill" | "memory", phase: string) => {
      const trainResults = await replayBatch(ctx, train, skill, memory, phase);
      const pairs = train.map((task, i) => ({ task, result: trainResults[i]! }));
      const failures = pairs.filter((p) => p.result.hard < 1);
      const k = o.rolloutsK ?? 1;
      // What both the contrast and the reflection are told: the document, the budget and what was turned down.
      const editInput = () => ({
        skill,
        memory,
        editBudget: o.editBudget,
        target: which,
        rejectedBefore: [...o.rejectedBefore, ...rejected.map((e) => e.content)],
        preferences: o.preferences,
      });
      let contrasted: { edits: EditRecord[]; raw: string } | undefined;
      if (k > 1 && ctx.backend.contrast) {
        const sets = await contrastSets(ctx, train, trainResults, skill, memory, k, o.metric, phase);
        if (sets.length) {
          reflected = true;
          contrasted = await ctx.backend.contrast(sets, editInput());
          if (contrasted.edits.length === 0) contrasted = undefined;
        }
      }
      if (failures.length === 0 && !contrasted) return;
      reflected = true;
      const r =
        contrasted ??
        (await ctx.backend.reflect({ failures, successes: pairs.filter((p) => p.result.hard >= 1), ...editInput() }));
      reflectRaw = r.raw;
      const returned = r.edits.slice(0, o.editBudget).map((e) => ({ ...e, target: which }));
      // An edit that quotes something credential-shaped (a token shape, a known secret, a random
      // key no pattern names) is never applied or staged: it is withheld here, counted, not shown.
      const edits = returned.filter((e) => !isCredentialShaped(`${e.content}\n${e.anchor}`));
      if (edits.length < returned.length)
        ev?.log("reflect", "edits_withheld_credential_shaped", {
          target: which,
          count: returned.length - edits.length,
        });
      ev?.log("reflect", "edits_returned", { target: which, edits });
      if (edits.length === 0) return;
      const doc = which === "skill" ? skill : memory;
      if (!o.gateOn) {
        const g = applyEdits(doc, edits);
        unmatched.push(...g.unmatched);
        applied.push(...g.applied);
        if (which === "skill") skill = g.doc;
        else memory = g.doc;
        return;
      }
      const evaluate = (trialDoc: string, label: string) =>
        replayBatch(ctx, val, which === "skill" ? trialDoc : skill, which === "memory" ? trialDoc : memory, label);
      const out = await gateEdits({ ...current, doc }, edits, {
        target: which,
        valTasks: val,
        metric: o.metric,
        noRegression: o.noRegression,
        granularity: o.granularity,
        evaluate,
        margin: o.margin,
        rule: o.rule ?? "strict",
        sequential: { ...SLEEP_SEQUENTIAL, alpha: 1 - (o.confidence ?? 0.95) },
      });
      trials.push(...out.trials);
      unmatched.push(...out.unmatched);
      applied.push(...out.accepted);
      rejected.push(...out.rejected);
      for (const t of out.trials) ev?.log("gate", "trial", { ...t });
      if (out.unmatched.length) ev?.log("reflect", "edits_unmatched", { target: which, edits: out.unmatched });
      current = { ...out.incumbent, doc: "" };
      if (which === "skill") skill = out.incumbent.doc;
      else memory = out.incumbent.doc;
    };
    if (o.evolveSkill) await step("skill", "train");
    if (o.evolveMemory) await step("memory", o.evolveSkill ? "train_post_skill" : "train");
  } catch (err) {
    if (!(err instanceof BudgetExhaustedError)) throw err;
    budgetHit = err;
    notes.push(`stopped early: ${err.message}; only edits the gate had verified are kept`);
  }

  const result = (action: GateAction, accepted: boolean, candidate: number): ConsolidateResult => {
    if (!accepted) for (const e of applied) if (!rejected.includes(e)) rejected.push(e);
    const detail = baseResults.map((r, i) => ({
      id: r.id,
      reference_kind: val[i]?.reference_kind ?? "none",
      hard: r.hard,
      soft: r.soft,
      response_len: r.response.length,
      response_head: redactText(r.response).slice(0, 200),
      why: redactText(r.judge_rationale).slice(0, 200),
    }));
    const noEditsReason =
      applied.length + rejected.length + unmatched.length > 0
        ? ""
        : budgetHit
          ? "budget exhausted before any edit was proposed"
          : train.length === 0
            ? "no tasks to learn from"
            : !reflected
              ? "every replayed task already succeeds"
              : "the optimizer proposed no edits";
    return {
      newSkill: accepted ? skill : o.skill,
      newMemory: accepted ? memory : o.memory,
      accepted,
      gateAction: action,
      baseline,
      candidate,
      applied: accepted ? applied : [],
      rejected,
      unmatched,
      gateTrials: trials,
      holdoutDetail: detail,
      holdoutLeaked: leaked,
      reflectRaw,
      callError: redactText(ctx.backend.lastError),
      notes,
      noEditsReason,
      nVal: val.length,
      nTrain: train.length,
    };
  };

  if (!o.gateOn) return result(applied.length ? "greedy_applied" : "greedy_noop", applied.length > 0, 0);
  if (applied.length === 0) return result(budgetHit ? "budget_exhausted" : "reject", false, baseline);

  let finalResults = current.results;
  if (!budgetHit) {
    try {
      finalResults = await replayBatch(ctx, val, skill, memory, "final_val");
    } catch (err) {
      if (!(err instanceof BudgetExhaustedError)) throw err;
      notes.push("final re-score skipped: budget exhausted (the last gate trial's score is reported)");
    }
  }
  const final = resultsScore(finalResults, o.metric);
  const deltas = taskDeltas(val, baseResults, finalResults, o.metric);
  const blocked = o.noRegression && deltas.some((d) => d.status === "regressed");
  const gate = sleepDecision(
    deltas,
    o.rule ?? "strict",
    { ...SLEEP_SEQUENTIAL, alpha: 1 - (o.confidence ?? 0.95) },
    o.margin ?? 0,
  );
  const better = final > baseline + (o.margin ?? 0) && (gate.rule === "strict" || gate.verdict === "accept");
  let accepted = better && !blocked;
  trials.push({
    target: "final",
    baseline_score: baseline,
    candidate_score: final,
    accepted,
    blocked_by_regression: blocked,
    task_deltas: deltas,
    gate,
  });
  let action: GateAction = accepted ? "accept_new_best" : "reject";
  if (accepted && leaked) {
    action = "reject_unverified";
    accepted = false;
    notes.push("not validated: the held-out tasks overlap the tasks the edits came from");
  } else if (accepted && val.length < o.minVal) {
    action = "reject_unverified";
    accepted = false;
    notes.push(`not validated: only ${val.length} held-out task(s), fewer than min_val_tasks=${o.minVal}`);
  }
  ev?.log("gate", "decision", {
    action,
    accepted,
    baseline,
    candidate: final,
    formula:
      o.metric.metric === "mixed" ? `(1-${o.metric.mixedWeight})·hard + ${o.metric.mixedWeight}·soft` : o.metric.metric,
  });
  return result(action, accepted, final);
}
