import { log } from "../lib/index.ts";
import { writeRunReport } from "../report/index.ts";

/**
 * A run of this many steps or more has its working set collected before its report is rendered
 * (below, the report is small: at 192 steps the collection took 15-20 ms of CPU and, left out,
 * the process peaked 2 MB higher; at 3 072 steps, left out, it peaked 8 MB higher).
 */
export const COLLECT_BEFORE_REPORT_STEPS = 512;

/**
 * Write `<out>/report.html` after a run of `steps` steps (unknown: collect first); a failure (or a
 * damaged record) is a warning, never a failed run.
 */
export function writeReportAfterRun(out: string, steps?: number): string | undefined {
  try {
    // The run's working set is garbage now: collect it before the report is read and written, so
    // the report's peak does not stack on the run's.
    if (steps === undefined || steps >= COLLECT_BEFORE_REPORT_STEPS) Bun.gc(true);
    const { path, errors } = writeRunReport(out);
    for (const e of errors) log.warn(`${out}/${e}`);
    return path;
  } catch (err) {
    log.warn(
      `could not write ${out}/report.html: ${err instanceof Error ? err.message : String(err)} (run \`skillopt report ${out}\` to retry)`,
    );
    return undefined;
  }
}
