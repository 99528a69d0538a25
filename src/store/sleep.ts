import { hostname } from "node:os";
import { sha256 } from "../lib/index.ts";
import { type Migrations, openStore, type Store } from "./db.ts";

/*
 * The shapes of Sleep's tables are declared here, beside the tables, and sleep/ imports them
 * (sleep/store-port.ts): store/ sits below backends/ and sleep/, so it names nothing of theirs. A
 * task or a gate trial is kept whole as JSON; the store reads only the columns it indexes.
 */

/** One row of the nights table. */
export interface NightRow {
  night: number;
  project: string;
  /** "interrupted": its process was killed after it staged a proposal (found so by a later night). */
  status: "running" | "completed" | "no_tasks" | "failed" | "rejected" | "interrupted";
  started_ms: number;
  ended_ms: number | null;
  staging_dir: string;
  accepted: boolean;
  gate_action: string;
  baseline: number | null;
  candidate: number | null;
  n_tasks: number;
  n_sessions: number;
  model_key: string;
}

/** Why an edit was recorded. */
type EditStatus = "accepted" | "rejected" | "unmatched" | "human_rejected";

/** An adoption recorded for status, rollback and history. */
interface AdoptionRow {
  id: number;
  night_dir: string;
  mode: "legacy" | "skills";
  adopted_ms: number;
  receipts_json: string;
  rolled_back_ms: number | null;
}

/** One row of the per-night ledger. */
export interface LedgerEntry {
  stage: string;
  calls: number;
  tokens: number;
  cost_usd: number;
  cached: number;
}

/** What the store reads of a task it archives (the task itself is kept whole, as JSON). */
interface ArchivedTask {
  id: string;
  project: string;
  split: string;
  origin: string;
}

/** The columns of a recorded edit (Sleep's EditRecord). */
interface StoredEdit {
  target: string;
  op: string;
  content: string;
  anchor: string;
  rationale: string;
}

/** What the store reads of a gate trial (the trial itself is kept whole, as JSON). */
interface StoredTrial {
  target: string;
  baseline_score: number;
  candidate_score: number;
  accepted: boolean;
}

/**
 * Sleep's persistent state over the sqlite file in `<state_dir>`; `Task` is the archived task's
 * type (Sleep's TaskRecord). `beginNight` allocates the night number inside a write transaction,
 * so two concurrent runs never share one (§12.1 #27). Every method commits before it returns.
 */
export interface SleepStore<Task extends ArchivedTask = ArchivedTask> {
  /** Number the next night would get, without allocating it (dry-run), once the nights `forgotten` are. */
  peekNight(forgotten?: readonly number[]): number;
  /** Allocate the next night, run by this process. */
  beginNight(project: string, startedMs: number, modelKey: string): number;
  /** Record the folder a running night is about to create (before it exists, so a kill never leaves it unknown). */
  setNightDir(night: number, dir: string): void;
  /**
   * Nights still 'running' whose process is gone (`alive` says no): killed mid-night. Nights of
   * this process, of another host (a state directory shared between machines), and of versions
   * that did not record the process are never returned. A folder another night also names is not
   * returned as theirs (staging_dir "").
   */
  deadNights(alive: (pid: number) => boolean): NightRow[];
  /** Mark a dead night that had staged its proposal (it stays in the history, its folder adoptable). */
  interruptNight(night: number): void;
  /** Forget a night that never ran to the end (a handoff round waiting for answers, a killed night). */
  abandonNight(night: number): void;
  finishNight(row: Omit<NightRow, "started_ms" | "model_key" | "project">): void;
  getNight(night: number): NightRow | undefined;
  nightByDir(dir: string): NightRow | undefined;
  history(limit: number): NightRow[];
  /** Nights that ended (completed, nothing to do, rejected, interrupted), and those that failed (nothing staged). */
  nightsCount(): { finished: number; failed: number };
  /** Start time (UTC ms) of the project's last completed harvest; undefined before the first. */
  lastHarvestMs(project: string): number | undefined;
  setLastHarvestMs(project: string, ms: number): void;
  lastModelKey(): string | undefined;
  setLastModelKey(key: string): void;
  archiveTasks(night: number, tasks: readonly Task[]): void;
  /** Archived real tasks of a project, newest first. */
  archivedTasks(project: string, limit: number): Task[];
  recordEdits(night: number, edits: ReadonlyArray<{ edit: StoredEdit; status: EditStatus; reason: string }>): void;
  /** Edit texts rejected by the gate or by a human, for the optimizer to avoid (newest first). */
  rejectedEditTexts(project: string, limit: number): string[];
  recordGateTrials(night: number, trials: readonly StoredTrial[]): void;
  recordLedger(night: number, entries: readonly LedgerEntry[]): void;
  ledger(night: number): LedgerEntry[];
  recordAdoption(nightDir: string, mode: "legacy" | "skills", receiptsJson: string, atMs: number): number;
  adoptions(nightDir?: string): AdoptionRow[];
  markRolledBack(id: number, atMs: number): void;
}

