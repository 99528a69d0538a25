import { log } from "../lib/index.ts";
import { writeRunReport } from "../report/index.ts";

/**
 * A run of this many steps or more has its working set collected before its report is rendered,
 * and the report collects between its parts. Below, the report is small and rendered with no
 * forced collection. At 192 steps the one before it took 15-20 ms of CPU for 2 MB of peak; the
 * ones between its parts took the report from about 90 to 115-160 ms of CPU (each full collection
 * walks the run's heap, still live in this process) for 4-5 MB of peak (123 -> 127-128 MB). At
 * 3 072 steps, without the collection before it, the process peaked 8 MB higher.
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
    const long = steps === undefined || steps >= COLLECT_BEFORE_REPORT_STEPS;
    if (long) Bun.gc(true);
    const { path, errors } = writeRunReport(out, { collect: long });
    for (const e of errors) log.warn(`${out}/${e}`);
    return path;
  } catch (err) {
    log.warn(
      `could not write ${out}/report.html: ${err instanceof Error ? err.message : String(err)} (run \`skillopt report ${out}\` to retry)`,
    );
    return undefined;
  }
}
