#!/usr/bin/env bun
/**
 * How the cost of a run grows with the work: the quickstart through the CLI on the in-process
 * simulator (0 ms per call, call cache on, the real recorder) with train items ×1, ×4, ×16, ×64
 * (12 → 768 steps). Prints time per step, CPU time per step with the kernel's share, bytes written
 * per step (pages the process dirtied, from /usr/bin/time), the store's size and peak RSS, each
 * beside the ×1 figure, and the peak RSS of `skillopt report` run alone on the same folder
 * (rendering report.html in parts). The peak RSS is
 * also given until the run writes summary.json (its steps and final evaluation; polled from /proc
 * every 25 ms), before it renders report.html and closes: where in the run the peak is.
 *
 *   bun bench/scale.ts [--max 256] [--no-jit]
 *
 * ×1 → ×256 by default (3 072 steps at ×256, about a minute); --max 64 stops earlier. Memory's aim
 * is set after warm-up (issue 31): the peak RSS from ×16 on within 1.25× of ×16's, since a ×1 run
 * (half a second) never reaches the JavaScript engine's steady state. Bytes written are also given
 * per model call (aim ≤ 4 KB). Each row names the machine's load while it ran.
 *
 * --no-jit runs the product with JavaScriptCore's JIT off (BUN_JSC_useJIT=0; slower): the peak
 * RSS without the machine code and its metadata that a long run's hot functions accumulate.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runMeasured } from "./lib/cli.ts";
import { LoadSampler, machineLine } from "./lib/machine.ts";

const argv = process.argv.slice(2);
const i = argv.indexOf("--max");
const max = i >= 0 ? Number(argv[i + 1]) : 256;
const noJit = argv.includes("--no-jit");
const jitEnv: Record<string, string> = noJit ? { BUN_JSC_useJIT: "0" } : {};
const BASE_TRAIN = 32; // quickstart's env.train_items

interface Row {
  factor: number;
  steps: number;
  wallS: number;
  perStepMs: number;
  /** CPU time (user + system) per step, and the kernel's share of it. */
  cpuPerStepMs: number | null;
  sysShare: number | null;
  /** Model tokens (prompt + completion, every stage, the simulator's count) per step. */
  tokensPerStep: number;
  bytesPerStep: number | null;
  storeMb: number;
  rssMb: number | null;
  /** Peak RSS through the steps and the final evaluation (until summary.json is written). */
  rssRunMb: number | null;
  reportRssMb: number | null;
  /** Model calls (every stage, cached ones included) and bytes written per call. */
  calls: number;
  bytesPerCall: number | null;
  load: string;
}