/** Sleep's tables in `<state_dir>`'s database (namespace "sleep"; harvest keeps its own list). */
const SLEEP_MIGRATIONS: Migrations = [
  `CREATE TABLE sleep_nights (
     night INTEGER PRIMARY KEY,
     project TEXT NOT NULL,
     status TEXT NOT NULL,
     started_ms INTEGER NOT NULL,
     ended_ms INTEGER,
     staging_dir TEXT NOT NULL DEFAULT '',
     accepted INTEGER NOT NULL DEFAULT 0,
     gate_action TEXT NOT NULL DEFAULT '',
     baseline REAL,
     candidate REAL,
     n_tasks INTEGER NOT NULL DEFAULT 0,
     n_sessions INTEGER NOT NULL DEFAULT 0,
     model_key TEXT NOT NULL DEFAULT ''
   );
   CREATE INDEX sleep_nights_project ON sleep_nights(project, night);
   CREATE TABLE sleep_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE sleep_last_harvest (project TEXT PRIMARY KEY, started_ms INTEGER NOT NULL);
   CREATE TABLE sleep_tasks (
     night INTEGER NOT NULL REFERENCES sleep_nights(night),
     task_id TEXT NOT NULL,
     project TEXT NOT NULL,
     split TEXT NOT NULL,
     json TEXT NOT NULL,
     PRIMARY KEY (night, task_id)
   );
   CREATE INDEX sleep_tasks_project ON sleep_tasks(project, night);
   CREATE TABLE sleep_edits (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     night INTEGER NOT NULL REFERENCES sleep_nights(night),
     target TEXT NOT NULL,
     op TEXT NOT NULL,
     content TEXT NOT NULL,
     anchor TEXT NOT NULL,
     rationale TEXT NOT NULL,
     content_hash TEXT NOT NULL,
     status TEXT NOT NULL,
     reason TEXT NOT NULL
   );
   CREATE INDEX sleep_edits_hash ON sleep_edits(content_hash);
   CREATE TABLE sleep_rejected_edits (
     project TEXT NOT NULL,
     content_hash TEXT NOT NULL,
     content TEXT NOT NULL,
     reason TEXT NOT NULL,
     night INTEGER NOT NULL,
     times INTEGER NOT NULL DEFAULT 1,
     PRIMARY KEY (project, content_hash)
   );
   CREATE TABLE sleep_gate_trials (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     night INTEGER NOT NULL REFERENCES sleep_nights(night),
     target TEXT NOT NULL,
     baseline_score REAL,
     candidate_score REAL,
     accepted INTEGER NOT NULL,
     json TEXT NOT NULL
   );
   CREATE TABLE sleep_ledger (
     night INTEGER NOT NULL REFERENCES sleep_nights(night),
     stage TEXT NOT NULL,
     calls INTEGER NOT NULL,
     tokens INTEGER NOT NULL,
     cost_usd REAL NOT NULL,
     cached INTEGER NOT NULL,
     PRIMARY KEY (night, stage)
   );
   CREATE TABLE sleep_adoptions (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     night_dir TEXT NOT NULL,
     mode TEXT NOT NULL,
     adopted_ms INTEGER NOT NULL,
     receipts_json TEXT NOT NULL,
     rolled_back_ms INTEGER
   );`,
  // The process running a night (its pid on its host), so a night left 'running' by a killed process
  // can be told from a live one; a state directory shared between machines sees the others' as alive.
  "ALTER TABLE sleep_nights ADD COLUMN owner_pid INTEGER; ALTER TABLE sleep_nights ADD COLUMN owner_host TEXT",
];

