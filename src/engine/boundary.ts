import type { InferOutput } from "valibot";
import type { CheckpointContent, EvaluationRow } from "./checkpoint.ts";
import { type Evaluator, requireAnswers, skillHash } from "./evaluate.ts";
import { judge } from "./gate-pass.ts";
import type { Loop } from "./loop.ts";
import { adoptAccepted, partialRow, pruneItems, rememberItems } from "./paired-gate.ts";
import { admitSlowUpdate } from "./pool-step.ts";
import type { BoundaryAction, BoundaryRecord } from "./records.ts";
import type { GateDecision } from "./sequential.ts";
import { trajectoryJson, userMessage, skillSection } from "./messages.ts";
import type { RolloutResult, TaskItem } from "./ports.ts";
import { seededShuffle } from "./random.ts";
import { MetaSkillSchema, SlowUpdateSchema } from "./schemas.ts";
import { ensureSlowUpdatePlaceholder, regionContent, SLOW_END, SLOW_START, setSlowUpdate } from "./skill-doc.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";

const PAIR_ENTRY_CHARS = 2000;

type PairCategory = "improved" | "regressed" | "persistent_fail" | "stable_success";

interface Pair {
  id: string;
  task: string;
  category: PairCategory;
  prev: { hard: number; soft: number; predicted_answer: string; fail_reason: string };
  curr: { hard: number; soft: number; predicted_answer: string; fail_reason: string };
  prev_trajectory?: Record<string, unknown>;
  curr_trajectory?: Record<string, unknown>;
}

function side(r: RolloutResult) {
  return {
    hard: Number(r.hard) || 0,
    soft: Number(r.soft) || 0,
    predicted_answer: String(r.predicted_answer ?? r.answer ?? "N/A"),
    fail_reason: String(r.fail_reason ?? ""),
  };
}

function category(p: RolloutResult, c: RolloutResult): PairCategory {
  const a = Boolean(p.hard);
  const b = Boolean(c.hard);
  return !a && b ? "improved" : a && !b ? "regressed" : !a && !b ? "persistent_fail" : "stable_success";
}

function makePair(sc: StageContext, p: RolloutResult, c: RolloutResult, i: number): Pair {
  const cat = category(p, c);
  const pair: Pair = {
    id: c.id,
    task: String(c.question ?? c.task_description ?? c.instruction ?? c.id),
    category: cat,
    prev: side(p),
    curr: side(c),
  };
  if (cat !== "stable_success") {
    // Two trajectories per pair and up to slow_update_samples pairs: clip entries harder.
    pair.prev_trajectory = trajectoryJson(p, i + 1, sc.bench, PAIR_ENTRY_CHARS);
    pair.curr_trajectory = trajectoryJson(c, i + 1, sc.bench, PAIR_ENTRY_CHARS);
  }
  return pair;
}

/** Pairs of the items both skills answered, in item order; `offset` numbers their trajectories. */
function answeredPairs(
  sc: StageContext,
  items: readonly TaskItem[],
  prev: readonly RolloutResult[],
  curr: readonly RolloutResult[],
  offset: number,
): Pair[] {
  const p = new Map(prev.map((r) => [r.id, r]));
  const c = new Map(curr.map((r) => [r.id, r]));
  const out: Pair[] = [];
  items.forEach((item, k) => {
    const a = p.get(item.id);
    const b = c.get(item.id);
    if (a && b) out.push(makePair(sc, a, b, offset + k));
  });
  return out;
}

/**
 * Longitudinal comparison (spec §2.11 steps 2–5): the previous and current skill on the same
 * training sample, both rolled out in the same round; `changed` tops up from the rest of train.
 */
