#!/usr/bin/env bun
/**
 * Training as a user runs it: the CLI (or the binary in SKILLOPT_BIN) against `skillopt sim serve`
 * over HTTP with a fixed latency per call, the call cache on (cold, in a fresh directory) and the
 * real run recorder. Its wall time is set against the plan's critical-path bound: the dependent
 * rounds the algorithm needs, computed from the configuration and the run's decisions (see
 * bench/lib/plan-bound.ts), never from when its calls happened. Also: process start → first request.
 *
 *   bun bench/train.ts [--latency 200] [--epochs 4] [--no-early] [--serialized]
 *
 * --serialized runs the same plan with one call at a time (env.workers=1, analyst_workers=1): a
 * deliberately serialized variant whose ratio shows what the bound catches.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMeasured, startSimServe } from "./lib/cli.ts";
import { LoadSampler, machineLine } from "./lib/machine.ts";
import { planBound } from "./lib/plan-bound.ts";

export interface TrainBenchOptions {
  latencyMs: number;
  epochs: number;
  early: boolean;
  /** One call at a time, against a bound planned for the configured concurrency. */
  serialized: boolean;
  config?: string;
}

export interface TrainBenchResult {
  wallS: number;
  boundS: number;
  rounds: number;
  parts: Record<string, number>;
  ratio: number;
  firstRequestS: number | null;
  calls: number;
  cached: number;
  workers: { target: number; optimizer: number };
  summary: Record<string, unknown>;
}

/** The run's config as resolved (run_meta.config). */
function runConfig(dir: string): Record<string, Record<string, unknown>> {
  const db = new Database(join(dir, "state.sqlite"), { readonly: true });
  try {
    return JSON.parse((db.query("SELECT value FROM run_meta WHERE key = 'config'").get() as { value: string }).value);
  } finally {
    db.close();
  }
}

/** The first model request: the earliest call start in the run's ledger (ms epoch). */
function firstRequestAt(dir: string): number | null {
  const db = new Database(join(dir, "state.sqlite"), { readonly: true });
  try {
    const row = db.query("SELECT MIN(at - latency_ms) AS t FROM call_ledger WHERE cached = 0").get() as {
      t: number | null;
    };
    return row.t;
  } finally {
    db.close();
  }
}

export async function runTrainBench(o: TrainBenchOptions): Promise<TrainBenchResult> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-bench-train-"));
  const sim = await startSimServe(o.latencyMs);
  try {
    const out = join(root, "run");
    const args = [
      "train",
      "--config",
      o.config ?? "conventions",
      "--out",
      out,
      "--json",
      "--set",
      "model.backend=openai_compatible",
      "--set",
      `model.openai_compatible_base_url=${sim.url}`,
      "--set",
      `train.num_epochs=${o.epochs}`,
      "--set",
      `evaluation.early_reject=${o.early}`,
      ...(o.serialized
        ? ["--set", "env.workers=1", "--set", "env.max_api_workers=1", "--set", "gradient.analyst_workers=1"]
        : []),
    ];
    const r = await runMeasured(args, {
      OPENAI_COMPATIBLE_API_KEY: "sim-local",
      SKILLOPT_CACHE_DIR: join(root, "cache"),
    });
    if (r.code !== 0) throw new Error(`skillopt train exited ${r.code}: ${r.stderr.slice(-2000)}`);
    const summary = JSON.parse(r.stdout) as Record<string, unknown>;
    // The plan's concurrency is the configuration's without the serializing overrides.
    const nominal = o.serialized ? null : runConfig(out);
    const cfg = nominal ?? (await nominalConfig(o.config ?? "conventions"));
    const pick = (v: unknown) => (typeof v === "number" && v > 0 ? v : undefined);
    const workers = {
      target: pick(cfg.env?.max_api_workers) ?? pick(cfg.env?.workers) ?? 8,
      optimizer: pick(cfg.gradient?.analyst_workers) ?? 16,
    };
    const plan = planBound(out, {
      targetWorkers: workers.target,
      optimizerWorkers: workers.optimizer,
      mergeBatch: Number(cfg.gradient?.merge_batch_size ?? 4),
    });
    const boundS = (plan.rounds * o.latencyMs) / 1000;
    const first = firstRequestAt(out);
    const calls = summary.calls as { total: number; cached: number };
    return {
      wallS: r.wallS,
      boundS,
      rounds: plan.rounds,
      parts: plan.parts,
      ratio: r.wallS / boundS,
      firstRequestS: first === null ? null : (first - r.spawnedAt) / 1000,
      calls: calls.total,
      cached: calls.cached,
      workers,
      summary,
    };
  } finally {
    await sim.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** The named config as resolved, without any override (the plan's concurrency). */
async function nominalConfig(name: string): Promise<Record<string, Record<string, unknown>>> {
  const { loadConfig } = await import("../src/config/index.ts");
  return loadConfig({ config: name }).config as unknown as Record<string, Record<string, unknown>>;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
  };
  const o: TrainBenchOptions = {
    latencyMs: Number(opt("latency", "200")),
    epochs: Number(opt("epochs", "4")),
    early: !argv.includes("--no-early"),
    serialized: argv.includes("--serialized"),
    config: opt("config", "conventions"),
  };
  const load = new LoadSampler();
  load.sample();
  const timer = setInterval(() => load.sample(), 1000);
  const r = await runTrainBench(o);
  clearInterval(timer);
  load.sample();
  const at = `   [${load.text()}]`;
  const s = r.summary as {
    baseline: { selection: number };
    best: { selection: number };
    selection_calls_saved?: number;
  };
  const lines = [
    `skillopt train --config ${o.config} through the CLI → skillopt sim serve over HTTP, ${o.latencyMs} ms per call, ${o.epochs} epochs, early rejection ${o.early ? "on" : "off"}, call cache on (cold)${o.serialized ? ", SERIALIZED (one call at a time)" : ""}`,
    machineLine(),
    `runner: ${process.env.SKILLOPT_BIN ? `binary ${process.env.SKILLOPT_BIN}` : "bun src/main.ts"}`,
    `wall time              ${r.wallS.toFixed(2)} s${at}`,
    `plan's bound           ${r.boundS.toFixed(2)} s = ${r.rounds} dependent rounds × ${o.latencyMs} ms (baseline ${r.parts.baseline}, noise floor ${r.parts.noiseFloor}, steps ${r.parts.steps}, boundaries ${r.parts.boundaries}, final ${r.parts.final}; workers target=${r.workers.target} optimizer=${r.workers.optimizer})`,
    `wall / bound           ${r.ratio.toFixed(3)}   (aim ≤ 1.15)${at}`,
    `start → first request  ${r.firstRequestS === null ? "—" : `${r.firstRequestS.toFixed(2)} s`}   (aim ≤ 0.3 s)${at}`,
    `calls                  ${r.calls} (${r.cached} from the cache), ${s.selection_calls_saved ?? 0} selection calls saved by early rejection`,
    `scores                 baseline ${s.baseline.selection} → best ${s.best.selection} (selection)`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