const norm = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

interface RawNight extends Omit<NightRow, "accepted"> {
  accepted: number;
  owner_pid: number | null;
  owner_host: string | null;
}

const toNight = (r: RawNight | null): NightRow | undefined => {
  if (!r) return undefined;
  const { owner_pid: _pid, owner_host: _host, ...row } = r;
  return { ...row, accepted: r.accepted === 1 };
};

type Db = Store["db"];
/** Run `fn` in an immediate transaction. */
type Tx = <T>(fn: () => T) => T;

/** The nights: numbering, liveness, outcome and history. */
function nightRows(
  db: Db,
  tx: Tx,
): Pick<
  SleepStore,
  | "peekNight"
  | "beginNight"
  | "setNightDir"
  | "deadNights"
  | "interruptNight"
  | "abandonNight"
  | "finishNight"
  | "getNight"
  | "nightByDir"
  | "history"
  | "nightsCount"
> {
  return {
    peekNight: (forgotten = []) =>
      Math.max(
        0,
        ...(
          db.query("SELECT night FROM sleep_nights ORDER BY night DESC LIMIT ?").all(forgotten.length + 1) as {
            night: number;
          }[]
        )
          .map((r) => r.night)
          .filter((n) => !forgotten.includes(n)),
      ) + 1,
    beginNight: (project, startedMs, modelKey) =>
      tx(() =>
        Number(
          db
            .query(
              "INSERT INTO sleep_nights (project, status, started_ms, model_key, owner_pid, owner_host) VALUES (?, 'running', ?, ?, ?, ?)",
            )
            .run(project, startedMs, modelKey, process.pid, hostname()).lastInsertRowid,
        ),
      ),
    setNightDir: (night, dir) => {
      db.query("UPDATE sleep_nights SET staging_dir = ? WHERE night = ?").run(dir, night);
    },
    deadNights: (alive) =>
      (
        db
          .query(
            // A folder another night also names is not the dead night's (it claimed a name taken meanwhile).
            `SELECT n.*, EXISTS (SELECT 1 FROM sleep_nights o WHERE o.staging_dir = n.staging_dir AND o.night != n.night)
             AS shared FROM sleep_nights n WHERE n.status = 'running' AND n.owner_pid IS NOT NULL AND n.owner_host = ?
           ORDER BY n.night`,
          )
          .all(hostname()) as (RawNight & { shared: number })[]
      )
        .filter((r) => r.owner_pid !== process.pid && !alive(r.owner_pid!))
        .map(({ shared, ...r }) => toNight({ ...r, staging_dir: shared ? "" : r.staging_dir })!),
    interruptNight: (night) => {
      db.query("UPDATE sleep_nights SET status = 'interrupted' WHERE night = ? AND status = 'running'").run(night);
    },
    abandonNight: (night) =>
      tx(() => {
        for (const t of ["sleep_tasks", "sleep_edits", "sleep_gate_trials", "sleep_ledger"])
          db.query(`DELETE FROM ${t} WHERE night = ?`).run(night);
        db.query("DELETE FROM sleep_nights WHERE night = ?").run(night);
      }),
    finishNight: (r) => {
      db.query(
        "UPDATE sleep_nights SET status = ?, ended_ms = ?, staging_dir = ?, accepted = ?, gate_action = ?, baseline = ?, candidate = ?, n_tasks = " +
          "?, n_sessions = ? WHERE night = ?",
      ).run(
        r.status,
        r.ended_ms,
        r.staging_dir,
        r.accepted ? 1 : 0,
        r.gate_action,
        r.baseline,
        r.candidate,
        r.n_tasks,
        r.n_sessions,
        r.night,
      );
    },
    getNight: (night) => toNight(db.query("SELECT * FROM sleep_nights WHERE night = ?").get(night) as RawNight | null),
    nightByDir: (dir) =>
      toNight(
        db
          .query("SELECT * FROM sleep_nights WHERE staging_dir = ? ORDER BY night DESC LIMIT 1")
          .get(dir) as RawNight | null,
      ),
    history: (limit) =>
      (
        db
          .query("SELECT * FROM sleep_nights WHERE status != 'running' ORDER BY night DESC LIMIT ?")
          .all(limit) as RawNight[]
      )
        .map((r) => toNight(r)!)
        .reverse(),
    nightsCount: () => {
      const row = db
        .query(
          "SELECT COUNT(CASE WHEN status NOT IN ('running', 'failed') THEN 1 END) AS finished, " +
            "COUNT(CASE WHEN status = 'failed' THEN 1 END) AS failed FROM sleep_nights",
        )
        .get() as { finished: number; failed: number };
      return { finished: row.finished, failed: row.failed };
    },
  };
}

