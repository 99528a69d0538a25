import { join } from "node:path";
import { collectWhenGrown, removeOrphanTemps, writeFileAtomic } from "../../lib/index.ts";
import { type LoadOptions, openRunView } from "./load.ts";
import { renderReportParts, type StepDetails } from "./render.ts";
import type { RunView, StepView } from "./run-view.ts";

export { renderCompareChart } from "./run-charts.ts";
export { renderDiff, renderSkillDiff } from "./diff-html.ts";
export { esc, fmtCost, fmtInt, fmtScore, fmtSeconds } from "./escape.ts";
export { type LoadOptions, loadRunView } from "./load.ts";
export { type RunState, readRunState } from "./store-state.ts";
export { editsFromArtifacts, normalizeEdit } from "./edits.ts";
export { normalizeAction, normalizeStep, normalizeSummary } from "./normalize.ts";
export { renderReportHtml, renderReportParts, renderRunBodyParts, type StepDetails } from "./render.ts";
export type * from "./run-view.ts";
export { REPORT_CSS } from "./style.ts";

/** A run opened to be rendered in parts: its view (steps without their details), their reader, and close. */
export interface RunForParts {
  run: RunView;
  /** The details of a few steps (a page of the step list), read when their part is rendered. */
  details: StepDetails;
  /** A full collection when the process has grown by a few MB since the last one (call between parts). */
  collect(): void;
  close(): void;
}

/**
 * Open a run to render it in parts (report.html, the dashboard's run page): the step records are
 * read 64 at a time and the steps' details when their part is reached, so a long run is never
 * held whole. Each page leaves garbage behind (parsed records and artifacts, rendered diffs): it is
 * collected whenever the process has grown by 2 MB, and so is what the charts and tables leave
 * between parts (megabytes of short-lived strings at 3 072 steps) when the caller checks between
 * parts (`collect`; writeRunReport does). `close` releases the run's store.
 */
export function openRunForParts(outDir: string, opts: LoadOptions = {}): RunForParts {
  const collect = collectWhenGrown(2 * 2 ** 20);
  const open = openRunView(outDir, { ...opts, onPage: collect });
  return {
    run: open.run,
    collect,
    details: (steps: readonly StepView[]) => {
      collect();
      return open.details(steps);
    },
    close: () => open.close(),
  };
}

/** The parts of a page, with a collection check before each. */
function* collecting(parts: Iterable<string>, collect: () => void): Generator<string> {
  for (const part of parts) {
    collect();
    yield part;
  }
}

/**
 * Render `<outDir>/report.html` from the run's store and files (atomically, written in parts as
 * they are rendered, with the steps' details read a page at a time); returns its path and the
 * errors met in our run's records (each naming its file; the page shows them too). Damaged run
 * files become errors or warnings in the report; it throws only when the file cannot be written.
 */
export function writeRunReport(outDir: string, opts: LoadOptions = {}): { path: string; errors: string[] } {
  const open = openRunForParts(outDir, opts);
  try {
    const path = join(outDir, "report.html");
    // A report (or a run's last step) killed while writing left its temp file, as large as the page.
    removeOrphanTemps(outDir);
    writeFileAtomic(path, collecting(renderReportParts(open.run, { details: open.details }), open.collect));
    return { path, errors: open.run.errors };
  } finally {
    open.close();
  }
}