async function comparePairs(
  sc: StageContext,
  ev: Evaluator,
  prev: string,
  curr: string,
  train: readonly TaskItem[],
  epoch: number,
): Promise<{ pairs: Pair[]; prevHard: number; currHard: number }> {
  const n = sc.cfg.optimizer.slow_update_samples;
  const seed = sc.cfg.train.seed + epoch * 2000;
  const order = seededShuffle(seed, train);
  const sample = order.slice(0, n);
  const [a, b] = await Promise.all([
    ev.run(prev, sample, "slow update (previous skill)"),
    ev.run(curr, sample, "slow update (current skill)"),
  ]);
  requireAnswers(a, `slow-update comparison of epoch ${epoch} (previous skill)`);
  requireAnswers(b, `slow-update comparison of epoch ${epoch} (current skill)`);
  // Items either side left unanswered are no pair: a missing answer is not a regression.
  const all = answeredPairs(sc, sample, a.results, b.results, 0);
  const mean = (rs: RolloutResult[]) => (rs.length ? rs.reduce((s, r) => s + (Number(r.hard) || 0), 0) / rs.length : 0);
  const policy = sc.cfg.optimizer.longitudinal_pair_policy;
  let pairs = all;
  if (policy === "unchanged")
    pairs = all.filter((p) => p.category === "persistent_fail" || p.category === "stable_success");
  if (policy === "changed") {
    pairs = all.filter((p) => p.category === "improved" || p.category === "regressed");
    const rest = order.slice(n);
    const width = Math.max(1, sc.cfg.env.workers ?? 8);
    for (let i = 0; i < rest.length && pairs.length < n; i += width) {
      const chunk = rest.slice(i, i + width);
      const [pa, pb] = await Promise.all([
        ev.run(prev, chunk, "slow update top-up (previous)"),
        ev.run(curr, chunk, "slow update top-up (current)"),
      ]);
      for (const pr of answeredPairs(sc, chunk, pa.results, pb.results, all.length + i)) {
        if (pr.category === "improved" || pr.category === "regressed") pairs.push(pr);
      }
    }
    pairs = pairs.slice(0, n);
  }
  return { pairs, prevHard: mean(a.results), currHard: mean(b.results) };
}

function counts(pairs: Pair[]): Record<PairCategory | "total", number> {
  const c = { total: pairs.length, improved: 0, regressed: 0, persistent_fail: 0, stable_success: 0 };
  for (const p of pairs) c[p.category] += 1;
  return c;
}

function comparisonText(pairs: Pair[]): string {
  const c = counts(pairs);
  const sections: [PairCategory, string][] = [
    ["regressed", "Regressions (highest priority)"],
    ["persistent_fail", "Persistent failures"],
    ["improved", "Improvements"],
    ["stable_success", "Stable successes"],
  ];
  const lines = [
    `Total ${c.total}: improved=${c.improved} regressed=${c.regressed} persistent_fail=${c.persistent_fail} stable_success=${c.stable_success}`,
  ];
  for (const [cat, title] of sections) {
    const ps = pairs.filter((p) => p.category === cat);
    lines.push(
      "",
      `### ${title}`,
      ps.length
        ? ps
            .map(
              (p) =>
                `- ${p.id}: prev ${p.prev.hard ? "PASS" : "FAIL"} (${p.prev.soft.toFixed(2)}) "${p.prev.predicted_answer}" → curr \
${p.curr.hard ? "PASS" : "FAIL"} (${p.curr.soft.toFixed(2)}) "${p.curr.predicted_answer}"${p.curr.fail_reason ? ` — ${p.curr.fail_reason}` : ""}`,
            )
            .join("\n")
        : "(none)",
    );
  }
  lines.push("", "Tasks and both trajectories are in the JSON block below.");
  return lines.join("\n");
}

/** What the two epoch-boundary calls differ in; the rest of their prompt is the same. */
interface BoundaryCall<S extends typeof SlowUpdateSchema | typeof MetaSkillSchema> {
  stage: "slow_update" | "meta_skill";
  /** Titles of the previous and the current epoch's skill sections. */
  skillTitles: readonly [string, string];
  /** What this call wrote last time, which the optimizer reflects on (`key` names it in the JSON block). */
  earlier: { title: string; key: string; text: string; reflect: string; none: string };
  schema: S;
  content: (value: InferOutput<S>) => string;
}

/** Ask the optimizer one epoch-boundary call over the longitudinal pairs; undefined when it wrote nothing. */
async function boundaryCall<S extends typeof SlowUpdateSchema | typeof MetaSkillSchema>(
  sc: StageContext,
  call: BoundaryCall<S>,
  prev: string,
  curr: string,
  pairs: Pair[],
): Promise<{ content: string; reasoning: string } | undefined> {
  const { stage, earlier } = call;
  const user = userMessage(
    [
      skillSection(prev, call.skillTitles[0]),
      skillSection(curr, call.skillTitles[1]),
      { title: earlier.title, body: earlier.text ? `${earlier.text}\n\n${earlier.reflect}` : earlier.none },
      { title: "Longitudinal Comparison", body: comparisonText(pairs) },
    ],
    { stage, [earlier.key]: earlier.text, counts: counts(pairs), pairs },
  );
  const value = await askOptimizer(sc, stage, sc.prompts[stage], user, call.schema);
  const content = value ? call.content(value).trim() : "";
  return content ? { content, reasoning: String(value?.reasoning ?? "") } : undefined;
}