/** What the next night starts from: the last harvest, the last model key. */
function stateRows(
  db: Db,
): Pick<SleepStore, "lastHarvestMs" | "setLastHarvestMs" | "lastModelKey" | "setLastModelKey"> {
  const meta = (key: string) =>
    (db.query("SELECT value FROM sleep_meta WHERE key = ?").get(key) as { value: string } | null)?.value;
  const setMeta = (key: string, value: string) =>
    db
      .query("INSERT INTO sleep_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value")
      .run(key, value);
  return {
    lastHarvestMs: (project) =>
      (
        db.query("SELECT started_ms FROM sleep_last_harvest WHERE project = ?").get(project) as {
          started_ms: number;
        } | null
      )?.started_ms,
    setLastHarvestMs: (project, ms) => {
      db.query(
        "INSERT INTO sleep_last_harvest (project, started_ms) VALUES (?, ?) ON CONFLICT(project) DO UPDATE SET started_ms = excluded.started_ms",
      ).run(project, ms);
    },
    lastModelKey: () => meta("last_model_key"),
    setLastModelKey: (key) => {
      setMeta("last_model_key", key);
    },
  };
}

/** What a night recorded: its tasks, edit verdicts, gate trials and ledger. */
function recordRows<Task extends ArchivedTask>(
  db: Db,
  tx: Tx,
): Pick<
  SleepStore<Task>,
  | "archiveTasks"
  | "archivedTasks"
  | "recordEdits"
  | "rejectedEditTexts"
  | "recordGateTrials"
  | "recordLedger"
  | "ledger"
