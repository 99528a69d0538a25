// The gate laboratory and the end-to-end gate comparison (docs/gate.md).
//
// 1. Laboratory: (current, candidate) pairs on a stochastic target with a planted true
//    difference of −5, 0, +2, +5, +10 points; a 200-item selection split and one answer sample per
//    (skill, item) drawn with their own seeds; `strict` and `paired` decide on the same trials.
//    Printed per effect: accept / reject / undecided rates and mean candidate rollouts, beside a
//    fixed-n t-test on the same draws and the statistical ceiling (the power of a fixed-n
//    one-sided z-test at the lab's per-item difference variance, and the n it needs for 80 %).
// 2. End to end: conventions training runs on the stochastic simulator, selection splits of 4 to
//    400 items, three mixes of proposal quality, `strict`, `paired` and `auto` side by side
//    (details above the section below).
//
//   bun bench/gate.ts [--trials 200] [--n 200] [--seeds 10] [--temperature 0.6] [--sizes 4,10,20,50,120,400]
//                     [--rules strict,paired,auto] [--json FILE] [--lab-only] [--e2e-only]
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createModelClient } from "../src/backends/index.ts";
import { getBenchmark } from "../src/benchmarks/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { chooseRule, type RunCheckpoint, type RunRecorder, train } from "../src/engine/index.ts";
import { successProbability } from "../src/backends/sim/stochastic.ts";
import type { TaskValue } from "../src/backends/sim/conventions.ts";
import { DEFAULT_NOISE, type LabCeiling, type LabNoise, type LabRow, runLab } from "../src/engine/gate-lab.ts";
import type { Benchmark } from "../src/engine/ports.ts";
import { PROMPTS } from "../src/prompts/index.ts";
import { simContext } from "../test/engine/support.ts";
import { machineLine } from "./lib/machine.ts";

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

out(`${machineLine()}, bun ${Bun.version}`);
const settings = { alpha: Number(opt("alpha", "0.05")), minEffect: 0.02, maxRegressions: null };
const EFFECTS = [-5, 0, 2, 5, 10];

