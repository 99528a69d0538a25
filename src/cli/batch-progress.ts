import type { BatchEvent } from "../backends/index.ts";
import { clearBatchWait, writeBatchWait } from "../run/index.ts";

/**
 * The CLI's view of provider batches: one line per change (submitted, provider status and counts,
 * settled, fallbacks; a plain line each, also off a TTY) and the run folder's batch_wait.json, so
 * `skillopt runs`, the dashboard and report.html show the run as waiting on that batch.
 */
export function batchProgress(
  runDir: string,
  o: { write: (s: string) => void; quiet: boolean },
): (e: BatchEvent) => void {
  const pending = new Map<string, BatchEvent>();
  const mark = () => {
    const last = [...pending.values()].at(-1);
    if (last)
      writeBatchWait(runDir, { batch_id: last.id, status: last.status, completed: last.completed, total: last.total });
    else clearBatchWait(runDir);
  };
  return (e) => {
    if (!o.quiet || e.type === "fallback" || e.type === "unsupported") o.write(`  [batch] ${e.text}\n`);
    if (e.type === "submitted" || e.type === "status") {
      pending.set(e.id, e);
      mark();
    } else if (e.type === "settled") {
      pending.delete(e.id);
      mark();
    }
  };
}
