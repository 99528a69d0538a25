#!/usr/bin/env bun
/**
 * Skill packages, as a user runs them: the CLI (or the binary in SKILLOPT_BIN) against
 * `skillopt sim serve` over HTTP, the call cache on (cold, per seed) and the run recorder on.
 *
 * (a) Package vs single-file training on a skill folder whose rules live partly in reference files
 *     (bench/lib/package-world.ts): the same folder trained with optimizer.skill_files=train (the
 *     package) and =carry (SKILL.md only), test score overall and per place the rule started in.
 * (b) Trigger training: a skill with a vague description (`expense-reports` in the trigger
 *     benchmark's generated world) is trained against 20 distractor skills. For each seed,
 *     `skillopt eval` scores the starting and the trained skill on the held-out test split and
 *     prints trigger precision, recall and F1; the body must come out byte-identical.
 *
 *   bun bench/package.ts [--part a|b|both] [--seeds 1,2,3,4,5] [--latency 0]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUNDLED_DISTRACTORS } from "../src/benchmarks/trigger/distractors.ts";
import { generateTriggerSplits, INITIAL_SKILL } from "../src/benchmarks/trigger/world.ts";
import { contentWords } from "../src/lib/index.ts";
import { runMeasured, startSimServe } from "./lib/cli.ts";
import { machineLine } from "./lib/machine.ts";
import { PLACES, writePackageWorld } from "./lib/package-world.ts";
import { drawHouseRules, generateSplits as generateConventionSplits } from "../src/benchmarks/conventions/generator.ts";

interface Metrics {
  n: number;
  precision: number | null;
  recall: number | null;
  f1: number | null;
}

export interface SeedRow {
  seed: number;
  before: Metrics;
  after: Metrics;
  accepted: number;
  steps: number;
  calls: number;
  wallS: number;
  bodyKept: boolean;
  description: string;
}

const body = (skill: string) => skill.slice(skill.indexOf("\n---\n", 4) + 5);

async function evalF1(sets: string[], skill: string, out: string, env: Record<string, string>): Promise<Metrics> {
  const r = await runMeasured(["eval", ...sets, "--skill", skill, "--split", "test", "--out", out, "--json"], env);
  if (r.code !== 0) throw new Error(`skillopt eval exited ${r.code}: ${r.stderr.slice(-2000)}`);
  return (JSON.parse(r.stdout) as { metrics: Metrics }).metrics;
}

/** One seed: the simulator's seed, the world's split seed and the run seed are all `seed`. */
export async function runSeed(seed: number, latencyMs: number): Promise<SeedRow> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-bench-package-"));
  const sim = await startSimServe(latencyMs, ["--seed", String(seed)]);
  try {
    const env = { OPENAI_COMPATIBLE_API_KEY: "sim-local", SKILLOPT_CACHE_DIR: join(root, "cache") };
    const sets = [
      "--config",
      "trigger",
      "--set",
      "model.backend=openai_compatible",
      "--set",
      `model.openai_compatible_base_url=${sim.url}`,
      "--set",
      `env.split_seed=${seed}`,
      "--set",
      `train.seed=${seed}`,
      "--set",
      "env.distractors=20",
    ];
    const out = join(root, "run");
    const t = await runMeasured(["train", ...sets, "--out", out, "--json"], env);
    if (t.code !== 0) throw new Error(`skillopt train exited ${t.code}: ${t.stderr.slice(-2000)}`);
    const s = JSON.parse(t.stdout) as { accepted: number; steps?: number; calls: { total: number } };
    const initial = join(root, "initial.md");
    writeFileSync(initial, INITIAL_SKILL);
    const best = join(out, "best_skill.md");
    const trained = readFileSync(best, "utf8");
    return {
      seed,
      before: await evalF1(sets, initial, join(root, "ev-before"), env),
      after: await evalF1(sets, best, join(root, "ev-after"), env),
      accepted: s.accepted,
      steps: s.steps ?? 0,
      calls: s.calls.total,
      wallS: t.wallS,
      bodyKept: body(trained) === body(INITIAL_SKILL),
      description: /^description: (.*)$/m.exec(trained)?.[1] ?? "",
    };
  } finally {
    await sim.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

type ByType = Record<string, { total: number; hard_acc: number }>;

interface PackageRow {
  seed: number;
  mode: "train" | "carry";
  before: ByType;
  after: ByType;
  accepted: number;
  fileEdits: number;
  calls: number;
  wallS: number;
}

/** Part (a), one seed and mode: train the package world's folder, read the run's own test scores. */
export async function runPackageSeed(seed: number, mode: "train" | "carry", latencyMs: number): Promise<PackageRow> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-bench-package-a-"));
  const sim = await startSimServe(latencyMs, ["--seed", String(seed)]);
  try {
    const env = { OPENAI_COMPATIBLE_API_KEY: "sim-local", SKILLOPT_CACHE_DIR: join(root, "cache") };
    const dir = writePackageWorld(join(root, "house-style"), seed);
    const out = join(root, "run");
    const args = ["train", "--config", "quickstart", "--set", "model.backend=openai_compatible"];
    for (const kv of [
      `model.openai_compatible_base_url=${sim.url}`,
      `env.split_seed=${seed}`,
      `train.seed=${seed}`,
      `env.skill_init=${dir}`,
      `optimizer.skill_files=${mode}`,
    ])
      args.push("--set", kv);
    const t = await runMeasured([...args, "--out", out, "--json"], env);
    if (t.code !== 0) throw new Error(`skillopt train exited ${t.code}: ${t.stderr.slice(-2000)}`);
    const s = JSON.parse(t.stdout) as {
      accepted: number;
      calls: { total: number };
      test_by_type: { baseline: ByType; best: ByType };
    };
    const edits = readFileSync(join(out, "best_skill.md"), "utf8");
    return {
      seed,
      mode,
      before: s.test_by_type.baseline,
      after: s.test_by_type.best,
      accepted: s.accepted,
      // Files the best package changed (their text differs from the starting folder's).
      fileEdits: ["references/formats.md", "references/lists.md"].filter(
        (f) => !edits.includes(readFileSync(join(dir, f), "utf8")),
      ).length,
      calls: s.calls.total,
      wallS: t.wallS,
    };
  } finally {
    await sim.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Mean hard accuracy over some formats of a by-type table. */
function acc(t: ByType, families: readonly string[]): number {
  const xs = families.map((f) => t[f]?.hard_acc ?? 0);
  return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
}

async function partA(seeds: number[], latency: number): Promise<string[]> {
  const rows: PackageRow[] = [];
  for (const seed of seeds)
    for (const mode of ["carry", "train"] as const) {
      rows.push(await runPackageSeed(seed, mode, latency));
      process.stderr.write(`  (a) seed ${seed} ${mode} done\n`);
    }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
  const cell = (r: PackageRow) =>
    `${f(acc(r.after, ["overall"]))} | ${f(acc(r.after, PLACES.stale))} | ${f(acc(r.after, PLACES.unread))} | ` +
    `${f(acc(r.after, [...PLACES.right, ...PLACES.nowhere]))}`;
  const by = (mode: string) => rows.filter((r) => r.mode === mode);
  // How the test split divides among the places a rule starts in, and what the untrained package scores.
  const splits = generateConventionSplits(
    seeds[0] ?? 1,
    { train: 32, val: 24, test: 48 },
    drawHouseRules(seeds[0] ?? 1),
  );
  const count = (fams: readonly string[]) => splits.test.filter((t) => fams.includes(String(t.family))).length;
  const realismLine =
    `test split (seed ${seeds[0] ?? 1}): ${splits.test.length} items, ${count(PLACES.stale)} on the stale referenced rules, ` +
    `${count(PLACES.unread)} on the unread file's rules, ${count([...PLACES.right, ...PLACES.nowhere])} on the others; ` +
    `untrained, the agent's defaults pass ${f(mean(by("train").map((r) => acc(r.before, ["overall"]))))} on average`;
  return [
    "bench/package.ts (a) package vs single-file training: skillopt train --config quickstart on a skill folder " +
      "(SKILL.md → references/formats.md with 2 right and 2 stale rules; references/lists.md with 2 right rules, unread), " +
      `through the CLI → skillopt sim serve over HTTP (${latency} ms per call), call cache on (cold per run)`,
    machineLine(),
    realismLine,
    "",
    "| seed | training | test before | test after | stale rules in a referenced file | rules in an unread file | others | accepted | files changed | calls | wall |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${r.mode === "train" ? "package" : "single-file"} | ${f(acc(r.before, ["overall"]))} | ${cell(r)} | ` +
        `${r.accepted} | ${r.fileEdits} | ${r.calls} | ${r.wallS.toFixed(1)} s |`,
    ),
    "",
    `mean test after: single-file ${f(mean(by("carry").map((r) => acc(r.after, ["overall"]))))}, package ${f(mean(by("train").map((r) => acc(r.after, ["overall"]))))}; ` +
      `stale referenced rules: single-file ${f(mean(by("carry").map((r) => acc(r.after, PLACES.stale))))}, ` +
      `package ${f(mean(by("train").map((r) => acc(r.after, PLACES.stale))))}`,
  ];
}

/** How hard the generated data is: the share of negatives that are near misses and that share a word with the positives. */
function realism(seed: number): string {
  const s = generateTriggerSplits(seed, { train: 90, val: 150, test: 150 });
  const pos = s.test.filter((t) => t.should_trigger);
  const neg = s.test.filter((t) => !t.should_trigger);
  const posWords = new Set(pos.flatMap((t) => contentWords(String(t.query)).map((w) => w.stem)));
  const near = neg.filter((t) => t.kind === "near_miss");
  const sharing = neg.filter((t) => contentWords(String(t.query)).some((w) => posWords.has(w.stem)));
  const trainWords = new Set(
    s.train.filter((t) => t.should_trigger).flatMap((t) => contentWords(String(t.query)).map((w) => w.stem)),
  );
  const unseen = pos.filter((t) => contentWords(String(t.query)).some((w) => !trainWords.has(w.stem)));
  const pct = (a: number, b: number) => `${Math.round((100 * a) / Math.max(b, 1))}%`;
  return (
    `test split (seed ${seed}): ${pos.length} should load, ${neg.length} should not; ${pct(near.length, neg.length)} of the negatives are near misses, ` +
    `${pct(sharing.length, neg.length)} share a word with the positives; ${pct(unseen.length, pos.length)} of the positives use a word no training positive has`
  );
}

const f = (v: number | null) => (v === null ? "n/a" : v.toFixed(3));

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
  };
  const seeds = opt("seeds", "1,2,3,4,5").split(",").map(Number);
  const latency = Number(opt("latency", "0"));
  const part = opt("part", "both");
  if (part === "a" || part === "both") process.stdout.write(`${(await partA(seeds, latency)).join("\n")}\n\n`);
  if (part === "a") process.exit(0);
  const rows: SeedRow[] = [];
  for (const seed of seeds) {
    rows.push(await runSeed(seed, latency));
    process.stderr.write(`  seed ${seed} done\n`);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
  const lines = [
    `bench/package.ts (b) trigger training: skillopt train --config trigger through the CLI → skillopt sim serve over HTTP (${latency} ms per call), ` +
      `${BUNDLED_DISTRACTORS.slice(0, 20).length} distractor skills, call cache on (cold per seed)`,
    machineLine(),
    `runner: ${process.env.SKILLOPT_BIN ? `binary ${process.env.SKILLOPT_BIN}` : "bun src/main.ts"}`,
    realism(seeds[0] ?? 1),
    "",
    "| seed | test n | before P / R / F1 | after P / R / F1 | accepted steps | calls | train wall | body byte-identical |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${r.after.n} | ${f(r.before.precision)} / ${f(r.before.recall)} / ${f(r.before.f1)} | ` +
        `${f(r.after.precision)} / ${f(r.after.recall)} / ${f(r.after.f1)} | ${r.accepted} | ${r.calls} | ${r.wallS.toFixed(1)} s | ${r.bodyKept ? "yes" : "NO"} |`,
    ),
    "",
    `mean F1 before ${f(mean(rows.map((r) => r.before.f1 ?? 0)))} → after ${f(mean(rows.map((r) => r.after.f1 ?? 0)))}; ` +
      `seeds at F1 ≥ 0.9 after: ${rows.filter((r) => (r.after.f1 ?? 0) >= 0.9).length}/${rows.length} (aim: all, from < 0.6: ${rows.filter((r) => (r.before.f1 ?? 1) < 0.6).length}/${rows.length})`,
    "",
    "trained descriptions:",
    ...rows.map((r) => `  seed ${r.seed}: ${r.description}`),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}
