import { existsSync } from "node:fs";
import {
  boundaryRecords,
  evaluationRows,
  getRunMeta,
  openRunStore,
  skillTexts,
  stepArtifacts,
  stepRecords,
} from "../../store/index.ts";
import { editsFromArtifacts, reasoningFromArtifacts } from "./edits.ts";
import { normalizeAction } from "./normalize.ts";
import type { BoundaryRecord, StepRecord } from "../../engine/index.ts";
import {
  parseAll,
  parseBoundaryRecord,
  parseStepRecord,
  type RunStatus,
  runPaths,
  runStatus,
} from "../../run/index.ts";
import type { EditView } from "./run-view.ts";

/** Extra step data the run store holds beyond the step records: edit fates and candidate texts. */
interface StepExtras {
  edits?: EditView[];
  reasoning?: string[];
  candidate?: string | null;
}

/** What a run's store tells a report. */
export interface RunState {
  records: StepRecord[];
  boundaries: BoundaryRecord[];
  /** Records in the store that do not match their schema (left out). */
  issues: string[];
  extras: Map<number, StepExtras>;
  status: RunStatus;
  startedAt?: string;
  plannedSteps: number | null;
  /** The initial skill's selection score, known from the first checkpoint on (before summary.json). */
  baselineSelection: number | null;
  meta: Record<string, string>;
}

function startedAtOf(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const n = Number(raw);
  const d = Number.isFinite(n) && /^\d+$/.test(raw) ? new Date(n) : new Date(raw);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * Read a run's store (read-only). Returns null when there is none; throws StoreError when the
 * file is corrupt or half-created, which callers show as the run's error.
 */
export function readRunState(dir: string, opts: { light?: boolean } = {}): RunState | null {
  const path = runPaths(dir).state;
  if (!existsSync(path)) return null;
  const store = openRunStore(path, { readonly: true });
  // A light read (the runs list) still runs the open's integrity check, so a corrupt file shows.
  try {
    const meta = getRunMeta(store);
    const issues: string[] = [];
    const records = parseAll(stepRecords(store), parseStepRecord, "step record", issues);
    const extras = new Map<number, StepExtras>();
    const artifacts = opts.light ? new Map<number, Record<string, unknown>>() : stepArtifacts(store);
    const texts = opts.light ? {} : skillTexts(store);
    for (const r of opts.light ? [] : records) {
      const step = r.step;
      const a = artifacts.get(step) ?? {};
      const action = normalizeAction(r.outcome);
      const hash = r.candidate_hash;
      extras.set(step, {
        edits: editsFromArtifacts(
          { merged: a.merged_patch, ranked: a.ranked_edits, report: a.edit_apply_report },
          action,
        ),
        reasoning: reasoningFromArtifacts({ merged: a.merged_patch, ranked: a.ranked_edits }),
        candidate: hash ? (texts[hash] ?? null) : null,
      });
    }
    const total = Number(meta.total_steps);
    const status = runStatus({ meta, hasSummary: Boolean(meta.summary) || existsSync(runPaths(dir).summary) });
    const startedAt = startedAtOf(meta.started_at);
    const base = evaluationRows(store).find((e) => e.kind === "baseline" && e.split === "val");
    const baseScore = base ? Number(base.score ?? base.hard) : Number.NaN;
    return {
      baselineSelection: Number.isFinite(baseScore) ? baseScore : null,
      records,
      boundaries: opts.light ? [] : parseAll(boundaryRecords(store), parseBoundaryRecord, "boundary record", issues),
      issues,
      extras,
      status,
      ...(startedAt ? { startedAt } : {}),
      plannedSteps: Number.isFinite(total) && total > 0 ? total : null,
      meta,
    };
  } finally {
    store.close();
  }
}
