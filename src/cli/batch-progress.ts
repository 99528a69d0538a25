import type { BatchEvent } from "../backends/index.ts";
import { batchText } from "../report/index.ts";
import { clearBatchWait, writeBatchWait } from "../run/index.ts";

/** Whether a batch event is printed: faults (a request given up on, no Batch API) also under --quiet. */
export function batchShown(e: BatchEvent, quiet: boolean): boolean {
  return !quiet || e.type === "fallback" || e.type === "live" || e.type === "unsupported";
}

/**
 * The CLI's view of provider batches: one line per change (submitted, provider status and counts,
 * settled, fallbacks; a plain line each, also off a TTY) and the run folder's batch_wait.json, so
 * `skillopt runs`, the dashboard and report.html show the run as waiting on that batch.
 */
export function batchProgress(
  runDir: string,
  o: { write: (s: string) => void; quiet: boolean },
): (e: BatchEvent) => void {
  const pending = new Map<string, { status: string; completed: number; total: number }>();
  const mark = () => {
    const last = [...pending.entries()].at(-1);
    if (last) writeBatchWait(runDir, { batch_id: last[0], ...last[1] });
    else clearBatchWait(runDir);
  };
  return (e) => {
    if (batchShown(e, o.quiet)) o.write(`  [batch] ${batchText(e)}\n`);
    if (e.type === "submitted" || e.type === "status") {
      pending.set(e.id, { status: e.status, completed: e.type === "status" ? e.completed : 0, total: e.total });
      mark();
    } else if (e.type === "settled") {
      pending.delete(e.id);
      mark();
    }
  };
}
