import { type Store, writing } from "./db.ts";

/** Our side of a provider batch: waiting on the provider, or settled (answers taken or given up). */
type BatchState = "pending" | "settled";

/** One provider batch as the call cache database keeps it. */
interface BatchRow {
  id: string;
  backend: string;
  endpoint: string;
  model: string;
  input_file_id: string;
  /** The provider's last reported status (validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled). */
  status: string;
  state: BatchState;
  total: number;
  completed: number;
  failed: number;
  /** Worst-case cost checked against the caps before submitting (null when a price was unknown). */
  worst_cost_usd: number | null;
  created_at: number;
  updated_at: number;
}

/** One request of a batch: its call-cache key (also its custom_id) and what became of it. */
interface BatchItemRow {
  batch_id: string;
  key: string;
  role: string;
  stage: string;
  /** 1 for the first submission, 2 for the one resubmission of an expired or failed entry. */
  attempt: number;
  state: "pending" | "answered" | "failed";
  error: string | null;
}

/** Commit a submitted batch and its requests in one transaction (before anything waits on it). */
export function insertBatch(
  store: Store,
  row: BatchRow,
  items: readonly Omit<BatchItemRow, "batch_id" | "state" | "error">[],
): void {
  writing(store, () =>
    store.db.transaction(() => {
      store.db
        .query(
          `INSERT INTO call_batches (id, backend, endpoint, model, input_file_id, status, state, total, completed, failed, worst_cost_usd, \
created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          row.id,
          row.backend,
          row.endpoint,
          row.model,
          row.input_file_id,
          row.status,
          row.state,
          row.total,
          row.completed,
          row.failed,
          row.worst_cost_usd,
          row.created_at,
          row.updated_at,
        );
      const ins = store.db.query(
        "INSERT INTO call_batch_items (batch_id, key, role, stage, attempt, state) VALUES (?, ?, ?, ?, ?, 'pending')",
      );
      for (const it of items) ins.run(row.id, it.key, it.role, it.stage, it.attempt);
    })(),
  );
}

/** Record the provider's latest status and counts of a batch. */
export function updateBatchStatus(
  store: Store,
  id: string,
  status: string,
  completed: number,
  failed: number,
  now = Date.now(),
): void {
  writing(store, () =>
    store.db
      .query("UPDATE call_batches SET status = ?, completed = ?, failed = ?, updated_at = ? WHERE id = ?")
      .run(status, completed, failed, now, id),
  );
}

/** Settle a batch: every item answered or failed (with its error). */
export function settleBatch(
  store: Store,
  id: string,
  outcomes: ReadonlyMap<string, string | null>,
  now = Date.now(),
): void {
  writing(store, () =>
    store.db.transaction(() => {
      const upd = store.db.query("UPDATE call_batch_items SET state = ?, error = ? WHERE batch_id = ? AND key = ?");
      for (const [key, error] of outcomes) upd.run(error === null ? "answered" : "failed", error, id, key);
      store.db.query("UPDATE call_batches SET state = 'settled', updated_at = ? WHERE id = ?").run(now, id);
    })(),
  );
}

/** The pending batch a request key is waiting in, if any (a resumed run re-attaches to it). */
export function pendingBatchOf(store: Store, key: string): { batch: BatchRow; item: BatchItemRow } | undefined {
  const row = store.db
    .query(
      `SELECT b.*, i.key AS item_key, i.role AS item_role, i.stage AS item_stage, i.attempt AS item_attempt, i.state AS item_state, i.error AS item_error
       FROM call_batch_items i JOIN call_batches b ON b.id = i.batch_id
       WHERE i.key = ? AND i.state = 'pending' AND b.state = 'pending' ORDER BY b.created_at DESC LIMIT 1`,
    )
    .get(key) as Record<string, unknown> | null;
  if (!row) return undefined;
  return {
    batch: batchRow(row),
    item: {
      batch_id: String(row.id),
      key: String(row.item_key),
      role: String(row.item_role),
      stage: String(row.item_stage),
      attempt: Number(row.item_attempt),
      state: "pending",
      error: null,
    },
  };
}

/** How many times a key was submitted in a batch and came back without an answer. */
export function failedBatchAttempts(store: Store, key: string): number {
  return (
    store.db.query("SELECT COUNT(*) AS n FROM call_batch_items WHERE key = ? AND state = 'failed'").get(key) as {
      n: number;
    }
  ).n;
}

/** Every batch, newest first (for status displays and tests). */
export function batchRows(store: Store): BatchRow[] {
  return (
    store.db.query("SELECT * FROM call_batches ORDER BY created_at DESC, rowid DESC").all() as Record<string, unknown>[]
  ).map(batchRow);
}

/** The items of one batch. */
export function batchItems(store: Store, id: string): BatchItemRow[] {
  return (
    store.db.query("SELECT * FROM call_batch_items WHERE batch_id = ? ORDER BY rowid").all(id) as Record<
      string,
      unknown
    >[]
  ).map((r) => ({
    batch_id: String(r.batch_id),
    key: String(r.key),
    role: String(r.role),
    stage: String(r.stage),
    attempt: Number(r.attempt),
    state: r.state as BatchItemRow["state"],
    error: r.error === null ? null : String(r.error),
  }));
}

function batchRow(r: Record<string, unknown>): BatchRow {
  return {
    id: String(r.id),
    backend: String(r.backend),
    endpoint: String(r.endpoint),
    model: String(r.model),
    input_file_id: String(r.input_file_id),
    status: String(r.status),
    state: r.state === "settled" ? "settled" : "pending",
    total: Number(r.total),
    completed: Number(r.completed),
    failed: Number(r.failed),
    worst_cost_usd: r.worst_cost_usd === null || r.worst_cost_usd === undefined ? null : Number(r.worst_cost_usd),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}
