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
    requireAnswered(more, `${phase}:rollout`, ctx.backend);
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

/** What consolidation has learned so far: the documents, the incumbent on val, and every edit's fate. */
interface Learned {
  skill: string;
  memory: string;
  current: Incumbent;
  trials: GateTrial[];
  applied: EditRecord[];
  rejected: EditRecord[];
  unmatched: EditRecord[];
  reflectRaw: string;
  reflected: boolean;
}

type Split = ReturnType<typeof splitForGate>;

/**
 * Reflect: the edits the optimizer proposes for one document from tonight's train replays
 * (contrastive when k > 1 samples disagree); credential-shaped edits are withheld, counted, not shown.
 */
async function proposeEdits(
  ctx: ReplayContext,
  o: ConsolidateOptions,
  st: Learned,
  train: readonly TaskRecord[],
  which: "skill" | "memory",
  phase: string,
): Promise<{ edits: EditRecord[]; raw: string; reflected: boolean } | undefined> {
  const { skill, memory } = st;
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
    rejectedBefore: [...o.rejectedBefore, ...st.rejected.map((e) => e.content)],
    preferences: o.preferences,
  });
  let reflected = false;
  let contrasted: { edits: EditRecord[]; raw: string } | undefined;
  if (k > 1 && ctx.backend.contrast) {
    const sets = await contrastSets(ctx, train, trainResults, skill, memory, k, o.metric, phase);
    if (sets.length) {
      reflected = true;
      contrasted = await ctx.backend.contrast(sets, editInput());
      if (contrasted.edits.length === 0) contrasted = undefined;
    }
  }
  if (failures.length === 0 && !contrasted) return reflected ? { edits: [], raw: st.reflectRaw, reflected } : undefined;
  const r =
    contrasted ??
    (await ctx.backend.reflect({ failures, successes: pairs.filter((p) => p.result.hard >= 1), ...editInput() }));
  const returned = r.edits.slice(0, o.editBudget).map((e) => ({ ...e, target: which }));
  const edits = returned.filter((e) => !isCredentialShaped(`${e.content}\n${e.anchor}`));
  if (edits.length < returned.length)
    ctx.evidence?.log("reflect", "edits_withheld_credential_shaped", {
      target: which,
      count: returned.length - edits.length,
    });
  ctx.evidence?.log("reflect", "edits_returned", { target: which, edits });
  return { edits, raw: r.raw, reflected: true };
}

