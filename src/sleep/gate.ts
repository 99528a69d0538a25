import {
  chooseRule,
  type GateDecision,
  type GateMetric,
  type GateRule,
  itemScore,
  makeGate,
  type SequentialSettings,
} from "../engine/index.ts";
import { applyEdits } from "./learned-block.ts";
import { aggregateScores } from "./replay.ts";
import type { EditRecord, GateTrial, ReplayResult, TaskDelta, TaskRecord } from "./types.ts";

/** Gate score of a set of results (spec §6.4: the engine's item score of the mean hard and soft). */
export function resultsScore(results: readonly ReplayResult[], m: GateMetric): number {
  const { hard, soft } = aggregateScores(results);
  return itemScore(m, hard, soft);
}

/** Per-task deltas between two replays of the val split (spec §6.5). */
export function taskDeltas(
  tasks: readonly TaskRecord[],
  base: readonly ReplayResult[],
  cand: readonly ReplayResult[],
  m: GateMetric,
): TaskDelta[] {
  const b = new Map(base.map((r) => [r.id, r]));
  const c = new Map(cand.map((r) => [r.id, r]));
  return tasks.map((t) => {
    const br = b.get(t.id);
    const cr = c.get(t.id);
    const bs = br ? itemScore(m, br.hard, br.soft) : Number.NaN;
    const cs = cr ? itemScore(m, cr.hard, cr.soft) : Number.NaN;
    const finite = Number.isFinite(bs) && Number.isFinite(cs);
    const status = !finite ? "regressed" : cs > bs ? "improved" : cs < bs ? "regressed" : "unchanged";
    return {
      task_id: t.id,
      tags: t.tags,
      baseline_score: Number.isFinite(bs) ? bs : null,
      candidate_score: Number.isFinite(cs) ? cs : null,
      status,
      scores_are_finite: finite,
    };
  });
}

/** The incumbent the gate compares against. */
export interface Incumbent {
  doc: string;
  score: number;
  results: ReplayResult[];
}

/** Score a trial document on val. */
type Evaluate = (doc: string, label: string) => Promise<ReplayResult[]>;

/** What a subset search decided. */
interface SubsetOutcome {
  incumbent: Incumbent;
  accepted: EditRecord[];
  rejected: EditRecord[];
  unmatched: EditRecord[];
  trials: GateTrial[];
}

interface SearchOpts {
  target: "skill" | "memory";
  valTasks: readonly TaskRecord[];
  metric: GateMetric;
  noRegression: boolean;
  granularity: "edit" | "batch";
  evaluate: Evaluate;
  /** Required improvement over the incumbent (strictly more than this). */
  margin?: number;
  /**
   * strict: mean above the incumbent's (plus margin); paired: the engine's sequential test;
   * posterior: the engine's posterior rule; auto: chosen by the number of held-out tasks (docs/gate.md).
   */
  rule?: GateRule | "auto";
  sequential?: SequentialSettings;
}

/** Sleep's default paired-test settings: 95 % confidence, any positive gain is worth keeping. */
export const SLEEP_SEQUENTIAL: SequentialSettings = { alpha: 0.05, minEffect: 0, maxRegressions: null };

/**
 * The gate decision on per-task deltas with the engine's gate module (makeGate, the training
 * loop's rules): the candidate's and the incumbent's per-task scores paired in task order (a task
 * without a finite score on both sides is left out: no answer is never a zero). `auto` chooses
 * the rule the way a training run does, from the number of scored tasks (chooseRule; Sleep
 * measures no flip rate). The decision's `rule` names the rule that decided.
 */
