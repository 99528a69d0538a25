import type { DecisionEvent, FormatViolation, GateDecision, PlanEvent, StageEvent, Warning } from "../engine/index.ts";
import type { BatchEvent } from "../backends/index.ts";
import { budgetMessage, stopMessage } from "../lib/index.ts";

const f4 = (x: number) => x.toFixed(4);
const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;

/** A gate decision in one line: verdict, Δ with its bounds, items used, flips, and why. */
function decisionLine(d: GateDecision): string {
  const why: Record<GateDecision["reason"], string> = {
    better:
      d.rule === "paired"
        ? "better at the configured confidence"
        : d.rule === "posterior"
          ? `posterior probability of a gain ${Math.round((d.prob_gain ?? 0) * 100)} %, more items won than lost`
          : "mean above the current's",
    dominates: `clear dominance on a small split: ${d.flips.gained} item(s) won, none lost`,
    not_better:
      d.rule === "posterior"
        ? `posterior probability of a gain ${Math.round((d.prob_gain ?? 0) * 100)} %, not enough items won`
        : "mean not above the current's",
    below_min_effect: `the gain is below the minimum effect (${(d.min_effect * 100).toFixed(1)} pts)`,
    cannot_reach:
      d.rule === "posterior"
        ? "cannot get above the current skill even if every remaining item favoured it"
        : `cannot reach the minimum effect (${(d.min_effect * 100).toFixed(1)} pts) even if every remaining item favoured it`,
    futile:
      "stopped for futility: even an optimistic gain would leave little chance to show it by the end of the split (not shown better; not shown worse either)",
    regressions: "too many previously-passing items fail (no-regression veto)",
    end_of_split: "the selection split ran out before the evidence decided",
  };
  const pct = Math.round(d.confidence * 100);
  const rule = d.rule === "posterior" ? `posterior; bounds at ${pct}%` : `${d.rule}, ${pct}%`;
  return `${d.verdict.toUpperCase()} Δ=${pts(d.delta)} pts [${pts(d.ci[0])}, ${pts(d.ci[1])}] n=${d.n_used}/${d.n_total} flips \
+${d.flips.gained}/−${d.flips.lost} (${rule}) — ${why[d.reason]}${
    d.low_evidence ? " [low evidence: the paired test would not accept on these items]" : ""
  }`;
}

function planLines(e: PlanEvent): string[] {
  const g = e.gate;
  return [
    `[config] epochs=${e.epochs} steps/epoch=${e.stepsPerEpoch} (auto) accum=${e.accumulation} batch_size=${e.batchSize} train_size=${e.trainSize} \
total_steps=${e.totalSteps}`,
    `[config] lr_scheduler=${e.lrScheduler} edit_budget=${e.editBudget} min_edit_budget=${e.minEditBudget} skill_update_mode=${e.updateMode} \
lr_control_mode=${e.lrControl}`,
    `[gate] metric=${g.metric}${g.metric === "mixed" ? ` mixed_weight=${g.mixedWeight}` : ""}${
      g.useGate ? "" : " (DISABLED → validation runs, " + "candidates force-accepted)"
    } early_reject=${g.useGate && g.earlyReject ? "on" : "off"} rule=${g.rule}${
      g.rule !== "strict"
        ? ` \
confidence=${g.confidence} min_effect=${g.minEffect} (${(g.minEffect * 100).toFixed(1)} pts)`
        : ""
    }${g.maxRegressions === null ? "" : ` max_regressions=${g.maxRegressions}`}`,
    `[slow update] acceptance=${e.slowUpdateGated ? "gated (selection-set validation)" : "force-accept (then re-validated)"}`,
  ];
}

/** Why a skill breaks the format, in words (a record from before the typed form holds its words already). */
export function formatViolationText(v: FormatViolation | string): string {
  if (typeof v === "string") return v;
  switch (v.kind) {
    case "frontmatter_missing":
      return "the YAML frontmatter of the skill is missing or no longer closed";
    case "no_name":
      return "the frontmatter has no `name`";
    case "no_description":
      return "the frontmatter has no `description`";
    case "description_too_long":
      return `the frontmatter description is ${v.chars} characters (max ${v.max})`;
    case "too_many_tokens":
      return `the skill body is about ${v.tokens} tokens, over optimizer.max_skill_tokens=${v.max}`;
    case "out_of_scope":
      return `the candidate changes text outside ${v.scope}, the only part this benchmark may train`;
    case "file_too_large":
      return `${v.file} is about ${v.tokens} tokens, over optimizer.max_file_tokens=${v.max}`;
    case "package_too_large":
      return `the skill package is about ${v.tokens} tokens in all, over optimizer.max_package_tokens=${v.max}`;
    case "bad_file":
      return `${v.file}: ${v.reason}`;
  }
}

