import { join } from "node:path";
import { collectWhenGrown, writeFileAtomic } from "../../lib/index.ts";
import { type LoadOptions, openRunView } from "./load.ts";
import { renderReportParts } from "./render.ts";
import type { StepView } from "./run-view.ts";

export { renderCompareChart, renderCostChart, renderScoreChart } from "./run-charts.ts";
export { renderDiff } from "./diff-html.ts";
export { esc, fmtCost, fmtInt, fmtScore, fmtSeconds } from "./escape.ts";
export { type LoadOptions, loadRunView } from "./load.ts";
export { type RunState, readRunState } from "./store-state.ts";
export { editsFromArtifacts, normalizeEdit } from "./edits.ts";
export { normalizeAction, normalizeStep, normalizeSummary } from "./normalize.ts";
export { renderReportHtml, renderRunBody } from "./render.ts";
export type * from "./run-view.ts";
export { REPORT_CSS } from "./style.ts";

/**
 * Render `<outDir>/report.html` from the run's store and files (atomically, written in parts as
 * they are rendered, with the steps' details read a page at a time); returns its path and the
 * errors met in our run's records (each naming its file; the page shows them too). Damaged run
 * files become errors or warnings in the report; it throws only when the file cannot be written.
 */
export function writeRunReport(outDir: string, opts: LoadOptions = {}): { path: string; errors: string[] } {
  // Each page of steps leaves garbage behind (parsed records and artifacts, rendered diffs): collected as it grows.
  const collect = collectWhenGrown(4 * 2 ** 20);
  const open = openRunView(outDir, { ...opts, onPage: collect });
  try {
    const path = join(outDir, "report.html");
    const details = (steps: readonly StepView[]) => {
      collect();
      return open.details(steps);
    };
    writeFileAtomic(path, renderReportParts(open.run, { details }));
    return { path, errors: open.run.errors };
  } finally {
    open.close();
  }
}