> {
  return {
    archiveTasks: (night, tasks) =>
      tx(() => {
        const q = db.query(
          "INSERT OR REPLACE INTO sleep_tasks (night, task_id, project, split, json) VALUES (?, ?, ?, ?, ?)",
        );
        for (const t of tasks) if (t.origin === "real") q.run(night, t.id, t.project, t.split, JSON.stringify(t));
      }),
    archivedTasks: (project, limit) =>
      (
        db
          .query("SELECT json FROM sleep_tasks WHERE project = ? ORDER BY night DESC LIMIT ?")
          .all(project, limit) as Array<{ json: string }>
      ).map((r) => JSON.parse(r.json) as Task),
    recordEdits: (night, edits) =>
      tx(() => {
        const project =
          (db.query("SELECT project FROM sleep_nights WHERE night = ?").get(night) as { project: string } | null)
            ?.project ?? "";
        const ins = db.query(
          "INSERT INTO sleep_edits (night, target, op, content, anchor, rationale, content_hash, status, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        );
        const rej = db.query(
          "INSERT INTO sleep_rejected_edits (project, content_hash, content, reason, night) VALUES (?, ?, ?, ?, ?) ON CONFLICT(project, " +
            "content_hash) DO UPDATE SET times = times + 1, night = excluded.night, reason = excluded.reason",
        );
        for (const { edit: e, status, reason } of edits) {
          const h = sha256(norm(e.content));
          ins.run(night, e.target, e.op, e.content, e.anchor, e.rationale, h, status, reason);
          if (status === "rejected" || status === "human_rejected") rej.run(project, h, e.content, reason, night);
        }
      }),
    rejectedEditTexts: (project, limit) =>
      (
        db
          .query("SELECT content FROM sleep_rejected_edits WHERE project = ? ORDER BY night DESC, times DESC LIMIT ?")
          .all(project, limit) as Array<{
          content: string;
        }>
      ).map((r) => r.content),
    recordGateTrials: (night, trials) =>
      tx(() => {
        const q = db.query(
          "INSERT INTO sleep_gate_trials (night, target, baseline_score, candidate_score, accepted, json) VALUES (?, ?, ?, ?, ?, ?)",
        );
        for (const t of trials)
          q.run(night, t.target, t.baseline_score, t.candidate_score, t.accepted ? 1 : 0, JSON.stringify(t));
      }),
    recordLedger: (night, entries) =>
      tx(() => {
        const q = db.query(
          "INSERT OR REPLACE INTO sleep_ledger (night, stage, calls, tokens, cost_usd, cached) VALUES (?, ?, ?, ?, ?, ?)",
        );
        for (const e of entries) q.run(night, e.stage, e.calls, e.tokens, e.cost_usd, e.cached);
      }),
    ledger: (night) =>
      db
        .query("SELECT stage, calls, tokens, cost_usd, cached FROM sleep_ledger WHERE night = ? ORDER BY stage")
        .all(night) as LedgerEntry[],
  };
}

/** Adoptions and their rollbacks. */
function adoptionRows(db: Db): Pick<SleepStore, "recordAdoption" | "adoptions" | "markRolledBack"> {
  return {
    recordAdoption: (nightDir, mode, receiptsJson, atMs) =>
      Number(
        db
          .query("INSERT INTO sleep_adoptions (night_dir, mode, adopted_ms, receipts_json) VALUES (?, ?, ?, ?)")
          .run(nightDir, mode, atMs, receiptsJson).lastInsertRowid,
      ),
    adoptions: (nightDir) =>
      (nightDir
        ? db.query("SELECT * FROM sleep_adoptions WHERE night_dir = ? ORDER BY id").all(nightDir)
        : db.query("SELECT * FROM sleep_adoptions ORDER BY id").all()) as AdoptionRow[],
    markRolledBack: (id, atMs) => {
      db.query("UPDATE sleep_adoptions SET rolled_back_ms = ? WHERE id = ?").run(atMs, id);
    },
  };
}

/** Open the Sleep state database and return the SleepStore over it (`Task`: the archived tasks' type). */
export function openSleepStore<Task extends ArchivedTask = ArchivedTask>(
  path: string,
): SleepStore<Task> & { store: Store; close(): void } {
  const store = openStore(path, { namespace: "sleep", migrations: SLEEP_MIGRATIONS, private: true });
  const db = store.db;
  const tx: Tx = (fn) => db.transaction(fn).immediate();
  return {
    store,
    close: () => store.close(),
    ...nightRows(db, tx),
    ...stateRows(db),
    ...recordRows<Task>(db, tx),
    ...adoptionRows(db),
  };
}