function decisionText(e: DecisionEvent): string {
  switch (e.rule) {
    case "format":
      return `[6/6 EVALUATE] REJECT (format) ${formatViolationText(e.violation)}`;
    case "paired":
      return `[6/6 EVALUATE] ${decisionLine(e.gate)}`;
    case "early":
      return `[6/6 EVALUATE] REJECT EARLY at ${e.evaluated}/${e.total}: cannot beat current=${f4(e.current)}`;
    case "strict": {
      const label =
        e.metric === "mixed"
          ? `mixed[w=${e.mixedWeight}]=${f4(e.score)} (hard=${f4(e.hard)} soft=${f4(e.soft)})`
          : `${e.metric}=${f4(e.score)}`;
      const r = e.gate;
      const ci = r.n_used
        ? ` (Δ=${r.delta >= 0 ? "+" : ""}${(r.delta * 100).toFixed(1)} pts [${(r.ci[0] * 100).toFixed(1)}, ${(r.ci[1] * 100).toFixed(1)}] n=${r.n_used} flips \
+${r.flips.gained}/−${r.flips.lost})`
        : "";
      if (e.action === "reject") return `[6/6 EVALUATE] REJECT ${label} <= current=${f4(e.current)}${ci}`;
      if (e.action === "force_accept") return `[6/6 EVALUATE] FORCE-ACCEPT (gate disabled) ${label}${ci}`;
      if (e.action === "accept_new_best")
        return `[6/6 EVALUATE] ACCEPT (new best) ${label} > prev best ${f4(e.best)}${ci}`;
      return `[6/6 EVALUATE] ACCEPT ${label} > current=${f4(e.current)}${ci}`;
    }
  }
}

const SKIP: Record<Extract<StageEvent, { type: "skip" }>["reason"], string> = {
  no_patches: "[skip] no usable patches — skill unchanged",
  no_rewrite: "[skip] no usable rewrite generated — skill unchanged",
  no_change: "[skip] the candidate equals the current skill — nothing to evaluate",
};

/** Advice when the noise floor says the selection split is too small for the gate's minimum effect. */
export function noiseFloorAdvice(e: Extract<StageEvent, { type: "noise_floor" }>): string | undefined {
  if (e.detectable_gain <= e.min_effect) return undefined;
  return `at n=${e.selection_items} and a ${Math.round(e.flip_rate * 100)} % flip rate, the smallest detectable gain is \
~${Math.round(e.detectable_gain * 100)} \
points (evaluation.gate_min_effect is ${e.min_effect}, ${(e.min_effect * 100).toFixed(1)} pts); a larger selection split \
(evaluation.sel_env_num / more val items) lets the \
gate see smaller real gains`;
}

/** A warning in words: the console prints it after `[warn]`; the dashboard lists a run's recorded warnings with it. */
export function warningText(e: Warning): string {
  switch (e.code) {
    case "merge_fallback":
      return `merge level ${e.level} (${e.side}): falling back to concatenation`;
    case "final_merge_fallback":
      return "final merge: falling back to failure items first, then success items";
    case "reask":
      return `${e.label}: ${e.errored} of ${e.total} item(s) got no answer (${e.reason.slice(0, 160)}); asking them once more`;
    case "optimizer_unusable":
      return `${e.stage}: unusable optimizer answer (${e.reason})`;
    case "optimizer_failed":
      return `${e.stage}: optimizer call failed (${e.error})`;
    case "budget_stop":
      return `stopping: ${budgetMessage(e)} (resume later with --resume)`;
    case "stop_condition":
      return `stopping: ${stopMessage(e)}; testing the best skill (resume with a larger ${e.key} to go on)`;
  }
}

/** A provider batch's progress in words (the CLI's `[batch]` lines). */
export function batchText(e: BatchEvent): string {
  switch (e.type) {
    case "submitted":
      return `submitted batch ${e.id} (${e.total} requests to ${e.model})`;
    case "status":
      return `batch ${e.id}: ${e.status} (${e.completed}/${e.total} done${e.failed ? `, ${e.failed} failed` : ""})`;
    case "settled":
      return `batch ${e.id} ${e.status}: ${e.completed}/${e.total} answered${e.failed ? `, ${e.failed} without an answer` : ""}`;
    case "resubmit":
    case "fallback":
      return `request ${e.key.slice(0, 12)} of batch ${e.id}: ${e.reason}${e.type === "resubmit" ? "; resubmitting it once" : ""}`;
    case "live":
      return `a request got no answer from ${e.submissions} batch submissions; asking it live (model.batch_fallback=live)`;
    case "unsupported":
      return `${e.backend} at ${e.endpoint} has no Batch API (HTTP 404 on its files or batches route): calling it live instead \
(set model.batch_required=true to refuse)`;
  }
}

