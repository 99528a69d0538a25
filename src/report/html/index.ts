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
  close(): void;
}

/**
 * Open a run to render it in parts (report.html, the dashboard's run page): the step records are
 * read 64 at a time and the steps' details when their part is reached, so a long run is never
 * held whole. Each page leaves garbage behind (parsed records and artifacts, rendered diffs): it is
 * collected whenever the process has grown by 4 MB, or up to 16 MB while the collections find
 * little: at 192 steps the report's first collection gave back 2 of its 4 MB (the rest was the
 * rendering code being compiled) and a second one as little, 15-19 ms each; at 3 072 steps the
 * collections give back what the pages left. `close` releases the run's store.
 */
export function openRunForParts(outDir: string, opts: LoadOptions & { collect?: boolean } = {}): RunForParts {
  const { collect: collecting = true, ...load } = opts;
  const collect = collecting ? collectWhenGrown(4 * 2 ** 20, { upTo: 16 * 2 ** 20 }) : () => {};
  const open = openRunView(outDir, { ...load, onPage: collect });
  return {
    run: open.run,
    details: (steps: readonly StepView[]) => {
      collect();
      return open.details(steps);
    },
    close: () => open.close(),
  };
}

/**
 * A long page's parts, with a collection between them whenever the process has grown by 2 MB
 * once the first MiB is written. The charts and tables of a long run leave several times their
 * own size in short-lived strings, which the engine lets pile up on top of the run's heap: at
 * 3 072 steps (an 18 MB page) the run's peak RSS was 15-18 MB higher without this. A short
 * page (1.2 MB at 192 steps) leaves too little to be worth the collections.
 */
function* collectingLong(parts: Iterable<string>, collecting: boolean): Generator<string> {
  if (!collecting) {
    yield* parts;
    return;
  }
  const collect = collectWhenGrown(2 * 2 ** 20);
  let written = 0;
  let checked = 0;
  for (const part of parts) {
    // The size of the process is read every 64 KiB of the page, not at each of its thousands of rows.
    if (written >= 2 ** 20 && written - checked >= 65_536) {
      checked = written;
      collect();
    }
    written += part.length;
    yield part;
  }
}

/**
 * Render `<outDir>/report.html` from the run's store and files (atomically, written in parts as
 * they are rendered, with the steps' details read a page at a time); returns its path and the
 * errors met in our run's records (each naming its file; the page shows them too). Damaged run
 * files become errors or warnings in the report; it throws only when the file cannot be written.
 * `collect: false` leaves out the collections between its parts (writeReportAfterRun: a short run's
 * report, in the process that ran it).
 */
export function writeRunReport(
  outDir: string,
  opts: LoadOptions & { collect?: boolean } = {},
): { path: string; errors: string[] } {
  const open = openRunForParts(outDir, opts);
  try {
    const path = join(outDir, "report.html");
    // A report (or a run's last step) killed while writing left its temp file, as large as the page.
    removeOrphanTemps(outDir);
    writeFileAtomic(
      path,
      collectingLong(renderReportParts(open.run, { details: open.details }), opts.collect !== false),
    );
    return { path, errors: open.run.errors };
  } finally {
    open.close();
  }
}
