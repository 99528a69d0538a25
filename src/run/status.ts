import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { errorMessage, processAlive, readInputText } from "../lib/index.ts";
import { getRunMeta, openRunStore, stepRecords } from "../store/index.ts";
import { batchWaitText, readBatchWait } from "./batch-wait.ts";
import { RUN_MARKERS, runPaths } from "./layout.ts";
import { parseAll, parseStepRecord, parseSummary } from "./records.ts";

/**
 * A run's status, by one rule (runStatus) that `skillopt runs`, the dashboard and report.html share:
 * - running: the store says running and the process that wrote it is alive;
 * - interrupted: it says running but that process is gone (killed), or it was interrupted (resumable);
 * - stopped: it ended early on purpose (budget, cost cap) and can be resumed with a higher cap;
 * - failed: it ended on an error (the reason is kept);
 * - finished: it completed (a run without a store, such as an eval or the reference
 *   implementation's, counts as finished once it has written its summary);
 * - unknown: the store is unreadable, or a folder without a store has no summary yet.
 */
export type RunStatus = "running" | "interrupted" | "stopped" | "failed" | "finished" | "unknown";

/** What the status rule looks at. */
interface StatusFacts {
  /** The store's run_meta; undefined when the folder has no store. */
  meta: Record<string, string> | undefined;
  /** The store exists but cannot be read. */
  storeError?: string | null | undefined;
  /** A summary (summary.json or eval_summary.json) exists. */
  hasSummary: boolean;
  /** That summary records a failure (an eval whose items got no answer): never "finished". */
  failed?: boolean;
}

/** The one status rule (see RunStatus). */
export function runStatus(f: StatusFacts, alive: (pid: number) => boolean = processAlive): RunStatus {
  if (f.storeError) return "unknown";
  if (!f.meta) return f.failed ? "failed" : f.hasSummary ? "finished" : "unknown";
  const raw = f.meta.status;
  if (raw === undefined || raw === "running") {
    const pid = Number(f.meta.pid ?? f.meta.owner_pid);
    return alive(pid) ? "running" : "interrupted";
  }
  if (raw === "interrupted" || raw === "stopped" || raw === "failed" || raw === "finished") return raw;
  return "unknown";
}

/** What kind of folder a run is. */
type RunKind = "train" | "eval" | "reference";

/** One row of a runs list: the same object for `skillopt runs --json` and the dashboard's /api/runs. */
export interface RunRow {
  dir: string;
  name: string;
  kind: RunKind;
  status: RunStatus;
  /** Why it stopped or failed, when known. */
  reason: string | null;
  benchmark: string;
  backend: string;
  optimizer: string;
  target: string;
  simulator: boolean;
  steps: number;
  total_steps: number | null;
  /** Best selection score (train), or the hard score (eval). */
  best: number | null;
  cost_usd: number | null;
  /** ISO times. */
  started_at: string | null;
  updated_at: string | null;
  /** Set when the run's files cannot be read; the row still shows. */
  error: string | null;
  /** "waiting on batch <id> (status, n/m done)" while its live process waits on a provider batch. */
  waiting: string | null;
}