/** The console lines of a stage event; `run` lines (plan, baseline, resume) sit one level out from step lines. */
export function stageLines(e: StageEvent): { level: "run" | "step"; lines: string[] } {
  const run = (...lines: string[]) => ({ level: "run" as const, lines });
  const step = (...lines: string[]) => ({ level: "step" as const, lines });
  switch (e.type) {
    case "plan":
      return run(...planLines(e));
    case "resume":
      return run(`[resume] from step ${e.step} current=${f4(e.current)} best=${f4(e.best)} (origin=${e.origin})`);
    case "baseline_start":
      return run("BASELINE — evaluate initial skill on Selection set (valid_seen)", `Selection items: ${e.items}`);
    case "baseline_done":
      return run(`[baseline result] selection hard=${f4(e.hard)} soft=${f4(e.soft)} gate[${e.metric}]=${f4(e.score)}`);
    case "noise_floor":
      return run(
        `[noise floor] ${e.flips}/${e.items} items flip between two samples of the initial skill (flip rate ${(e.flip_rate * 100).toFixed(1)} %); smallest \
detectable gain on ${e.selection_items} selection items ≈ ${(e.detectable_gain * 100).toFixed(1)} points`,
      );
    case "gate_rule":
      return run(
        e.configured === "auto"
          ? `[gate rule] auto → ${e.rule}: ${e.why}`
          : `[gate rule] ${e.rule} (configured evaluation.gate_rule)`,
      );
    case "meta_loaded":
      return step(`[meta skill] loaded from epoch ${e.epoch} (${e.chars} chars)`);
    case "rollout_start":
      return step(`[1/6 ROLLOUT] train items=${e.items} (batch ${e.batch}, batch_seed=${e.batchSeed})`);
    case "rollout_done":
      return step(`[1/6 done] hard=${f4(e.hard)} soft=${f4(e.soft)}`);
    case "reflect_start":
      return step(
        `[2/6 REFLECT minibatch] ${e.batch === null ? "" : `batch ${e.batch} `}failure=${e.failures}→${e.failureGroups} groups  \
success=${e.successes}→${e.successGroups} groups  (M=${e.minibatch}, L=${e.lr}, workers=${e.workers})`,
      );
    case "reflect_done":
      return step(`[2/6 done] failure_patches=${e.failurePatches} success_patches=${e.successPatches}`);
    case "skip":
      return step(SKIP[e.reason]);
    case "aggregate_start":
      return step(`[3/6 AGGREGATE] failure=${e.failure} success=${e.success} (parallel, workers=${e.workers})`);
    case "aggregate_level":
      return step(
        `[aggregate ${e.side}] level=${e.level}  ${e.patches} patches → ${e.groups} batches (parallel, batch_size=${e.batchSize})`,
      );
    case "aggregate_done":
      return step(`[3/6 done] merged ${e.merged} ${e.unit}`);
    case "select":
      return step(
        e.unit === "candidates"
          ? `[4/6 SELECT] skipped LR/select; using ${e.merged} merged skill candidates`
          : `[4/6 SELECT] ${e.merged} -> ${e.selected} ${e.unit} (budget=${e.budget}, lr_control=${e.lrControl})`,
      );
    case "update":
      return step(
        `[5/6 UPDATE] skill_len ${e.before} -> ${e.after}${e.total === null ? "" : ` (applied ${e.applied}/${e.total})`}`,
      );
    case "evaluate_start":
      return step(
        `[6/6 EVALUATE] selection items=${e.items}${e.paired ? " (decided item by item against the current skill)" : ""}${
          e.cacheHit
            ? ` | cache hit ${e.cacheHit.hash}: \
hard=${f4(e.cacheHit.hard)}`
            : ""
        }`,
      );
    case "decision":
      return step(decisionText(e));
    case "slow_update_placeholder":
      return step(
        `[SLOW UPDATE epoch ${e.epoch}] nothing to compare yet: the skill gets an empty slow-update section for later epochs to fill`,
      );
    case "slow_update_start":
      return step(`SLOW UPDATE — Epoch ${e.epoch} (comparing epoch ${e.epoch - 1} vs ${e.epoch})`);
    case "slow_update_pairs":
      return step(`[slow update] prev hard=${f4(e.prevHard)} curr hard=${f4(e.currHard)} pairs=${e.pairs}`);
    case "meta_skill":
      return step(
        `META SKILL — Epoch ${e.epoch}: ${e.chars === null ? "no content" : `${e.chars} chars of optimizer memory`}`,
      );
    case "slow_update_done":
      return step(
        e.gate
          ? `[SLOW UPDATE epoch ${e.epoch} done] ${decisionLine(e.gate)} current=${f4(e.current)}`
          : `[SLOW UPDATE epoch ${e.epoch} done] action=${e.action} current=${f4(e.current)} best=${f4(e.best)}`,
      );
    case "test_start":
      return step(
        `TEST — ${e.skills} distinct skill(s) (baseline, best, final) on ${e.items} test items, in one round`,
      );
  }
}
