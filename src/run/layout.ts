import { existsSync } from "node:fs";
import { join } from "node:path";
import { compactTimestamp } from "../lib/index.ts";

/**
 * Every file name in a run folder. `state.sqlite` is the source of truth; everything else is
 * derived from it (and rebuilt from it on resume) or written once at the end.
 */
export const RUN_FILES = {
  /** The run store: meta, checkpoints, steps, skills, evaluations, call ledger. */
  state: "state.sqlite",
  /** One step record per line, appended (derived). */
  history: "history.jsonl",
  /** The reference implementation's step records (one JSON array); read, never written. */
  upstreamHistory: "history.json",
  /** The reference implementation's flat config; read, never written. */
  upstreamConfig: "config.json",
  /** The final summary (derived; also in the store). */
  summary: "summary.json",
  /** The best skill so far (derived). */
  bestSkill: "best_skill.md",
  /** The resolved config, secrets masked. */
  config: "config.resolved.yaml",
  /** The self-contained HTML report (derived). */
  report: "report.html",
  /** `skillopt eval`'s summary and per-item results. */
  evalSummary: "eval_summary.json",
  evalResults: "results.jsonl",
  /** skills/skill_vNNNN.md: the current skill after each step (derived). */
  skills: "skills",
  /** One line per step: its artifacts and candidate skill text, appended (derived; src/run/step-log.ts). */
  stepLog: "steps.jsonl",
  /** steps/step_NNNN/: each step's artifacts and candidate, one folder of files a step (the layout before steps.jsonl; read, no longer written). */
  steps: "steps",
  /** Scratch space of benchmarks that materialize tasks. */
  work: "work",
  /** Present while the run waits on a provider batch (model.batch): which one, its status and counts. */
  batchWait: "batch_wait.json",
  /** The faults the run survived and its stops, one typed warning record a line (appended by every invocation). */
  warnings: "warnings.jsonl",
} as const;

/** The sqlite file name shared by run folders and Sleep's state folder. */
export const STATE_DB = RUN_FILES.state;

/** Files whose presence makes a folder a run folder (ours, an eval's, or the reference implementation's). */
export const RUN_MARKERS: readonly string[] = [
  RUN_FILES.state,
  RUN_FILES.history,
  RUN_FILES.upstreamHistory,
  RUN_FILES.summary,
  RUN_FILES.config,
  RUN_FILES.evalSummary,
  RUN_FILES.batchWait,
];

/** The files of one step folder (the layout before steps.jsonl; read, no longer written). */
export const STEP_FILES = {
  mergedPatch: "merged_patch.json",
  rankedEdits: "ranked_edits.json",
  editReport: "edit_apply_report.json",
  lrDecision: "lr_decision.json",
  candidate: "candidate_skill.md",
} as const;

const pad4 = (n: number) => String(n).padStart(4, "0");

/** Paths inside the run folder `dir`. */
export function runPaths(dir: string) {
  return {
    dir,
    state: join(dir, RUN_FILES.state),
    history: join(dir, RUN_FILES.history),
    upstreamHistory: join(dir, RUN_FILES.upstreamHistory),
    upstreamConfig: join(dir, RUN_FILES.upstreamConfig),
    summary: join(dir, RUN_FILES.summary),
    bestSkill: join(dir, RUN_FILES.bestSkill),
    config: join(dir, RUN_FILES.config),
    report: join(dir, RUN_FILES.report),
    evalSummary: join(dir, RUN_FILES.evalSummary),
    evalResults: join(dir, RUN_FILES.evalResults),
    skills: join(dir, RUN_FILES.skills),
    stepLog: join(dir, RUN_FILES.stepLog),
    steps: join(dir, RUN_FILES.steps),
    work: join(dir, RUN_FILES.work),
    batchWait: join(dir, RUN_FILES.batchWait),
    warnings: join(dir, RUN_FILES.warnings),
    /** skills/skill_vNNNN.md */
    skillVersion: (step: number) => join(dir, RUN_FILES.skills, `skill_v${pad4(step)}.md`),
    /** steps/step_NNNN/ */
    stepDir: (step: number) => join(dir, RUN_FILES.steps, `step_${pad4(step)}`),
  };
}

export type RunPaths = ReturnType<typeof runPaths>;

/** The step number of a `skills/` file name, or null. */
export function skillVersionOf(name: string): number | null {
  const m = /^skill_v(\d+)\.md$/.exec(name);
  return m ? Number(m[1]) : null;
}

/**
 * A fresh folder under `root` for a training started from `config`: `<name>_<timestamp>`, then
 * `-2`, `-3` … while that path exists or `taken` claims it (a launch whose folder is not made yet).
 * The name is the config's file name, or its folder's for a `default.yaml` (`searchqa/default.yaml`
 * gives `searchqa_…`).
 */
export function newRunFolder(
  root: string,
  config: string,
  taken: (path: string) => boolean = () => false,
  now = new Date(),
): string {
  const base = join(root, `${configSlug(config)}_${compactTimestamp(now)}`);
  let out = base;
  for (let i = 2; existsSync(out) || taken(out); i++) out = `${base}-${i}`;
  return out;
}

function configSlug(config: string): string {
  const parts = config
    .replace(/\.ya?ml$/, "")
    .split(/[\\/]/)
    .filter(Boolean);
  const name = parts.at(-1) === "default" ? parts.at(-2) : parts.at(-1);
  return name?.replace(/[^\w.-]+/g, "_") || "run";
}
