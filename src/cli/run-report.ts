import { log } from "../lib/index.ts";
import { writeRunReport } from "../report/index.ts";

/** Write `<out>/report.html` after a run; a failure (or a damaged record) is a warning, never a failed run. */
export function writeReportAfterRun(out: string): string | undefined {
  try {
    // The run's working set is garbage now: collect it before the report is read and written, so
    // the report's peak does not stack on the run's.
    Bun.gc(true);
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