/** The slow-update call: guidance for the protected region (spec §2.11 step 7). */
export function slowUpdateCall(sc: StageContext, prev: string, curr: string, pairs: Pair[]) {
  return boundaryCall(
    sc,
    {
      stage: "slow_update",
      skillTitles: ["Previous Epoch's Skill", "Current Epoch's Skill"],
      earlier: {
        title: "Previous Slow Update Guidance",
        key: "existing_guidance",
        text: regionContent(curr, SLOW_START, SLOW_END),
        reflect: "Reflect on whether this guidance helped, using the evidence below.",
        none: "(no previous guidance: this is the first slow update)",
      },
      schema: SlowUpdateSchema,
      content: (value) => value.slow_update_content,
    },
    prev,
    curr,
    pairs,
  );
}

/** The meta-skill call: optimizer-facing memory for the next epoch (spec §2.12). */
export function metaSkillCall(sc: StageContext, prev: string, curr: string, prevMeta: string, pairs: Pair[]) {
  return boundaryCall(
    sc,
    {
      stage: "meta_skill",
      skillTitles: ["Previous Epoch Last-Step Skill", "Current Epoch Last-Step Skill"],
      earlier: {
        title: "Previous Optimizer Meta Skill",
        key: "previous_meta_skill",
        text: prevMeta,
        reflect: "Reflect on whether this memory improved the quality of the edits.",
        none: "(first update: there is no previous memory)",
      },
      schema: MetaSkillSchema,
      content: (value) => value.meta_skill_content,
    },
    prev,
    curr,
    pairs,
  );
}

/**
 * The epoch boundary (spec §2.11–2.12): after the first epoch the slow-update placeholder; after
 * later ones the previous and current epoch's skills compared on a training sample, then the
 * slow-update and meta-skill calls together. The slow-update candidate is decided by the run's
 * Gate like a step's (gate-pass.ts), or only measured and kept when it is not gated.
 */
export async function epochBoundary(loop: Loop, epoch: number): Promise<void> {
  const { cfg } = loop.deps;
  const { sc, skills } = loop;
  const state = loop.state;
  const record: BoundaryRecord = { epoch, step: state.lastStep };
  const evaluations: EvaluationRow[] = [];
  const newSkills: CheckpointContent["skills"] = [];
  const curr = skills.get(state.current.hash)!;
  const close = () => {
    state.boundaryEpoch = epoch;
    loop.commit({ kind: "boundary", step: state.lastStep, epoch, skills: newSkills, record, evaluations });
  };
  if (epoch === 1 || !(cfg.optimizer.use_slow_update || cfg.optimizer.use_meta_skill)) {
    if (cfg.optimizer.use_slow_update) {
      const placed = placeholder(loop, curr, epoch);
      if (placed) newSkills.push(placed);
      sc.events.emit({ type: "slow_update_placeholder", epoch });
      record.slow_update = { action: "inject_placeholder", epoch };
    }
    if (cfg.optimizer.use_meta_skill) record.meta_skill = { action: "skip_first_epoch", epoch };
    return close();
  }
  const prev = skills.get(state.epochStart[String(epoch)] ?? state.current.hash)!;
  sc.events.emit({ type: "slow_update_start", epoch });
  const { pairs, prevHard, currHard } = await comparePairs(sc, loop.ev, prev, curr, loop.deps.splits.train, epoch);
  sc.events.emit({ type: "slow_update_pairs", epoch, prevHard, currHard, pairs: pairs.length });
  const prevMeta = state.meta[String(epoch - 1)] ?? "";
  const [slow, meta] = await Promise.all([
    cfg.optimizer.use_slow_update ? slowUpdateCall(sc, prev, curr, pairs) : Promise.resolve(undefined),
    cfg.optimizer.use_meta_skill ? metaSkillCall(sc, prev, curr, prevMeta, pairs) : Promise.resolve(undefined),
  ]);
  record.pairs = pairs.map((p) => ({ id: p.id, category: p.category, prev: p.prev, curr: p.curr }));
  if (cfg.optimizer.use_meta_skill) {
    if (meta) state.meta[String(epoch)] = meta.content;
    record.meta_skill = meta
      ? { action: "write_meta_skill", meta_skill_content: meta.content, reasoning: meta.reasoning }
      : { action: "no_content" };
    sc.events.emit({ type: "meta_skill", epoch, chars: meta ? meta.content.length : null });
  }
  if (cfg.optimizer.use_slow_update) {
    if (!slow) record.slow_update = { action: "no_content", prev_hard: prevHard, curr_hard: currHard };
    else {
      const cand = setSlowUpdate(curr, slow.content);
      const h = skillHash(cand);
      skills.set(h, cand);
      const origin = `slow_update_epoch_${String(epoch).padStart(2, "0")}`;
      newSkills.push({ hash: h, text: cand, origin });
      const base = state.current.hash;
      const kept = await gateSlowUpdate(loop, { cand, h, curr, origin, epoch }, evaluations);
      // optimizer.search: pool — a kept slow update joins the pool (the next step's parent is drawn from it).
      admitSlowUpdate(cfg, sc.gate, state, { base, hash: h, text: cand, origin });
      record.slow_update = {
        action: kept.action,
        prev_hard: prevHard,
        curr_hard: currHard,
        candidate_hash: h,
        slow_update_content: slow.content,
        reasoning: slow.reasoning,
        ...(kept.verdict ? { gate: kept.verdict } : {}),
        ...(kept.selection ? { selection_hard: kept.selection.hard, selection_soft: kept.selection.soft } : {}),
      };
      sc.events.emit({
        type: "slow_update_done",
        epoch,
        action: kept.action,
        gate: kept.verdict,
        current: state.current.score,
        best: state.best.score,
      });
    }
  }
  close();
}