const rows: Row[] = [];
const root = mkdtempSync(join(tmpdir(), "skillopt-bench-scale-"));
try {
  for (const factor of [1, 4, 16, 64, 256].filter((f) => f <= max)) {
    const out = join(root, `x${factor}`);
    const load = new LoadSampler();
    load.sample();
    const timer = setInterval(() => load.sample(), 1000);
    const r = await runMeasured(
      [
        "train",
        "--config",
        "quickstart",
        "--out",
        out,
        "--json",
        "--set",
        "model.backend=sim",
        "--set",
        `env.train_items=${BASE_TRAIN * factor}`,
      ],
      { SKILLOPT_CACHE_DIR: join(root, `cache-${factor}`), ...jitEnv },
      { phaseFile: join(out, "summary.json") },
    );
    if (r.code !== 0) throw new Error(`×${factor}: skillopt train exited ${r.code}: ${r.stderr.slice(-1500)}`);
    const summary = JSON.parse(r.stdout) as { steps: number; tokens: { total: number }; calls: { total: number } };
    const steps = Number(summary.steps);
    const store = statSync(join(out, "state.sqlite")).size;
    const report = await runMeasured(["report", out], jitEnv);
    clearInterval(timer);
    load.sample();
    if (report.code !== 0)
      throw new Error(`×${factor}: skillopt report exited ${report.code}: ${report.stderr.slice(-1500)}`);
    rows.push({
      factor,
      steps,
      wallS: r.wallS,
      perStepMs: (r.wallS * 1000) / steps,
      cpuPerStepMs: r.cpuS === null ? null : (r.cpuS * 1000) / steps,
      sysShare: r.cpuS === null || r.sysS === null || r.cpuS === 0 ? null : r.sysS / r.cpuS,
      tokensPerStep: summary.tokens.total / steps,
      bytesPerStep: r.bytesWritten === null ? null : r.bytesWritten / steps,
      storeMb: store / 2 ** 20,
      rssMb: r.peakRssKb === null ? null : r.peakRssKb / 1024,
      rssRunMb: r.peakRssBeforeKb === null ? null : r.peakRssBeforeKb / 1024,
      reportRssMb: report.peakRssKb === null ? null : report.peakRssKb / 1024,
      calls: summary.calls.total,
      bytesPerCall: r.bytesWritten === null ? null : r.bytesWritten / summary.calls.total,
      load: load.text(),
    });
    process.stderr.write(`  ×${factor} done (${steps} steps, ${r.wallS.toFixed(1)} s)\n`);
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const base = rows[0]!;
const warm = rows.find((r) => r.factor === 16) ?? base;
const rel = (x: number | null, b: number | null) => (x === null || b === null ? "" : ` (${(x / b).toFixed(2)}×)`);
const lines = [
  "quickstart through the CLI, in-process simulator (0 ms per call), call cache on, train items ×1 … ×" +
    rows.at(-1)!.factor,
  machineLine(),
  `runner: ${process.env.SKILLOPT_BIN ? `binary ${process.env.SKILLOPT_BIN}` : "bun src/main.ts"}${noJit ? ", JIT off (BUN_JSC_useJIT=0)" : ""}`,
  "aims: time/step and bytes written/step within 1.25× of ×1; bytes written/call ≤ 4 KB; peak RSS after warm-up (×16 on) within 1.25× of ×16's; store size linear in steps; CPU ms/step at ×16 ≤ 6.5 (issue 31)",
  "",
  "peak RSS MB: the whole run (its steps and final evaluation until summary.json; the rest is report.html and closing)",
  "",
  "CPU ms/step: user + system time per step, with the kernel's share: on a file system that has just deleted many files\n" +
    "(ext4 skips recently freed inodes when it allocates one) creating each step's files can cost as much as the run's own work",
  "",
  "tokens/step: what a step costs in model tokens (not an aim here; the analysts see at most optimizer.step_buffer_window earlier steps in full, spec §2.9)",
  "",
  "scale  steps  wall s   ms/step          CPU ms/step (kernel)   KB written/step     KB/call  store MB (MB/step)     peak RSS MB (steps+eval)  × of ×16  report alone MB   tokens/step   machine",
  ...rows.map((r) =>
    [
      `×${r.factor}`.padEnd(6),
      String(r.steps).padStart(5),
      r.wallS.toFixed(1).padStart(7),
      `${r.perStepMs.toFixed(0)}${rel(r.perStepMs, base.perStepMs)}`.padStart(15),
      `${r.cpuPerStepMs === null ? "—" : r.cpuPerStepMs.toFixed(1)} (${r.sysShare === null ? "—" : `${(r.sysShare * 100).toFixed(0)} %`})`.padStart(
        21,
      ),
      `${r.bytesPerStep === null ? "—" : (r.bytesPerStep / 1024).toFixed(0)}${rel(r.bytesPerStep, base.bytesPerStep)}`.padStart(
        19,
      ),
      (r.bytesPerCall === null ? "—" : (r.bytesPerCall / 1024).toFixed(1)).padStart(7),
      `${r.storeMb.toFixed(2)} (${(r.storeMb / r.steps).toFixed(3)})`.padStart(22),
      `${r.rssMb === null ? "—" : r.rssMb.toFixed(0)}${rel(r.rssMb, base.rssMb)} (${r.rssRunMb === null ? "—" : r.rssRunMb.toFixed(0)})`.padStart(
        26,
      ),
      (r.factor >= warm.factor && r.rssMb !== null && warm.rssMb !== null
        ? `${(r.rssMb / warm.rssMb).toFixed(2)}×`
        : "—"
      ).padStart(8),
      `${r.reportRssMb === null ? "—" : r.reportRssMb.toFixed(0)}${rel(r.reportRssMb, base.reportRssMb)}`.padStart(15),
      `${(r.tokensPerStep / 1000).toFixed(1)}k${rel(r.tokensPerStep, base.tokensPerStep)}`.padStart(15),
      r.load,
    ].join("  "),
  ),
];
process.stdout.write(`${lines.join("\n")}\n`);
