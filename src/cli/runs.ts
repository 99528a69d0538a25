import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { errorMessage, UsageError } from "../lib/index.ts";
import { getRunMeta, openRunStore, stepRecords } from "../store/index.ts";
import { globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";

export interface RunRow {
  dir: string;
  benchmark: string;
  status: string;
  steps: number;
  total_steps: number | null;
  best: number | null;
  cost_usd: number | null;
  backend: string;
  updated_at: string | null;
  error?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One run's row: status running only while its process lives; a dead "running" run is interrupted. */
export function readRun(dir: string): RunRow {
  const base: RunRow = { dir, benchmark: "?", status: "unreadable", steps: 0, total_steps: null, best: null, cost_usd: null, backend: "", updated_at: null };
  let store: ReturnType<typeof openRunStore> | undefined;
  try {
    store = openRunStore(join(dir, "state.sqlite"), { readonly: true });
    const meta = getRunMeta(store);
    const records = stepRecords(store);
    const summary = meta.summary ? (JSON.parse(meta.summary) as Record<string, unknown>) : undefined;
    const last = records[records.length - 1];
    let status = meta.status ?? "interrupted";
    if (status === "running" && !(meta.pid && alive(Number(meta.pid)))) status = "interrupted";
    const best = summary ? (summary.best as { selection?: number } | undefined)?.selection : last?.best_score;
    const cost = records.reduce<number | null>((s, r) => (s === null || typeof r.cost_usd !== "number" ? null : s + r.cost_usd), 0);
    return {
      dir,
      benchmark: meta.benchmark ?? "?",
      status,
      steps: records.length,
      total_steps: meta.total_steps ? Number(meta.total_steps) : null,
      best: typeof best === "number" ? best : null,
      cost_usd: summary && typeof summary.cost_usd === "number" ? summary.cost_usd : cost,
      backend: meta.backend ?? "",
      updated_at: meta.updated_at ? new Date(Number(meta.updated_at)).toISOString() : null,
    };
  } catch (err) {
    return { ...base, error: errorMessage(err) };
  } finally {
    store?.close();
  }
}

/** Run folders (those with a state.sqlite) directly under `root`, newest first. */
export function findRuns(root: string): string[] {
  if (existsSync(join(root, "state.sqlite"))) return [root];
  return readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && existsSync(join(root, e.name, "state.sqlite")))
    .map((e) => join(root, e.name))
    .sort((a, b) => statSync(join(b, "state.sqlite")).mtimeMs - statSync(join(a, "state.sqlite")).mtimeMs);
}

export default defineCommand({
  meta: { name: "runs", description: "List training runs and their status" },
  args: {
    ...globalArgs,
    ...jsonArg,
    dir: { type: "positional", description: "Directory holding runs (default outputs/)", required: false },
  },
  run({ args }) {
    const root = resolve(process.cwd(), String(args.dir ?? "outputs"));
    if (!existsSync(root)) {
      if (args.dir) throw new UsageError(`${args.dir}: no such directory`);
      if (output.json) printJson([]);
      else printResult("no runs (outputs/ does not exist yet; start one with `skillopt train --config quickstart`)");
      return;
    }
    const rows = findRuns(root).map(readRun);
    if (output.json) return printJson(rows);
    if (!rows.length) return printResult(`no runs under ${relative(process.cwd(), root) || root}`);
    const f = (x: number | null, d = 3) => (x === null ? "—" : x.toFixed(d));
    const lines = rows.map((r) =>
      [
        relative(process.cwd(), r.dir) || r.dir,
        r.benchmark,
        r.status,
        `${r.steps}/${r.total_steps ?? "?"}`,
        f(r.best),
        r.cost_usd === null ? "—" : `$${r.cost_usd.toFixed(4)}`,
        r.backend,
        r.error ? `(${r.error})` : "",
      ].join("\t"),
    );
    printResult(["RUN\tBENCHMARK\tSTATUS\tSTEPS\tBEST\tCOST\tBACKEND", ...lines].join("\n"));
  },
});