export function sleepDecision(
  deltas: readonly TaskDelta[],
  rule: GateRule | "auto",
  s: SequentialSettings = SLEEP_SEQUENTIAL,
  margin = 0,
): GateDecision {
  const scored = deltas.filter((d) => d.scores_are_finite && d.baseline_score !== null && d.candidate_score !== null);
  const diffs = scored.map((d) => d.candidate_score! - d.baseline_score!);
  const regressed = scored.map((d) => d.baseline_score! >= 1 - 1e-9 && d.candidate_score! < 1 - 1e-9);
  const chosen = rule === "auto" ? chooseRule(scored.length, undefined, 1 - s.alpha).rule : rule;
  const out = makeGate(chosen, s).onItems(diffs, regressed, {}, margin);
  // Under strict, say what the paired test makes of the same evidence: on a handful of held-out
  // tasks it is usually "undecided", which is the honest reading of a small gain.
  const paired = chosen === "strict" ? { paired_verdict: makeGate("paired", s).onItems(diffs, regressed).verdict } : {};
  return { ...out, ...paired, n_total: deltas.length };
}

/**
 * Gate a batch of edits against the incumbent (spec §6.3, improved per §12.1 #11). `batch` keeps
 * upstream's all-or-nothing rule. `edit` (default) tries the whole batch first; if it improves,
 * each edit is dropped again when the batch without it scores at least as well (a harmful or idle
 * rule does not ride along); if it does not, each edit is tried alone on top of the incumbent, so
 * one harmful rule cannot sink its useful siblings. Every trial is recorded.
 */
export async function gateEdits(inc: Incumbent, edits: readonly EditRecord[], o: SearchOpts): Promise<SubsetOutcome> {
  const trials: GateTrial[] = [];
  const first = applyEdits(inc.doc, edits);
  const unmatched = [...first.unmatched];
  const applied = first.applied;
  if (applied.length === 0) return { incumbent: inc, accepted: [], rejected: [], unmatched, trials };

  const trial = async (base: Incumbent, subset: readonly EditRecord[], label: string) => {
    const doc = applyEdits(inc.doc, subset).doc;
    const results = await o.evaluate(doc, label);
    const score = resultsScore(results, o.metric);
    const deltas = taskDeltas(o.valTasks, base.results, results, o.metric);
    const blocked = o.noRegression && deltas.some((d) => d.status === "regressed");
    const gate = sleepDecision(deltas, o.rule ?? "strict", o.sequential, o.margin ?? 0);
    // The Gate decides for every rule (strict's accept is its mean difference above the margin);
    // the score check keeps an accept from lowering the incumbent's mean.
    const better = gate.verdict === "accept" && score > base.score + (o.margin ?? 0);
    const improved = better && !blocked;
    trials.push({
      target: o.target,
      baseline_score: base.score,
      candidate_score: score,
      accepted: improved,
      blocked_by_regression: blocked,
      task_deltas: deltas,
      gate,
      edits: [...subset],
    });
    return { improved, inc: { doc, score, results } satisfies Incumbent };
  };

  const whole = await trial(inc, applied, `gate_trial:${o.target}`);
  if (o.granularity === "batch" || applied.length === 1) {
    return whole.improved
      ? { incumbent: whole.inc, accepted: [...applied], rejected: [], unmatched, trials }
      : { incumbent: inc, accepted: [], rejected: [...applied], unmatched, trials };
  }

  if (whole.improved) {
    let keep = [...applied];
    let best = whole.inc;
    for (const e of applied) {
      const without = keep.filter((x) => x !== e);
      if (without.length === 0) break;
      const t = await trial(inc, without, `gate_prune:${o.target}`);
      // Dropping e did not hurt: e contributed nothing (or harmed), so it leaves the set.
      const dropped =
        t.inc.score >= best.score &&
        !(
          o.noRegression &&
          taskDeltas(o.valTasks, inc.results, t.inc.results, o.metric).some((d) => d.status === "regressed")
        );
      trials[trials.length - 1]!.accepted = dropped;
      if (dropped) {
        keep = without;
        best = t.inc;
      }
    }
    const rejected = applied.filter((e) => !keep.includes(e));
    return { incumbent: best, accepted: keep, rejected, unmatched, trials };
  }

  let current = inc;
  const accepted: EditRecord[] = [];
  const rejected: EditRecord[] = [];
  for (const e of applied) {
    const t = await trial(current, [...accepted, e], `gate_single:${o.target}`);
    if (t.improved) {
      accepted.push(e);
      current = t.inc;
    } else rejected.push(e);
  }
  return { incumbent: current, accepted, rejected, unmatched, trials };
}