/** Gate: apply one document's edits (greedily with the gate off), or keep those that beat the incumbent on val. */
async function gateDocument(
  ctx: ReplayContext,
  o: ConsolidateOptions,
  st: Learned,
  val: readonly TaskRecord[],
  which: "skill" | "memory",
  edits: readonly EditRecord[],
): Promise<void> {
  const doc = which === "skill" ? st.skill : st.memory;
  const set = (next: string) => {
    if (which === "skill") st.skill = next;
    else st.memory = next;
  };
  if (!o.gateOn) {
    const g = applyEdits(doc, edits);
    st.unmatched.push(...g.unmatched);
    st.applied.push(...g.applied);
    set(g.doc);
    return;
  }
  const { skill, memory } = st;
  const evaluate = (trialDoc: string, label: string) =>
    replayBatch(ctx, val, which === "skill" ? trialDoc : skill, which === "memory" ? trialDoc : memory, label);
  const out = await gateEdits({ ...st.current, doc }, edits, {
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
  st.trials.push(...out.trials);
  st.unmatched.push(...out.unmatched);
  st.applied.push(...out.accepted);
  st.rejected.push(...out.rejected);
  for (const t of out.trials) ctx.evidence?.log("gate", "trial", { ...t });
  if (out.unmatched.length) ctx.evidence?.log("reflect", "edits_unmatched", { target: which, edits: out.unmatched });
  st.current = { ...out.incumbent, doc: "" };
  set(out.incumbent.doc);
}

/** The consolidation's result from what was learned and the final verdict. */
function consolidateResult(
  ctx: ReplayContext,
  o: ConsolidateOptions,
  st: Learned,
  split: Split,
  v: {
    action: GateAction;
    accepted: boolean;
    baseline: number;
    candidate: number;
    baseResults: readonly ReplayResult[];
  },
  notes: string[],
  budgetHit: boolean,
): ConsolidateResult {
  const { applied, rejected, unmatched } = st;
  const { train, val } = split;
  if (!v.accepted) for (const e of applied) if (!rejected.includes(e)) rejected.push(e);
  const detail = v.baseResults.map((r, i) => ({
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
          : !st.reflected
            ? "every replayed task already succeeds"
            : "the optimizer proposed no edits";
  return {
    newSkill: v.accepted ? st.skill : o.skill,
    newMemory: v.accepted ? st.memory : o.memory,
    accepted: v.accepted,
    gateAction: v.action,
    baseline: v.baseline,
    candidate: v.candidate,
    applied: v.accepted ? applied : [],
    rejected,
    unmatched,
    gateTrials: st.trials,
    holdoutDetail: detail,
    holdoutLeaked: split.leaked,
    reflectRaw: st.reflectRaw,
    callError: redactText(ctx.backend.lastError),
    notes,
    noEditsReason,
    nVal: val.length,
    nTrain: train.length,
  };
}

/** The final decision: re-score the learned documents on val and compare them with the baseline, task by task. */
async function finalDecision(
  ctx: ReplayContext,
  o: ConsolidateOptions,
  st: Learned,
  split: Split,
  base: { score: number; results: readonly ReplayResult[] },
  notes: string[],
  budgetHit: boolean,
): Promise<{ action: GateAction; accepted: boolean; candidate: number }> {
  const { val, leaked } = split;
  let finalResults = st.current.results;
  if (!budgetHit) {
    try {
      finalResults = await replayBatch(ctx, val, st.skill, st.memory, "final_val");
    } catch (err) {
      if (!(err instanceof BudgetExhaustedError)) throw err;
      notes.push("final re-score skipped: budget exhausted (the last gate trial's score is reported)");
    }
  }
  const baseline = base.score;
  const final = resultsScore(finalResults, o.metric);
  const deltas = taskDeltas(val, [...base.results], finalResults, o.metric);
  const blocked = o.noRegression && deltas.some((d) => d.status === "regressed");
  const gate = sleepDecision(
    deltas,
    o.rule ?? "strict",
    { ...SLEEP_SEQUENTIAL, alpha: 1 - (o.confidence ?? 0.95) },
    o.margin ?? 0,
  );
  const better = gate.verdict === "accept" && final > baseline + (o.margin ?? 0);
  let accepted = better && !blocked;
  st.trials.push({
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
  ctx.evidence?.log("gate", "decision", {
    action,
    accepted,
    baseline,
    candidate: final,
    formula:
      o.metric.metric === "mixed" ? `(1-${o.metric.mixedWeight})·hard + ${o.metric.mixedWeight}·soft` : o.metric.metric,
  });
  return { action, accepted, candidate: final };
}

/** Reflect → gate → (memory) reflect → gate → final decision, stopping cleanly on a budget ceiling. */
export async function consolidate(ctx: ReplayContext, o: ConsolidateOptions): Promise<ConsolidateResult> {
  const split = splitForGate(o.tasks);
  const { train, val } = split;
  const notes: string[] = [];
  const st: Learned = {
    skill: o.skill,
    memory: o.memory,
    current: { doc: "", score: 0, results: [] },
    trials: [],
    applied: [],
    rejected: [],
    unmatched: [],
    reflectRaw: "",
    reflected: false,
  };
  let baseline = 0;
  let baseResults: ReplayResult[] = [];
  let budgetHit = false;
  try {
    if (o.gateOn && val.length > 0) {
      baseResults = await replayBatch(ctx, val, st.skill, st.memory, "baseline_val");
      baseline = resultsScore(baseResults, o.metric);
      ctx.evidence?.log("gate", "baseline", { n_val: val.length, score: baseline });
    }
    st.current = { doc: "", score: baseline, results: baseResults };
    const targets: Array<["skill" | "memory", string]> = [];
    if (o.evolveSkill) targets.push(["skill", "train"]);
    if (o.evolveMemory) targets.push(["memory", o.evolveSkill ? "train_post_skill" : "train"]);
    for (const [which, phase] of targets) {
      const proposed = await proposeEdits(ctx, o, st, train, which, phase);
      if (!proposed) continue;
      st.reflected ||= proposed.reflected;
      st.reflectRaw = proposed.raw;
      if (proposed.edits.length) await gateDocument(ctx, o, st, val, which, proposed.edits);
    }
  } catch (err) {
    if (!(err instanceof BudgetExhaustedError)) throw err;
    budgetHit = true;
    notes.push(`stopped early: ${err.message}; only edits the gate had verified are kept`);
  }
  const verdict = (action: GateAction, accepted: boolean, candidate: number) =>
    consolidateResult(ctx, o, st, split, { action, accepted, baseline, candidate, baseResults }, notes, budgetHit);
  if (!o.gateOn) return verdict(st.applied.length ? "greedy_applied" : "greedy_noop", st.applied.length > 0, 0);
  if (st.applied.length === 0) return verdict(budgetHit ? "budget_exhausted" : "reject", false, baseline);
  const final = await finalDecision(ctx, o, st, split, { score: baseline, results: baseResults }, notes, budgetHit);
  return verdict(final.action, final.accepted, final.candidate);
}