function readJsonFile(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readInputText(path, "")) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function isoOf(raw: string | undefined): string | null {
  if (!raw) return null;
  const d = /^\d+$/.test(raw) ? new Date(Number(raw)) : new Date(raw);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

function mtimeIso(path: string): string | null {
  try {
    return statSync(path).mtime.toISOString();
  } catch {
    return null;
  }
}

const str = (v: unknown) => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function isSimulator(backend: string, optimizer: string, target: string): boolean {
  return /\bsim\b/.test(backend) || /^sim[-:]/.test(optimizer) || /^sim[-:]/.test(target);
}

/** Read one run folder's row (never throws: a damaged store becomes the row's error and status unknown). */
export function readRunRow(dir: string, alive: (pid: number) => boolean = processAlive): RunRow {
  const p = runPaths(dir);
  const row: RunRow = {
    dir,
    name: basename(dir),
    kind: "train",
    status: "unknown",
    reason: null,
    benchmark: "",
    backend: "",
    optimizer: "",
    target: "",
    simulator: false,
    steps: 0,
    total_steps: null,
    best: null,
    cost_usd: null,
    started_at: null,
    updated_at: null,
    error: null,
    waiting: null,
  };
  if (existsSync(p.state)) {
    let store: ReturnType<typeof openRunStore> | undefined;
    try {
      store = openRunStore(p.state, { readonly: true });
      const meta = getRunMeta(store);
      const issues: string[] = [];
      const raws = stepRecords(store);
      const records = parseAll(raws, parseStepRecord, "step record", issues);
      const rawSummary = meta.summary ? (JSON.parse(meta.summary) as unknown) : readJsonFile(p.summary);
      const parsed = rawSummary === undefined ? undefined : parseSummary(rawSummary);
      if (parsed && !parsed.ok) issues.push(parsed.issue);
      const summary = parsed?.ok ? parsed.value : undefined;
      const cfg = meta.config
        ? (JSON.parse(meta.config) as Record<string, Record<string, unknown> | undefined>)
        : undefined;
      const last = records[records.length - 1];
      const best = summary ? summary.best.selection : last?.best_score;
      const cost = records.reduce<number | null>(
        (s, r) => (s === null || r.cost_usd === null ? null : s + r.cost_usd),
        records.length ? 0 : null,
      );
      if (issues.length) row.error = issues[0]!;
      Object.assign(row, {
        status: runStatus({ meta, hasSummary: rawSummary !== undefined }, alive),
        // A resumed run clears its earlier failure reason with "".
        reason: meta.reason || summary?.stopped_reason || null,
        benchmark: meta.benchmark ?? str(cfg?.env?.name),
        backend: meta.backend ?? str(cfg?.model?.backend),
        optimizer: str(cfg?.model?.optimizer),
        target: str(cfg?.model?.target),
        steps: raws.length,
        total_steps: Number(meta.total_steps) > 0 ? Number(meta.total_steps) : null,
        best: num(best),
        cost_usd: summary?.cost_usd ?? cost,
        started_at: isoOf(meta.started_at) ?? mtimeIso(p.config),
        updated_at: isoOf(meta.updated_at),
      });
    } catch (err) {
      row.error = errorMessage(err);
      row.status = runStatus({ meta: undefined, storeError: row.error, hasSummary: false }, alive);
    } finally {
      store?.close();
    }
  } else if (existsSync(p.evalSummary)) {
    const e = readJsonFile(p.evalSummary);
    row.kind = "eval";
    row.status = runStatus({ meta: undefined, hasSummary: e !== undefined, failed: e?.status === "failed" }, alive);
    if (e?.status === "failed") row.reason = str(e.error) || "items got no answer";
    if (!e) row.error = "eval_summary.json is not valid JSON";
    row.benchmark = str(e?.benchmark);
    row.backend = str(e?.backend);
    row.best = num(e?.hard);
    row.cost_usd = num(e?.cost_usd);
    row.started_at = mtimeIso(p.evalSummary);
    row.updated_at = row.started_at;
  } else if (existsSync(p.batchWait)) {
    // An eval whose first round waits on a provider batch (no summary yet).
    row.kind = "eval";
    row.started_at = mtimeIso(p.batchWait);
    row.updated_at = row.started_at;
  } else {
    // The reference implementation's folder (history.json, config.json), or ours without a store.
    const summary = readJsonFile(p.summary);
    const config = readJsonFile(p.upstreamConfig);
    row.kind = "reference";
    row.status = runStatus({ meta: undefined, hasSummary: summary !== undefined }, alive);
    row.benchmark = str(config?.env);
    row.optimizer = str(config?.optimizer_model);
    row.target = str(config?.target_model);
    row.backend = str(config?.backend);
    const best = summary?.best;
    row.best = num(
      typeof best === "object" && best !== null
        ? (best as Record<string, unknown>).selection
        : summary?.best_selection_hard,
    );
    row.steps = historyLength(p.upstreamHistory, p.history);
    row.started_at = mtimeIso(existsSync(p.config) ? p.config : dir);
  }
  row.simulator = isSimulator(row.backend, row.optimizer, row.target);
  applyBatchWait(row, alive);
  return row;
}

/**
 * A run waiting on a provider batch is running (not stuck) while its process lives, and says on
 * which batch; once that process is gone it is interrupted, and a rerun re-attaches to the batch.
 */
function applyBatchWait(row: RunRow, alive: (pid: number) => boolean): void {
  const w = readBatchWait(row.dir);
  if (!w || row.status === "finished" || row.status === "failed" || row.status === "stopped") return;
  if (alive(w.pid)) {
    row.status = "running";
    row.waiting = batchWaitText(w);
    row.reason = row.waiting;
    return;
  }
  row.status = "interrupted";
  row.reason = `was ${batchWaitText(w)}; rerun with --resume (the same command for eval) to re-attach`;
}

/** Step records in the reference implementation's history.json (an array), or our history.jsonl. */
function historyLength(arrayFile: string, linesFile: string): number {
  try {
    const v = JSON.parse(readInputText(arrayFile, "")) as unknown;
    if (Array.isArray(v)) return v.length;
  } catch {
    // not there or not JSON: try history.jsonl
  }
  try {
    return readInputText(linesFile, "")
      .split("\n")
      .filter((l) => l.trim()).length;
  } catch {
    return 0;
  }
}

/** Whether a folder is a run folder (ours, an eval's, or the reference implementation's). */
export function isRunDir(dir: string): boolean {
  return RUN_MARKERS.some((m) => existsSync(join(dir, m)));
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith("."))
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/** Run folders under root: root itself, root/<run> and root/<group>/<run>. */
export function findRuns(root: string): string[] {
  const out: string[] = [];
  if (isRunDir(root)) out.push(root);
  for (const d of subdirs(root)) {
    if (isRunDir(d)) out.push(d);
    else for (const dd of subdirs(d)) if (isRunDir(dd)) out.push(dd);
  }
  return out;
}

/** Every run's row under root, newest first. */
export function listRunRows(root: string, alive: (pid: number) => boolean = processAlive): RunRow[] {
  return findRuns(root)
    .map((d) => readRunRow(d, alive))
    .sort((a, b) => (b.started_at ?? "").localeCompare(a.started_at ?? ""));
}
