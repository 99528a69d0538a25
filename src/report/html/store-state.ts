import { existsSync } from "node:fs";
import type { Store } from "../../store/index.ts";
import {
  boundaryRecords,
  evaluationRows,
  getRunMeta,
  openRunStore,
  skillTexts,
  stepArtifacts,
  stepRecordPage,
} from "../../store/index.ts";
import { editsFromArtifacts, reasoningFromArtifacts } from "./edits.ts";
import {
  parseAll,
  parseBoundaryRecord,
  parseStepRecord,
  RUN_FILES,
  type RunStatus,
  runPaths,
  runStatus,
} from "../../run/index.ts";
import { boundaryViewOf, stepViewOf } from "./typed.ts";
import type { BoundaryView, EditView, StepView } from "./run-view.ts";

/** Step records are read this many at a time: a long run's store is never held whole. */
const PAGE = 64;

/** Extra step data the run store holds beyond the step records: edit fates and candidate texts. */
export interface StepExtras {
  edits: EditView[];
  reasoning: string[];
  candidate: string | null;
}

/** What a run's store tells a report; open until closed. */
export interface RunState {
  /** Every step record, parsed by its schema, as a view without the per-step details. */
  steps: StepView[];
  /** Candidate-skill hash of each step (to fetch its text with the step's details). */
  candidateHashes: Map<number, string>;
  boundaries: BoundaryView[];
  /** Records in the store that do not match their schema (left out), each naming the store file. */
  issues: string[];
  status: RunStatus;
  startedAt?: string;
  plannedSteps: number | null;
  /** The initial skill's selection score, known from the first checkpoint on (before summary.json). */
  baselineSelection: number | null;
  meta: Record<string, string>;
  /** Edit fates, optimizer reasoning and candidate texts of these steps, read from the store. */
  extras(steps: readonly StepView[]): Map<number, StepExtras>;
  close(): void;
}

function startedAtOf(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const n = Number(raw);
  const d = Number.isFinite(n) && /^\d+$/.test(raw) ? new Date(n) : new Date(raw);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** Every step record of the store, a page at a time, as views; a record that does not match its schema is an issue. */
function readSteps(
  store: Store,
  issues: string[],
  onPage: () => void,
): { steps: StepView[]; hashes: Map<number, string> } {
  const steps: StepView[] = [];
  const hashes = new Map<number, string>();
  let after = Number.NEGATIVE_INFINITY;
  for (;;) {
    const page = stepRecordPage(store, after, PAGE);
    for (const row of page) {
      const r = parseStepRecord(row.record, `${RUN_FILES.state}: step ${row.step}'s record`);
      if (!r.ok) {
        issues.push(r.issue);
        continue;
      }
      steps.push(stepViewOf(r.value));
      if (r.value.candidate_hash) hashes.set(r.value.step, r.value.candidate_hash);
    }
    onPage();
    if (page.length < PAGE) return { steps, hashes };
    after = page[page.length - 1]!.step;
  }
}

/**
 * Open a run's store (read-only) and read its step records, boundaries and meta. Returns null
 * when there is none; throws StoreError when the file is corrupt or half-created, which callers
 * show as the run's error. The per-step details are read later, a few steps at a time (`extras`).
 */
export function readRunState(dir: string, opts: { light?: boolean; onPage?: () => void } = {}): RunState | null {
  const path = runPaths(dir).state;
  if (!existsSync(path)) return null;
  const store = openRunStore(path, { readonly: true });
  // A light read (the runs list) still runs the open's integrity check, so a corrupt file shows.
  try {
    const meta = getRunMeta(store);
    const issues: string[] = [];
    const { steps, hashes } = readSteps(store, issues, opts.onPage ?? (() => {}));
    const total = Number(meta.total_steps);
    const status = runStatus({ meta, hasSummary: Boolean(meta.summary) || existsSync(runPaths(dir).summary) });
    const startedAt = startedAtOf(meta.started_at);
    const base = evaluationRows(store).find((e) => e.kind === "baseline" && e.split === "val");
    const baseScore = base ? Number(base.score ?? base.hard) : Number.NaN;
    const boundaries = opts.light
      ? []
      : parseAll(boundaryRecords(store), parseBoundaryRecord, `${RUN_FILES.state}: boundary record`, issues).map(
          boundaryViewOf,
        );
    return {
      baselineSelection: Number.isFinite(baseScore) ? baseScore : null,
      steps,
      candidateHashes: hashes,
      boundaries,
      issues,
      status,
      ...(startedAt ? { startedAt } : {}),
      plannedSteps: Number.isFinite(total) && total > 0 ? total : null,
      meta,
      extras(page) {
        const artifacts = stepArtifacts(
          store,
          page.map((s) => s.step),
        );
        const wanted = page.flatMap((s) => hashes.get(s.step) ?? []);
        const texts = wanted.length > 0 ? skillTexts(store, wanted) : {};
        const out = new Map<number, StepExtras>();
        for (const s of page) {
          const a = artifacts.get(s.step) ?? {};
          const hash = hashes.get(s.step);
          out.set(s.step, {
            edits: editsFromArtifacts(
              { merged: a.merged_patch, ranked: a.ranked_edits, report: a.edit_apply_report },
              s.action,
            ),
            reasoning: reasoningFromArtifacts({ merged: a.merged_patch, ranked: a.ranked_edits }),
            candidate: hash ? (texts[hash] ?? null) : null,
          });
        }
        return out;
      },
      close: () => store.close(),
    };
  } catch (err) {
    store.close();
    throw err;
  }
}
