import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { STEP_RECORD_SCHEMA, SUMMARY_SCHEMA, type StepRecord, type Summary } from "../../src/engine/index.ts";
import { commitCheckpoint, openRunStore } from "../../src/store/index.ts";

/**
 * A small run directory as our trainer writes one without a store (history.jsonl of schema-tagged
 * step records, summary.json, skills/, steps/*, best_skill.md, config.resolved.yaml), for renderer
 * tests that must not depend on the engine. The browser tests use fixtures/runs/quickstart,
 * produced by the real engine.
 */
export function writeSyntheticRun(dir: string, opts: { steps?: number; finished?: boolean } = {}): StepRecord[] {
  const n = opts.steps ?? 6;
  mkdirSync(join(dir, "skills"), { recursive: true });
  let skill = "# House conventions\n\nAnswer briefly.\n";
  writeFileSync(join(dir, "skills", "skill_v0000.md"), skill);
  writeFileSync(
    join(dir, "config.resolved.yaml"),
    "model:\n  backend: sim\n  optimizer: sim-optimizer\n  target: sim-target\ntrain:\n  num_epochs: 2\nenv:\n  name: conventions\n",
  );
  const records: StepRecord[] = [];
  let current = 0.2;
  let best = 0.2;
  for (let step = 1; step <= n; step++) {
    const accepted = step % 3 !== 0;
    const early = step % 3 === 0 && step % 2 === 0;
    const candidate = accepted ? Math.min(1, current + 0.15) : current - 0.1;
    const candidateSkill = `${skill}\n## Rule ${step}\nUse format <${step}> & keep "quotes".\n`;
    if (accepted) {
      current = candidate;
      best = Math.max(best, current);
      skill = candidateSkill;
      writeFileSync(join(dir, "skills", `skill_v${String(step).padStart(4, "0")}.md`), skill);
    }
    // The step's edits: the optimizer's merged and ranked patch and how each applied.
    const stepDir = join(dir, "steps", `step_${String(step).padStart(4, "0")}`);
    mkdirSync(stepDir, { recursive: true });
    const edits = [
      { op: "append", content: `Write dates as YYYY-MM-DD <${step}>`, rationale: "expected answers use ISO dates" },
      { op: "replace", target: "Round", content: "Round to two decimals", rationale: "rounding failures" },
    ];
    writeFileSync(join(stepDir, "merged_patch.json"), JSON.stringify({ edits, reasoning: "dates and rounding" }));
    writeFileSync(join(stepDir, "ranked_edits.json"), JSON.stringify({ edits }));
    writeFileSync(
      join(stepDir, "edit_apply_report.json"),
      JSON.stringify(
        edits.map((e, i) => ({
          index: i + 1,
          op: e.op,
          target: e.target ?? "",
          content_preview: e.content,
          status: step === 2 && i === 1 ? "skipped_anchor_not_found" : "applied",
          ...(step === 2 && i === 1 ? { reason: "anchor not found" } : {}),
        })),
      ),
    );
    if (!accepted) writeFileSync(join(stepDir, "candidate_skill.md"), candidateSkill);
    const stage = (k: number) => ({ calls: k, cached: 0, prompt_tokens: 500 * step * k, completion_tokens: 0 });
    records.push(
      stepRecord({
        epoch: step <= Math.ceil(n / 2) ? 1 : 2,
        step,
        learning_rate: Math.max(1, 5 - step),
        rollout_hard: 0.1 + step * 0.1,
        candidate_gate_score: candidate,
        current_score: current,
        best_score: best,
        action: accepted ? "accept_new_best" : early ? "reject_early" : "reject",
        outcome: accepted ? "accepted" : early ? "rejected_early" : "rejected",
        ...(early ? { selection_evaluated: 3, selection_total: 8 } : {}),
        edit_apply_summary: { total: 2, applied: step === 2 ? 1 : 2, skipped: step === 2 ? 1 : 0, errors: 0 },
        edits_applied: step === 2 ? 1 : 2,
        calls: { total: 10 + step, cached: 0, by_stage: { rollout: stage(6), analyst: stage(3), merge: stage(1) } },
        tokens: { prompt: 5000 * step, completion: 0 },
        cost_usd: 0.001 * step,
        wall_time_s: 0.5 * step,
      }),
    );
  }
  writeFileSync(join(dir, "history.jsonl"), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
  if (opts.finished !== false) {
    writeFileSync(join(dir, "best_skill.md"), skill);
    writeFileSync(
      join(dir, "summary.json"),
      JSON.stringify(
        summaryRecord({
          baseline: { selection: 0.2, selection_hard: 0.2, test: 0.18, hash: "h0" },
          best: { selection: best, selection_hard: best, test: best - 0.05, step: n, origin: `step_${n}`, hash: "hb" },
          final: { selection: current, selection_hard: current, test: current - 0.05, origin: `step_${n}`, hash: "hf" },
          steps: n,
          total_steps: n,
          accepted: records.filter((r) => r.outcome === "accepted").length,
          rejected: records.filter((r) => r.outcome !== "accepted").length,
          calls: {
            total: 100,
            cached: 4,
            by_stage: {
              rollout: { calls: 60, cached: 0, prompt_tokens: 5000, completion_tokens: 0, cost_usd: 0.01 },
              analyst: { calls: 40, cached: 4, prompt_tokens: 3000, completion_tokens: 0, cost_usd: 0.02 },
            },
          },
          tokens: { prompt: 8000, completion: 0, total: 8000 },
          cost_usd: 0.03,
          wall_s: 4.2,
          selection_calls_saved: 12,
        }),
      ),
    );
  }
  return records;
}

/** A complete step record (as the engine writes it) with the given fields over plain defaults. */
export function stepRecord(fields: Partial<StepRecord> & { step: number }): StepRecord {
  const score = fields.current_score ?? 0.5;
  return {
    schema: STEP_RECORD_SCHEMA,
    epoch: 1,
    step_in_epoch: fields.step - 1,
    rollout_hard: 0.5,
    rollout_soft: 0.5,
    rollout_n: 8,
    rollout_errored: 0,
    accumulation_batches: [],
    n_patches: 1,
    n_failure_patches: 1,
    n_success_patches: 0,
    action: "accept",
    outcome: "accepted",
    current_score: score,
    best_score: score,
    best_step: fields.step,
    current_origin: `step_${fields.step}`,
    best_origin: `step_${fields.step}`,
    current_hash: `h${fields.step}`,
    skill_len: 100,
    timing: {},
    errored: {},
    calls: { total: 10, cached: 0, by_stage: {} },
    tokens: { prompt: 100, completion: 10 },
    cost_usd: 0,
    wall_time_s: 0.1,
    ...fields,
  };
}

/** A complete run summary (as the engine writes it) with the given fields over plain defaults. */
export function summaryRecord(fields: Partial<Summary> = {}): Summary {
  const scores = { selection: 0.5, selection_hard: 0.5, test: 0.4 };
  return {
    schema: SUMMARY_SCHEMA,
    status: "finished",
    benchmark: "conventions",
    gate_metric: "hard",
    gate_rule: "strict",
    noise_floor: null,
    baseline: { ...scores, hash: "h0" },
    best: { ...scores, step: 1, origin: "step_0001", hash: "h1" },
    final: { ...scores, origin: "step_0001", hash: "h1" },
    steps: 1,
    total_steps: 1,
    accepted: 1,
    rejected: 0,
    rejected_early: 0,
    skipped: 0,
    undecided: 0,
    calls: { total: 10, cached: 0, by_stage: {} },
    tokens: { prompt: 100, completion: 10, total: 110 },
    cost_usd: 0.01,
    wall_s: 1,
    selection_calls_saved: 0,
    errored: {},
    rollouts_reused: 0,
    selection_items: 4,
    test_by_type: { baseline: null, best: null, final: null },
    test_soft: { baseline: null, best: null, final: null },
    ...fields,
  };
}

/**
 * Commit one step to `<dir>/state.sqlite` through the real run store, as the trainer does
 * (record, artifacts, candidate text), from another connection than the reader's.
 */
export function commitSyntheticStep(
  dir: string,
  fields: Partial<StepRecord> & { step: number },
  candidate: string,
  meta: Record<string, string | number> = {},
): void {
  const record = stepRecord(fields);
  const store = openRunStore(join(dir, "state.sqlite"));
  try {
    const hash = `c${String(record.step).padStart(15, "0")}`;
    commitCheckpoint(store, {
      kind: "step",
      step: record.step,
      epoch: record.epoch,
      state: { lastStep: record.step },
      skills: [{ hash, text: candidate, origin: `candidate_step_${record.step}` }],
      record: { ...record, candidate_hash: hash },
      artifacts: {
        merged_patch: {
          edits: [
            { op: "append", content: `rule ${record.step}` },
            { op: "append", content: "clipped rule" },
          ],
        },
        ranked_edits: { edits: [{ op: "append", content: `rule ${record.step}`, rationale: "failures on dates" }] },
        edit_apply_report: [
          { index: 1, op: "append", target: "", content_preview: `rule ${record.step}`, status: "applied_append" },
        ],
      },
      evaluations: [],
      // Held by this (live) test process, so the status rule reads "running".
      meta: {
        status: "running",
        pid: process.pid,
        started_at: 1_700_000_000_000,
        benchmark: "conventions",
        backend: "sim (offline simulator)",
        total_steps: 6,
        ...meta,
      },
    });
  } finally {
    store.close();
  }
}
