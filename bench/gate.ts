// The gate laboratory and the end-to-end gate comparison (docs/gate.md).
//
// 1. Laboratory: (current, candidate) pairs on a stochastic target with a planted true
//    difference of −5, 0, +2, +5, +10 points; a 200-item selection split and one answer sample per
//    (skill, item) drawn with their own seeds; `strict` and `paired` decide on the same trials.
//    Printed per effect: accept / reject / undecided rates and mean candidate rollouts, beside a
//    fixed-n t-test on the same draws and the statistical ceiling (the power of a fixed-n
//    one-sided z-test at the lab's per-item difference variance, and the n it needs for 80 %).
// 2. End to end: conventions runs on the stochastic simulator over several seeds, `strict` vs
//    `paired`: final test score, selection rollouts paid, and the best skill's selection − test gap.
//
//   bun bench/gate.ts [--trials 200] [--n 200] [--seeds 10] [--temperature 0.6] [--json FILE] [--lab-only]
import { cpus, loadavg } from "node:os";
import { writeFileSync } from "node:fs";
import { createModelClient } from "../src/backends/index.ts";
import { getBenchmark } from "../src/benchmarks/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { type RunCheckpoint, type RunRecorder, train } from "../src/engine/index.ts";
import { DEFAULT_NOISE, type LabCeiling, type LabNoise, type LabRow, runLab } from "../src/engine/gate-lab.ts";
import type { Benchmark } from "../src/engine/ports.ts";
import { PROMPTS } from "../src/prompts/index.ts";
import { simContext } from "../test/engine/support.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
};
const trials = Number(opt("trials", "200"));
const n = Number(opt("n", "200"));
const seeds = Number(opt("seeds", "10"));
const temperature = Number(opt("temperature", "0.6"));
const jsonOut = opt("json", "");
const out = (s: string) => process.stdout.write(`${s}\n`);

out(
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}, bun ${Bun.version}`,
);
const settings = { alpha: Number(opt("alpha", "0.05")), minEffect: 0.02, maxRegressions: null };
const EFFECTS = [-5, 0, 2, 5, 10];

const noises: { name: string; noise: LabNoise }[] = [
  { name: "moderate noise", noise: DEFAULT_NOISE },
  { name: "low noise", noise: { population: 4000, borderline: 0.06, churn: 0.01 } },
];
const lab: { name: string; flipRate: number; rows: LabRow[]; ceilings: LabCeiling[] }[] = [];
for (const { name, noise } of noises) {
  const t0 = performance.now();
  const r = runLab({ effects: EFFECTS, trials, n, settings, noise });
  lab.push({ name, flipRate: r.flipRate, rows: r.rows, ceilings: r.ceilings });
  out(
    `\nLaboratory, ${name}: ${trials} trials per effect, selection split n=${n}, current skill's flip rate ${(r.flipRate * 100).toFixed(1)} %, confidence ${Math.round((1 - settings.alpha) * 100)} %, minimum effect ${settings.minEffect * 100} points (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  out("  Δ(pts)  rule     accept  reject  undecided  rollouts (% of full pass)");
  for (const row of r.rows) {
    const pct = (k: number) => `${((100 * k) / row.trials).toFixed(1).padStart(5)} %`;
    out(
      `  ${String(row.effect).padStart(5)}   ${row.rule.padEnd(7)} ${pct(row.accept)} ${pct(row.reject)}   ${pct(row.undecided)}  ${row.meanRollouts.toFixed(1).padStart(6)} (${((100 * row.meanRollouts) / n).toFixed(0)} %)`,
    );
  }
  // The statistical ceiling: no level-α test of "no gain" on n such items can beat a fixed-n
  // one-sided z-test that knows the per-item difference variance (fixed-t above is that test with
  // the variance estimated, on the same draws).
  out(
    `  Statistical ceiling (fixed-n one-sided z-test at level ${settings.alpha}, the lab's per-item difference variance):`,
  );
  for (const c of r.ceilings) {
    out(
      `  ${String(c.effect).padStart(5)}   σ²(d)=${c.variance.toFixed(4)}  best power ${(100 * c.power).toFixed(1).padStart(5)} %${Number.isFinite(c.n80) ? `  n for 80 %: ${c.n80}` : ""}`,
    );
  }
  const at5 = r.ceilings.find((c) => c.effect === 5);
  if (at5) {
    out(
      at5.power < 0.8
        ? `  => power ≥ 80 % at +5 on ${n} items is infeasible at this noise for ANY level-${settings.alpha} test: the ceiling is ${(100 * at5.power).toFixed(1)} %; 80 % needs n ≈ ${at5.n80} items (a fixed-n test; an always-valid sequential one needs more)`
        : `  => the ceiling at +5 is ${(100 * at5.power).toFixed(1)} %: 80 % is reachable in principle at n=${n}`,
    );
  }
}