/** After the first epoch: the empty slow-update marker pair joins the current skill (its score carries over). */
function placeholder(loop: Loop, curr: string, epoch: number): CheckpointContent["skills"][number] | undefined {
  const state = loop.state;
  const next = ensureSlowUpdatePlaceholder(curr);
  const h = skillHash(next);
  if (h === state.current.hash) return undefined;
  // An empty marker pair changes no instruction; the measured score carries over.
  loop.skills.set(h, next);
  state.selCache[h] = { hard: state.current.hard, soft: state.current.soft };
  if (state.selItems?.[state.current.hash]) rememberItems(state, h, state.selItems[state.current.hash]!);
  state.current = {
    ...state.current,
    hash: h,
    origin: `slow_update_placeholder_epoch_${String(epoch).padStart(2, "0")}`,
  };
  pruneItems(state);
  return { hash: h, text: next, origin: state.current.origin };
}

/**
 * The slow-update candidate on the selection split, through the run's Gate when
 * optimizer.slow_update_gate_with_selection (and the gate) is on; otherwise measured and kept.
 */
async function gateSlowUpdate(
  loop: Loop,
  c: { cand: string; h: string; curr: string; origin: string; epoch: number },
  evaluations: EvaluationRow[],
): Promise<{ action: BoundaryAction; verdict: GateDecision | null; selection?: { hard: number; soft: number } }> {
  const state = loop.state;
  const settings = loop.sc.gate;
  const j = await judge(
    loop.gate,
    { ev: loop.ev, settings, state, order: loop.pairedOrder },
    {
      candidate: c.cand,
      hash: c.h,
      current: c.curr,
      label: `slow update epoch ${c.epoch} selection`,
      answers: `slow-update selection pass of epoch ${c.epoch}`,
      enforce: loop.deps.cfg.optimizer.slow_update_gate_with_selection && settings.useGate,
    },
  );
  if (j.kind === "items") {
    const p = j.paired;
    state.selectionSaved += p.out.total - p.out.launched;
    evaluations.push(partialRow("slow_update", c.h, p.out, p.action));
    if (p.decision.verdict === "accept") adoptAccepted(state, c.h, c.origin, p, state.lastStep);
    pruneItems(state);
    return { action: p.action, verdict: p.decision };
  }
  if (j.kind === "early") {
    state.selectionSaved += j.out.total - j.out.launched;
    evaluations.push(partialRow("slow_update", c.h, j.out, "reject_early"));
    return { action: "reject_early", verdict: null };
  }
  const { hard, soft, score, decision: d } = j;
  const n = loop.selection.length;
  evaluations.push({
    kind: "slow_update",
    hash: c.h,
    split: "val",
    hard,
    soft,
    score,
    evaluated: n,
    total: n,
    action: d.action,
  });
  if (d.action !== "reject") {
    state.current = { hash: c.h, hard, soft, score, origin: c.origin };
    if (d.newBest) state.best = { ...state.current, step: state.lastStep };
  }
  pruneItems(state);
  return { action: d.action, verdict: null, selection: { hard, soft } };
}
