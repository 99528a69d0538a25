import type { Store } from "../store/index.ts";
import { abortableSleep, BackendError, errorMessage, log, redactText } from "../lib/index.ts";
import { batchItems, settleBatch, updateBatchStatus } from "../store/index.ts";
import type { BatchEvent } from "./batcher.ts";
import type { BatchApi, BatchInfo, BatchLineResult, RawCompletion } from "./types.ts";

interface PollDeps {
  store: Store;
  /** First wait between polls; it grows ×1.5 up to 30× (at most 5 minutes). */
  pollMs: number;
  cacheAnswer: (key: string, backend: string, endpoint: string, model: string, completion: RawCompletion) => void;
  emit: (e: BatchEvent) => void;
}

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

/**
 * Poll a provider batch with backoff until it ends (reporting each change of status or counts),
 * download its output and error files, put every answer into the call cache, then settle the batch
 * in the store (each request answered, or failed with its reason). Returns the lines by key; a
 * request the files do not mention gets the batch's end as its error.
 */
export async function pollBatch(
  id: string,
  api: BatchApi,
  signal: AbortSignal,
  o: PollDeps,
): Promise<Map<string, BatchLineResult>> {
  const maxDelay = Math.max(o.pollMs, Math.min(300_000, o.pollMs * 30));
  let delay = o.pollMs;
  let last = "";
  let info: BatchInfo;
  for (;;) {
    try {
      info = await api.retrieve(id, signal);
    } catch (err) {
      if (signal.aborted || !(err instanceof BackendError) || !err.retryable) throw err;
      log.withTag("model").debug(`batch ${id}: retrieving failed (${redactText(errorMessage(err))}); polling again`);
      await abortableSleep(delay, signal);
      continue;
    }
    updateBatchStatus(o.store, id, info.status, info.completed, info.failed);
    const line = `${info.status} ${info.completed}/${info.total}`;
    if (line !== last) {
      last = line;
      o.emit({
        type: "status",
        id,
        status: info.status,
        completed: info.completed,
        failed: info.failed,
        total: info.total,
      });
    }
    if (TERMINAL.has(info.status)) break;
    await abortableSleep(delay, signal);
    delay = Math.min(maxDelay, delay * 1.5);
  }
  const results = new Map<string, BatchLineResult>();
  const items = batchItems(o.store, id);
  const row = batchRow(o.store, id);
  for (const file of [info.outputFileId, info.errorFileId]) {
    if (!file) continue;
    for (const [k, r] of await api.results(file, () => row.model, signal)) results.set(k, r);
  }
  const outcomes = new Map<string, string | null>();
  const missing =
    info.status === "completed"
      ? "no line in the output or error file"
      : `the batch ended ${info.status}${info.errors ? ` (${info.errors})` : ""}`;
  for (const it of items) {
    const got = results.get(it.key);
    if (got && "completion" in got) {
      // Into the call cache before the batch is settled: a kill after this never pays for it again.
      o.cacheAnswer(it.key, row.backend, row.endpoint, row.model, got.completion);
      outcomes.set(it.key, null);
      continue;
    }
    const reason = got?.error ?? missing;
    results.set(it.key, { error: reason });
    outcomes.set(it.key, reason);
  }
  settleBatch(o.store, id, outcomes);
  const failed = [...outcomes.values()].filter((e) => e !== null).length;
  o.emit({
    type: "settled",
    id,
    status: info.status,
    completed: items.length - failed,
    failed,
    total: items.length,
  });
  return results;
}

function batchRow(store: Store, id: string): { backend: string; endpoint: string; model: string } {
  const row = store.db.query("SELECT backend, endpoint, model FROM call_batches WHERE id = ?").get(id) as {
    backend: string;
    endpoint: string;
    model: string;
  } | null;
  return row ?? { backend: "", endpoint: "", model: "" };
}