const noises: { name: string; noise: LabNoise }[] = [
  { name: "moderate noise", noise: DEFAULT_NOISE },
  { name: "low noise", noise: { population: 4000, borderline: 0.06, churn: 0.01 } },
];
const lab: { name: string; flipRate: number; rows: LabRow[]; ceilings: LabCeiling[] }[] = [];
for (const { name, noise } of argv.includes("--e2e-only") ? [] : noises) {
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

// ── End to end ───────────────────────────────────────────────────────────────────────────────
// Full training runs through the real engine, model layer and benchmark, in process, on the
// conventions simulator with a stochastic target (exact success probabilities: the held-out truth
// of any skill is known, so "final test" below is the final skill's TRUE accuracy on the 200 test
// items, not a noisy sample). Per selection split size and mix of proposal quality (the simulated
// optimizer's env.sim_noise_rate: the share of its proposals that are a wrong rule or vague
// advice), seeds 1..N, every rule gets the same run plan (same steps, same proposals until their
// decisions differ) and is measured on: final true test, Δ over the baseline's true test, calls,
// selection rollouts, step accepts, accepted-but-harmful steps (true test lower than the skill
// it replaced) and candidate rollouts per decision as a share of a full selection pass.
interface E2E {
  mix: string;
  size: number;
  seed: number;
  rule: string;
  /** The rule that decided (auto's choice). */
  decided: string;
  baseTest: number;
  finalTest: number;
  calls: number;
  selectionCalls: number;
  decisions: number;
  accepts: number;
  harmful: number;
  /** Candidate selection rollouts per decision / split size. */
  passShare: number;
  /** Realised proposal quality: step candidates that truly help / are neutral (±0.5 pt) / hurt. */
  helpful: number;
  neutral: number;
  hurtful: number;
  flipRate: number | null;
}
const MIXES = [
  { name: "mostly helpful", noise: 0.1 },
  { name: "mixed", noise: 0.4 },
  { name: "mostly neutral/harmful", noise: 0.85 },
];
const sizes = opt("sizes", "4,10,20,50,120,400").split(",").map(Number);
const rules = opt("rules", "strict,paired,auto").split(",");
const e2e: E2E[] = [];

async function endToEnd(mix: (typeof MIXES)[number], size: number, seed: number, rule: string): Promise<E2E> {
  const { config } = loadConfig({
    config: "conventions",
    set: [
      "model.backend=sim",
      `train.seed=${seed}`,
      `env.split_seed=${seed}`,
      `env.sim_temperature=${temperature}`,
      `env.sim_noise_rate=${mix.noise}`,
      `env.val_items=${size}`,
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
  const truthOf = new Map<string, number>();
  const truth = (skill: string) => {
    let t = truthOf.get(skill);
    if (t === undefined) {
      t = 0;
      for (const it of splits.test)
        t += successProbability(skill, it.value as TaskValue, String(it.expected), temperature, seed);
      t /= splits.test.length;
      truthOf.set(skill, t);
    }
    return t;
  };
  const texts = new Map<string, string>();
  let current = "";
  const row = { decisions: 0, accepts: 0, harmful: 0, share: 0, helpful: 0, neutral: 0, hurtful: 0 };
  const recorder: RunRecorder = {
    resume: () => undefined,
    commit: (cp: RunCheckpoint) => {
      for (const k of cp.skills) texts.set(k.hash, k.text);
      const next = cp.state.current.hash;
      if (cp.kind === "step" && cp.record.gate && cp.record.candidate_hash && current) {
        const before = truth(texts.get(current)!);
        const d = truth(texts.get(cp.record.candidate_hash)!) - before;
        if (d > 0.005) row.helpful += 1;
        else if (d < -0.005) row.hurtful += 1;
        else row.neutral += 1;
        row.decisions += 1;
        row.share += (cp.record.selection_evaluated ?? size) / size;
        if (next !== current) {
          row.accepts += 1;
          if (d < -0.005) row.harmful += 1;
        }
      }
      current = next;
    },
  };
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
    const s = r.summary;
    return {
      mix: mix.name,
      size,
      seed,
      rule,
      decided: s.gate_rule,
      baseTest: truth(bench.initialSkill),
      finalTest: truth(r.currentSkill),
      calls: s.calls.total,
      selectionCalls,
      decisions: row.decisions,
      accepts: row.accepts,
      harmful: row.harmful,
      passShare: row.decisions ? row.share / row.decisions : 0,
      helpful: row.helpful,
      neutral: row.neutral,
      hurtful: row.hurtful,
      flipRate: s.noise_floor?.flip_rate ?? null,
    };
  } finally {
    await client.close();
  }
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
/** Half-width of a 95 % normal interval for the mean over seeds. */
const ci95 = (xs: readonly number[]) => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return (1.96 * Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))) / Math.sqrt(xs.length);
};

if (!argv.includes("--lab-only")) {
  const t0 = performance.now();
  out(
    `\nEnd to end: conventions on the stochastic simulator (in process, env.sim_temperature=${temperature}), ${seeds} seeds per cell, 200 test items; final test = the final skill's TRUE accuracy on the test items (exact probabilities), Δ = final − baseline (true); calls = all model calls; sel = selection rollouts; acc = step accepts; harm = accepted steps whose true test is below the skill they replaced (and % of decided candidates); pass = candidate rollouts per decision / split size. auto's runs reuse paired's run when auto chose paired (same seed, same noise floor: the runs are identical).`,
  );
  for (const mix of MIXES) {
    for (const size of sizes) {
      const cell: E2E[] = [];
      for (const rule of rules) {
        for (let seed = 1; seed <= seeds; seed++) {
          const twin = cell.find((r) => r.rule === "paired" && r.seed === seed);
          if (rule === "auto" && twin) {
            const pick = chooseRule(size, twin.flipRate ?? undefined, 0.95);
            if (pick.rule === "paired") {
              cell.push({ ...twin, rule: "auto", decided: "paired" });
              continue;
            }
          }
          cell.push(await endToEnd(mix, size, seed, rule));
        }
      }
      e2e.push(...cell);
      const m = cell.filter((r) => r.rule === rules[0]);
      out(
        `\n${mix.name} (sim_noise_rate ${mix.noise}), ${size} selection items — realised proposals helpful/neutral/harmful per run: ${mean(m.map((r) => r.helpful)).toFixed(1)}/${mean(m.map((r) => r.neutral)).toFixed(1)}/${mean(m.map((r) => r.hurtful)).toFixed(1)}, flip rate ${(100 * mean(m.map((r) => r.flipRate ?? 0))).toFixed(0)} %`,
      );
      out("  rule      final test        Δ vs baseline     calls   sel    acc   harm (%)      pass   decided by");
      for (const rule of rules) {
        const rs = cell.filter((r) => r.rule === rule);
        const fin = rs.map((r) => r.finalTest);
        const d = rs.map((r) => r.finalTest - r.baseTest);
        const harm = mean(rs.map((r) => r.harmful));
        const harmPct =
          (100 * rs.reduce((a, r) => a + r.harmful, 0)) /
          Math.max(
            1,
            rs.reduce((a, r) => a + r.decisions, 0),
          );
        const by = [...new Set(rs.map((r) => r.decided))].join("+");
        out(
          `  ${rule.padEnd(8)}  ${mean(fin).toFixed(3)} ±${ci95(fin).toFixed(3)}    ${mean(d) >= 0 ? "+" : ""}${mean(d).toFixed(3)} ±${ci95(d).toFixed(3)}   ${mean(
            rs.map((r) => r.calls),
          )
            .toFixed(0)
            .padStart(5)}  ${mean(rs.map((r) => r.selectionCalls))
            .toFixed(0)
            .padStart(5)}  ${mean(rs.map((r) => r.accepts))
            .toFixed(1)
            .padStart(
              4,
            )}   ${harm.toFixed(1)} (${harmPct.toFixed(1)} %)   ${(100 * mean(rs.map((r) => r.passShare))).toFixed(0).padStart(3)} %   ${by}`,
        );
      }
    }
  }
  out(`\nend to end: ${e2e.length} runs in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

out(`at the end: ${machineLine()}`);
if (jsonOut) {
  // One part re-run (--e2e-only / --lab-only) keeps the other part's figures from the file.
  const before = existsSync(jsonOut) ? (JSON.parse(readFileSync(jsonOut, "utf8")) as Record<string, unknown>) : {};
  const keep = {
    ...(lab.length
      ? { trials, n, settings, lab }
      : { trials: before.trials, n: before.n, settings: before.settings, lab: before.lab }),
    ...(e2e.length
      ? { temperature, seeds, sizes, e2e }
      : { temperature: before.temperature, seeds: before.seeds, sizes: before.sizes, e2e: before.e2e }),
  };
  // One end-to-end run per line: 540 rows stay readable in a diff.
  const { e2e: rows, ...rest } = keep as { e2e?: unknown[] } & Record<string, unknown>;
  const body = JSON.stringify(rest, null, 2).replace(/\n}$/, "");
  const runs = (rows ?? []).map((r) => `    ${JSON.stringify(r)}`).join(",\n");
  writeFileSync(jsonOut, `${body},\n  "e2e": [\n${runs}\n  ]\n}\n`);
  out(`\nfigures written to ${jsonOut}`);
}