interface E2E {
  seed: number;
  rule: string;
  test: number | null;
  bestSelection: number | null;
  bestTest: number | null;
  selectionCalls: number;
  accepted: number;
  rejected: number;
  undecided: number;
}
const e2e: E2E[] = [];
if (!argv.includes("--lab-only")) {
  out(
    `\nEnd to end: conventions on the stochastic simulator (env.sim_temperature=${temperature}), ${seeds} seeds, 120 selection items, 200 test items`,
  );
  for (let seed = 1; seed <= seeds; seed++) {
    for (const rule of ["strict", "paired"]) {
      const { config } = loadConfig({
        config: "conventions",
        set: [
          "model.backend=sim",
          `train.seed=${seed}`,
          `env.split_seed=${seed}`,
          `env.sim_temperature=${temperature}`,
          "env.val_items=120",
          "env.test_items=200",
          `evaluation.gate_rule=${rule}`,
        ],
      });
      const client = await createModelClient(config, { noCache: true });
      const inner = (await getBenchmark("conventions"))!;
      let selectionCalls = 0;
      const bench: Benchmark = {
        ...inner,
        rollout: (item, skill, ctx, sample) => {
          if (String(item.id).startsWith("val-")) selectionCalls += 1;
          return inner.rollout(item, skill, ctx, sample);
        },
      };
      const ctx = simContext(config, client);
      const splits = await bench.loadSplits(ctx);
      const recorder: RunRecorder = { resume: () => undefined, commit: (_cp: RunCheckpoint) => {} };
      try {
        const r = await train({
          cfg: config,
          bench,
          ctx,
          splits,
          initialSkill: bench.initialSkill,
          prompts: PROMPTS,
          recorder,
          accounting: client,
          events: { emit: () => {} },
          clock: { now: () => performance.now() },
        });
        const s = r.summary as {
          final: { test: number | null };
          best: { selection: number | null; test: number | null };
          accepted: number;
          rejected: number;
          undecided?: number;
        };
        e2e.push({
          seed,
          rule,
          test: s.final.test,
          bestSelection: s.best.selection,
          bestTest: s.best.test,
          selectionCalls,
          accepted: s.accepted,
          rejected: s.rejected,
          undecided: s.undecided ?? 0,
        });
      } finally {
        await client.close();
      }
    }
  }
  out("  seed  rule     final test  selection calls  best sel−test  accepted/rejected/undecided");
  for (const r of e2e) {
    const gap = r.bestSelection !== null && r.bestTest !== null ? r.bestSelection - r.bestTest : null;
    out(
      `  ${String(r.seed).padStart(4)}  ${r.rule.padEnd(7)}  ${r.test === null ? "—" : r.test.toFixed(3)}       ${String(r.selectionCalls).padStart(6)}          ${gap === null ? "—" : `${gap >= 0 ? "+" : ""}${gap.toFixed(3)}`}        ${r.accepted}/${r.rejected}/${r.undecided}`,
    );
  }
  for (const rule of ["strict", "paired"]) {
    const rs = e2e.filter((r) => r.rule === rule);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const test = mean(rs.map((r) => r.test ?? 0));
    const calls = mean(rs.map((r) => r.selectionCalls));
    const gap = mean(rs.map((r) => (r.bestSelection ?? 0) - (r.bestTest ?? 0)));
    out(
      `  mean  ${rule.padEnd(7)}  ${test.toFixed(3)}       ${calls.toFixed(0).padStart(6)}          ${gap >= 0 ? "+" : ""}${gap.toFixed(3)}`,
    );
  }
}

if (jsonOut) {
  writeFileSync(jsonOut, `${JSON.stringify({ trials, n, settings, temperature, seeds, lab, e2e }, null, 2)}\n`);
  out(`\nfigures written to ${jsonOut}`);
}
