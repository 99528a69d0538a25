import { join } from "node:path";
import { log, maskCredentialsDeep, redactText, redactSecrets, sha256, writeJsonAtomic } from "../lib/index.ts";
import type { NightLedger } from "./budget.ts";
import type { SleepConfig } from "./config.ts";
import type { ConsolidateOptions } from "./consolidate.ts";
import { finite, type SleepReport } from "./report.ts";
import type { Proposal, SkillProposal } from "./stage.ts";
import type { SleepStore } from "./store-port.ts";
import type { ConsolidateResult, TaskRecord } from "./types.ts";

/** What a night produced, for the `run` output (spec §2.8). */
export interface NightOutcome {
  night: number;
  report: SleepReport;
  result: ConsolidateResult | undefined;
  stagingDir: string;
  proposals: Proposal[];
  skillProposals: SkillProposal[];
  nSessions: number;
  tasks: TaskRecord[];
  evidencePath: string;
  modelChanged: boolean;
}

/** Consolidation settings of a config. */
export function consolidateOptions(
  cfg: SleepConfig,
  memory: string,
  rejectedBefore: readonly string[],
): Omit<ConsolidateOptions, "tasks" | "skill"> {
  return {
    memory,
    editBudget: cfg.edit_budget,
    metric: { metric: cfg.gate_metric, mixedWeight: cfg.gate_mixed_weight },
    noRegression: cfg.gate_no_regression,
    gateOn: !["off", "none", "false", "greedy"].includes(cfg.gate_mode),
    granularity: cfg.gate_granularity,
    margin: cfg.gate_margin,
    rule: cfg.gate_rule,
    confidence: cfg.gate_confidence,
    evolveSkill: cfg.evolve_skill,
    evolveMemory: cfg.evolve_memory,
    minVal: cfg.min_val_tasks,
    preferences: cfg.preferences,
    rejectedBefore,
    rolloutsK: cfg.dream_rollouts,
  };
}

/** Record tonight's tasks, edit verdicts, gate trials and ledger. */
export function persistNight(
  store: SleepStore,
  night: number,
  tasks: readonly TaskRecord[],
  r: ConsolidateResult,
  ledger: NightLedger,
): void {
  store.archiveTasks(night, tasks);
  store.recordEdits(night, [
    ...r.applied.map((edit) => ({ edit, status: "accepted" as const, reason: r.gateAction })),
    // Only gate verdicts are remembered as negative feedback; unverified nights may be re-proposed.
    ...r.rejected.map((edit) => ({
      edit,
      status:
        r.gateAction === "reject_unverified" || r.gateAction === "budget_exhausted"
          ? ("unmatched" as const)
          : ("rejected" as const),
      reason: r.gateAction === "reject_unverified" ? "unverified" : "gate",
    })),
    ...r.unmatched.map((edit) => ({ edit, status: "unmatched" as const, reason: "changed nothing" })),
  ]);
  store.recordGateTrials(night, r.gateTrials);
  store.recordLedger(night, ledger.entries());
}

/** diagnostics.json (spec §7.6), best effort. */
export function writeDiagnostics(dir: string, cfg: SleepConfig, out: NightOutcome): void {
  const r = out.result;
  try {
    writeJsonAtomic(
      join(dir, "diagnostics.json"),
      finite(
        maskCredentialsDeep(
          redactSecrets({
            night: out.night,
            backend: cfg.backend,
            opencode_tool_replay: cfg.opencode_tool_replay,
            gate_mode: cfg.gate_mode,
            gate_no_regression: cfg.gate_no_regression,
            n_tasks: out.tasks.length,
            baseline_score: out.report.baseline_score,
            candidate_score: out.report.candidate_score,
            accepted: out.report.accepted,
            gate_action: out.report.gate_action,
            holdout_leaked: out.report.holdout_leaked,
            n_applied_edits: out.report.edits.length,
            n_rejected_edits: out.report.rejected_edits.length,
            n_unmatched_edits: out.report.unmatched_edits.length,
            call_error: redactText(r?.callError ?? ""),
            reflect_raw_head: redactText(r?.reflectRaw ?? "").slice(0, 1200),
            holdout_detail: r?.holdoutDetail ?? [],
            gate_trials: out.report.gate_trials,
            proposals: out.proposals.map((p) => ({
              which: p.which,
              live_path: p.baseline.path,
              sha256: sha256(p.text),
            })),
          }),
        ),
      ),
    );
  } catch (err) {
    log.debug(`sleep: cannot write diagnostics.json: ${String(err)}`);
  }
}

/** The result of a night with nothing to consolidate. */
export function emptyResult(skill: string, memory: string, reason: string, notes: string[]): ConsolidateResult {
  return {
    newSkill: skill,
    newMemory: memory,
    accepted: false,
    gateAction: "reject",
    baseline: 0,
    candidate: 0,
    applied: [],
    rejected: [],
    unmatched: [],
    gateTrials: [],
    holdoutDetail: [],
    holdoutLeaked: false,
    reflectRaw: "",
    callError: "",
    notes: [...notes, reason],
    noEditsReason: reason,
    nVal: 0,
    nTrain: 0,
  };
}
