// Search: one hill-climber (optimizer.search: single) against a candidate pool (pool, with and
// without merge, and the pool under evaluation.objective: weighted, without and with
// optimizer.shorten) on the conventions simulator
// with a stochastic target whose success probabilities are known exactly (the truth: a skill's
// test score is its exact expected accuracy on the test items, not a noisy sample).
//
// Every arm runs at the same call budget (model.max_calls; a run stops at the step boundary after
// it), on the same seeds, two selection split sizes and the benchmark shapes:
//   standard — one house rule per family (rules never conflict);
//   conflict — env.conventions_shape=conflict: in three families about a third of the items come
//              from a second office that keeps the agent's default convention, so the house rule
//              that helps the head office's items hurts the second office's (docs/search.md);
//   crowded  — env.conventions_shape=crowded: the standard tasks, and a target whose adherence falls
//              as its skill holds more instructions (beyond eight, its lapse grows by 0.04 each), so a
//              restated or vague line costs every family's items (docs/search.md).
//   conflict_crowded — (--shapes conflict_crowded) the conflict shape's tasks read by the crowded target:
//              a scoped rule costs every item once the skill holds eight instructions (docs/search.md).
// Printed per cell: the best skill's true test score (mean ± 95 % interval over seeds), its
// tokens and instructions (list items), test points per 1000 skill tokens, calls actually paid,
// the pool's per-item frontier size at the end, and merges tried/accepted. Prints, does not assert.
//
// Each shape first prints what it allows: the true test score of the skill stating every house rule
// and of an oracle giving each item its family's best rule (docs/search.md). --trace FILE writes,
// per run and checkpoint, the parent's, candidate's and best's true test scores, calls by stage and
// every pool member's recorded and exact selection scores (the diagnosis in docs/search.md is read
// from it); --set key=value (repeatable) is passed to every arm (ablations). --why prints, under each arm,
// where the points between the shape's best skill and the chosen one go: the best skill the run wrote,
// the one an exact chooser on the selection items would take, and how near the runs came (docs/search.md).
//
//   bun bench/search.ts [--seeds 10] [--sizes 12,40] [--budget 600] [--temperature 0.6] [--shapes standard,conflict,crowded] [--why]
//                       [--arms single,pool,pool+merge,pool+merge+weighted,weighted+shorten] [--token-weight 0.1] [--json FILE]
//                       [--trace FILE] [--set key=value]...
import { writeFileSync } from "node:fs";
import { createModelClient } from "../src/backends/index.ts";
import { family, rulesInSkill, type TaskValue } from "../src/backends/sim/conventions.ts";
import { drawConflict, drawHouseRules, taskPrompt } from "../src/benchmarks/conventions/generator.ts";
import { instructionCount, successProbability } from "../src/backends/sim/stochastic.ts";
import { getBenchmark } from "../src/benchmarks/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { type RunCheckpoint, type RunRecorder, train } from "../src/engine/index.ts";
import { itemFrontier } from "../src/engine/search.ts";
import { estimateTokens } from "../src/engine/skill-format.ts";
import { BudgetError } from "../src/lib/index.ts";
import { PROMPTS } from "../src/prompts/index.ts";
import { simContext } from "../test/engine/support.ts";
import { LoadSampler, machineLine } from "./lib/machine.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
};
const seeds = Number(opt("seeds", "10"));
const sizes = opt("sizes", "12,40").split(",").map(Number);
const budget = Number(opt("budget", "600"));
const temperature = Number(opt("temperature", "0.6"));
const shapes = opt("shapes", "standard,conflict,crowded").split(",");
const arms = opt("arms", "single,pool,pool+merge,pool+merge+weighted,weighted+shorten").split(",");
const jsonOut = opt("json", "");
const traceOut = opt("trace", "");
// --why: per cell, where the points between the shape's ceiling and the chosen skill go (docs/search.md).
const why = argv.includes("--why");
// Extra config overrides for every arm (diagnosis runs), e.g. --set optimizer.use_slow_update=false
const extraSets = argv.flatMap((a, i) => (a === "--set" && argv[i + 1] ? [argv[i + 1]!] : []));
const tokenWeight = opt("token-weight", "0.1");
const out = (s: string) => process.stdout.write(`${s}\n`);
/** The task text the target reads (the office a scoped rule names is read from it). */
const taskOf = (it: { [k: string]: unknown }) => taskPrompt(String(it.question), it.value as TaskValue);

const ARM_SETS: Record<string, string[]> = {
  single: ["optimizer.search=single"],
  pool: ["optimizer.search=pool", "optimizer.merge=false"],
  "pool+merge": ["optimizer.search=pool", "optimizer.merge=true"],
  "pool+merge+weighted": [
    "optimizer.search=pool",
    "optimizer.merge=true",
    "evaluation.objective=weighted",
    `evaluation.token_weight=${tokenWeight}`,
  ],
  "weighted+shorten": [
    "optimizer.search=pool",
    "optimizer.merge=true",
    "evaluation.objective=weighted",
    `evaluation.token_weight=${tokenWeight}`,
    "optimizer.shorten=true",
  ],
};

interface Row {
  shape: string;
  size: number;
  arm: string;
  seed: number;
  test: number;
  bestTest: number;
  tokens: number;
  /** Instructions (list items) in best_skill.md: what the crowded target's adherence reads. */
  instructions: number;
  calls: number;
  steps: number;
  frontier: number | null;
  merges: string | null;
  /** --trace: per committed checkpoint, what the run did and the truth of the skills involved. */
  trace?: TraceRow[];
  /** --why: the decomposition of the gap between the shape's ceiling and the chosen skill. */
  why?: WhyRow;
}

/**
 * --why, per run: the true test score of the written skill a perfect chooser on the selection split
 * would take (highest exact expected selection score; the mean of those tied there), the step at which the run first wrote a skill
 * within a point of the seed's scoped ceiling (conflict shape; null when it never did), and how many
 * conflicting families the best written and the chosen skill serve on both offices (the house rule
 * for the head office, the default for Lisbon).
 */
interface WhyRow {
  selPick: number;
  nearStep: number | null;
  servedBest: number;
  servedChosen: number;
}

interface TraceRow {
  kind: string;
  step: number;
  action?: string;
  /** True test score of the step's parent (pool) or current skill (single), of its candidate, and of the run's best after it. */
  parent?: number;
  candidate?: number;
  best: number;
  calls: Record<string, number>;
  /** Per member: its recorded selection score, its exact expected score on the selection items, its true test score. */
  pool?: { origin: string; status: string; sel: number; selTrue: number; test: number; tokens: number }[];
  events?: { kind: string; verdict: string; test?: number }[];
  frontier?: number;
}

async function runOne(shape: string, size: number, arm: string, seed: number): Promise<Row> {
  const crowded = isCrowded(shape);
  const { config } = loadConfig({
    config: "conventions",
    set: [
      "model.backend=sim",
      `train.seed=${seed}`,
      `env.split_seed=${seed}`,
      `env.sim_temperature=${temperature}`,
      `env.val_items=${size}`,
      "env.test_items=200",
      `env.conventions_shape=${shape}`,
      "train.num_epochs=40",
      `model.max_calls=${budget}`,
      ...ARM_SETS[arm]!,
      ...extraSets,
    ],
  });
  const client = await createModelClient(config, { noCache: true });
  const bench = (await getBenchmark("conventions"))!;
  const ctx = simContext(config, client);
  const splits = await bench.loadSplits(ctx);
  const probability = (skill: string, it: (typeof splits.test)[number]) =>
    successProbability(skill, it.value as TaskValue, String(it.expected), temperature, seed, taskOf(it), crowded);
  const known = new Map<string, number>();
  const truth = (skill: string) => {
    let v = known.get(skill);
    if (v === undefined) {
      v = splits.test.reduce((a, it) => a + probability(skill, it), 0) / splits.test.length;
      known.set(skill, v);
    }
    return v;
  };
  const knownSel = new Map<string, number>();
  const selTruth = (skill: string) => {
    let v = knownSel.get(skill);
    if (v === undefined) {
      v = splits.val.reduce((a, it) => a + probability(skill, it), 0) / splits.val.length;
      knownSel.set(skill, v);
    }
    return v;
  };
  const texts = new Map<string, string>();
  let last: RunCheckpoint | undefined;
  let nearStep: number | null = null;
  const allowed = why ? await oracle(shape, seed) : undefined;
  // The seed's best skill of the shape (conflict_crowded: the best that fits; else scoped), less a point.
  const near = allowed ? (allowed.best ?? allowed.scoped) - 0.01 : 1;
  const trace: TraceRow[] = [];
  let prevCalls: Record<string, number> = {};
  let prevCurrent = "";
  const recorder: RunRecorder = {
    resume: () => undefined,
    commit: (cp: RunCheckpoint) => {
      for (const k of cp.skills) texts.set(k.hash, k.text);
      last = cp;
      if (why && nearStep === null && cp.skills.some((k) => truth(k.text) >= near)) nearStep = cp.state.lastStep;
      if (!traceOut) return;
      const now: Record<string, number> = {};
      for (const [k, v] of Object.entries(client.snapshot().by_stage)) now[k] = v.calls - (prevCalls[k] ?? 0);
      prevCalls = Object.fromEntries(Object.entries(client.snapshot().by_stage).map(([k, v]) => [k, v.calls]));
      const st = cp.state;
      const t = (h: string | undefined) => (h && texts.has(h) ? truth(texts.get(h)!) : undefined);
      const rec = (cp as { record?: { action?: string; candidate_hash?: string } }).record;
      const pool = st.pool;
      const stepLog = pool?.log.find((l) => l.step === st.lastStep && l.kind === "step");
      trace.push({
        kind: cp.kind,
        step: st.lastStep,
        action: rec?.action,
        parent: t(stepLog?.parents[0] ?? prevCurrent),
        candidate: t(rec?.candidate_hash),
        best: t(st.best.hash)!,
        calls: now,
        pool: pool?.entries.map((e) => ({
          origin: e.origin,
          status: e.status,
          sel: e.score,
          selTrue: selTruth(texts.get(e.hash) ?? ""),
          test: t(e.hash)!,
          tokens: e.tokens,
        })),
        events: pool?.log
          .filter((l) => l.step === st.lastStep)
          .map((l) => ({ kind: l.kind, verdict: l.verdict, test: t(l.hash) })),
        frontier: pool ? itemFrontier(st, { metric: "hard", mixedWeight: 0 }).size : undefined,
      });
      prevCurrent = st.current.hash;
    },
  };
  // The bestTest ceiling: the best true test score of any skill the run wrote.
  const ceiling = () => Math.max(...[...texts.values()].map(truth));
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
    const bestTest = ceiling();
    const whyRow = (): WhyRow => {
      const written = [...texts.values()];
      const byTest = written.reduce((a, b) => (truth(b) > truth(a) ? b : a));
      // Skills the selection items cannot tell apart (the same exact expected score) count at their mean.
      const top = Math.max(...written.map(selTruth));
      const bySel = written.filter((k) => selTruth(k) >= top - 1e-9);
      const served = servesBoth(seed);
      return {
        selPick: mean(bySel.map(truth)),
        nearStep,
        servedBest: served(byTest),
        servedChosen: served(r.bestSkill),
      };
    };
    return {
      shape,
      size,
      arm,
      seed,
      test: truth(r.bestSkill),
      bestTest,
      tokens: estimateTokens(r.bestSkill),
      instructions: instructionCount(r.bestSkill),
      calls: s.calls.total,
      steps: s.steps,
      frontier: s.search?.pool ? s.search.pool.filter((p) => p.items_best > 0).length : null,
      merges: s.search?.merges ? `${s.search.merges.accepted}/${s.search.merges.tried}` : null,
      ...(traceOut ? { trace } : {}),
      ...(why ? { why: whyRow() } : {}),
    };
  } catch (err) {
    // Until bafb23b a cap met inside an epoch boundary ended train() with a BudgetError; it is a
    // budget stop now. Kept as a guard: should one escape, the run's result is its last commit.
    if (!(err instanceof BudgetError) || !last) throw err;
    const best = texts.get(last.state.best.hash)!;
    const pool = last.state.pool;
    return {
      shape,
      size,
      arm,
      seed,
      test: truth(best),
      bestTest: ceiling(),
      tokens: estimateTokens(best),
      instructions: instructionCount(best),
      calls: client.snapshot().calls,
      steps: last.state.lastStep,
      frontier: pool ? itemFrontier(last.state, { metric: "hard", mixedWeight: 0 }).size : null,
      merges: pool
        ? `${pool.log.filter((l) => l.kind === "merge" && l.verdict === "accept").length}/${pool.log.filter((l) => l.kind === "merge" && l.hash).length}`
        : null,
    };
  } finally {
    await client.close();
  }
}

/** What a shape allows on a seed's test items (oracle below); the last three on conflict_crowded only. */
interface Allowed {
  house: number;
  scoped: number;
  routed: number;
  restated: number;
  leanScoped?: number;
  best?: number;
  bestInstr?: number;
}

/** Shapes whose simulated target is the crowded one. */
const isCrowded = (shape: string) => shape === "crowded" || shape === "conflict_crowded";

/** How many of a seed's conflicting families a skill serves on both offices (0 off the conflict shape). */
function servesBoth(seed: number): (skill: string) => number {
  const rules = drawHouseRules(seed);
  const fams = drawConflict(seed, rules).families;
  return (skill) => {
    const head = rulesInSkill(skill, "For the head office: x");
    const lisbon = rulesInSkill(skill, "For the Lisbon office: x");
    return fams.filter(
      (f) =>
        head.get(f)?.convention.id === rules[f] &&
        (lisbon.get(f)?.convention.id ?? family(f).defaultConvention) === family(f).defaultConvention,
    ).length;
  };
}

/**
 * What the shape allows, on a seed's 200 test items: the skill that states every house rule (the
 * best with general rules only), the same skill with each conflicting family's second-office rule
 * scoped to that office (the best skill for a target that follows scoped rules, and confuses their
 * scope at SCOPE_SLIP), and an oracle that gives each item whichever rule of its family answers it
 * best with no confusion; for the crowded shape, the house skill with every rule restated once (16
 * instructions, as a slow update's guidance block restates them). All exact, from the simulator's probabilities.
 */
async function oracle(shape: string, seed: number): Promise<Allowed> {
  const crowded = isCrowded(shape);
  const { config } = loadConfig({
    config: "conventions",
    set: [
      "model.backend=sim",
      `env.split_seed=${seed}`,
      `env.sim_temperature=${temperature}`,
      "env.test_items=200",
      `env.conventions_shape=${shape}`,
    ],
  });
  const client = await createModelClient(config, { noCache: true });
  try {
    const bench = (await getBenchmark("conventions"))!;
    const splits = await bench.loadSplits(simContext(config, client));
    const rules = drawHouseRules(seed);
    const line = (fid: TaskValue["kind"], id: string) =>
      `- **${family(fid).title}:** ${family(fid).conventions.find((c) => c.id === id)!.statements[0]}`;
    const house = (Object.keys(rules) as TaskValue["kind"][]).map((f) => line(f, rules[f])).join("\n");
    const exceptions =
      shape === "conflict" || shape === "conflict_crowded"
        ? drawConflict(seed, rules).families.map(
            (f) =>
              `- **${family(f).title}, Lisbon office only:** ${family(f).conventions.find((c) => c.id === family(f).defaultConvention)!.statements[0]}`,
          )
        : [];
    const scoped = [house, ...exceptions].join("\n");
    const p = (skill: string, it: (typeof splits.test)[number]) =>
      successProbability(skill, it.value as TaskValue, String(it.expected), temperature, seed, taskOf(it), crowded);
    const restated = `${house}\n${house}`;
    let h = 0;
    let sc = 0;
    let r = 0;
    let re = 0;
    for (const it of splits.test) {
      const v = it.value as TaskValue;
      h += p(house, it);
      re += p(restated, it);
      sc += p(scoped, it);
      r += Math.max(...family(v.kind).conventions.map((c) => p(line(v.kind, c.id), it)));
    }
    const n = splits.test.length;
    const allowed: Allowed = { house: h / n, scoped: sc / n, routed: r / n, restated: re / n };
    if (shape !== "conflict_crowded") return allowed;
    // The crowded target pays for every line beyond eight: the best skill of house rules (all, or
    // only those that differ from the agent's default) and any subset of the office's scoped rules.
    const lean = (Object.keys(rules) as TaskValue["kind"][])
      .filter((f) => rules[f] !== family(f).defaultConvention)
      .map((f) => line(f, rules[f]))
      .join("\n");
    const score = (skill: string) => splits.test.reduce((a, it) => a + p(skill, it), 0) / n;
    let best = { score: -1, instructions: 0 };
    for (const base of [house, lean])
      for (let mask = 0; mask < 1 << exceptions.length; mask++) {
        const skill = [base, ...exceptions.filter((_, i) => mask & (1 << i))].join("\n");
        const s = score(skill);
        if (s > best.score) best = { score: s, instructions: instructionCount(skill) };
      }
    return {
      ...allowed,
      leanScoped: score([lean, ...exceptions].join("\n")),
      best: best.score,
      bestInstr: best.instructions,
    };
  } finally {
    await client.close();
  }
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const ci95 = (xs: readonly number[]) => {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return (1.96 * Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1))) / Math.sqrt(xs.length);
};

out(`${machineLine()}, bun ${Bun.version}`);
out(
  `search bench: conventions on the stochastic simulator (env.sim_temperature=${temperature}), ${seeds} seeds per cell, 200 test items, call budget ${budget} per run (model.max_calls; the step in flight finishes)`,
);
out(
  "test = true test accuracy of best_skill.md (exact probabilities); ceiling = best true test of any skill the run wrote;",
);
out(
  "test/ktok = test points per 1000 skill tokens; frontier = pool members best on ≥1 selection item at the end; merges = accepted/tried;",
);
out(
  "Δ single = the arm's test minus single's on the same seed (mean ± 95 % interval over seeds; needs the single arm first);",
);
out("instr = instructions (list items) in best_skill.md, what the crowded target's adherence reads;");
out("short = seeds whose best_skill.md is ≥ 30 % shorter than single's and within 1 point of its true test score");
const rows: Row[] = [];
const t0 = performance.now();
for (const shape of shapes) {
  const o: Allowed[] = [];
  for (let seed = 1; seed <= seeds; seed++) o.push(await oracle(shape, seed));
  const pc = (f: (x: (typeof o)[number]) => number) => (100 * mean(o.map(f))).toFixed(1);
  out(
    shape === "crowded"
      ? `\ncrowded: the skill stating every house rule (8 instructions) scores ${pc((x) => x.house)} on test; with every rule restated once (16 instructions, as a slow update's block restates them) ${pc((x) => x.restated)}`
      : `\n${shape}: the skill stating every house rule scores ${pc((x) => x.house)} on test; with the second office's rules scoped to it ${pc((x) => x.scoped)}; an oracle routing each item to its best rule ${pc((x) => x.routed)}`,
  );
  if (shape === "conflict_crowded")
    out(
      `  crowded: only the house rules that differ from the default, with the scoped rules, ${pc((x) => x.leanScoped!)}; the best of those skills (all or only differing house rules, any subset of the scoped ones) ${pc((x) => x.best!)} at ${mean(o.map((x) => x.bestInstr!)).toFixed(1)} instructions`,
    );
  for (const size of sizes) {
    const load = new LoadSampler();
    out(`\n${shape}, ${size} selection items`);
    out(
      "  arm                    test            Δ single     ceiling  tokens  instr  test/ktok  calls  steps  frontier  merges  short",
    );
    const singleOf = new Map<number, number>();
    const singleTokens = new Map<number, number>();
    for (const arm of arms) {
      const cell: Row[] = [];
      for (let seed = 1; seed <= seeds; seed++) {
        load.sample();
        cell.push(await runOne(shape, size, arm, seed));
      }
      rows.push(...cell);
      if (arm === "single")
        for (const r of cell) {
          singleOf.set(r.seed, r.test);
          singleTokens.set(r.seed, r.tokens);
        }
      // Seeds whose best_skill.md is at least 30 % shorter than single's and within 1 point (true test) of it.
      const shorter = cell.filter(
        (r) =>
          singleOf.has(r.seed) && r.tokens <= 0.7 * singleTokens.get(r.seed)! && r.test >= singleOf.get(r.seed)! - 0.01,
      ).length;
      const paired = cell.filter((r) => singleOf.has(r.seed)).map((r) => r.test - singleOf.get(r.seed)!);
      const delta =
        arm !== "single" && paired.length
          ? `${(100 * mean(paired) >= 0 ? "+" : "") + (100 * mean(paired)).toFixed(1)} ± ${(100 * ci95(paired)).toFixed(1)}`
          : "–";
      const f = cell.filter((r) => r.frontier !== null).map((r) => r.frontier!);
      const merged = cell.filter((r) => r.merges !== null).map((r) => r.merges!.split("/").map(Number));
      const pct = (xs: number[]) => (100 * mean(xs)).toFixed(1).padStart(5);
      const cols = [
        arm.padEnd(21),
        `${pct(cell.map((r) => r.test))} ± ${(100 * ci95(cell.map((r) => r.test))).toFixed(1).padStart(4)}`,
        delta.padEnd(11),
        ` ${pct(cell.map((r) => r.bestTest))}`,
        mean(cell.map((r) => r.tokens))
          .toFixed(0)
          .padStart(6),
        mean(cell.map((r) => r.instructions))
          .toFixed(1)
          .padStart(5),
        mean(cell.map((r) => (100 * r.test * 1000) / r.tokens))
          .toFixed(0)
          .padStart(9),
        mean(cell.map((r) => r.calls))
          .toFixed(0)
          .padStart(6),
        mean(cell.map((r) => r.steps))
          .toFixed(1)
          .padStart(5),
        f.length ? mean(f).toFixed(1).padStart(8) : "       –",
        merged.length
          ? `${mean(merged.map((m) => m[0]!)).toFixed(1)}/${mean(merged.map((m) => m[1]!)).toFixed(1)}`
          : "–",
        arm === "single" ? "    –" : `${shorter}/${cell.length}`.padStart(5),
      ];
      out(`  ${cols.join("  ")}`);
      if (why) {
        const w = cell.filter((r) => r.why).map((r) => r.why!);
        const reached = w.filter((x) => x.nearStep !== null).map((x) => x.nearStep!);
        out(
          `    why: best written ${pct(cell.map((r) => r.bestTest))}, picked on exact selection ${pct(w.map((x) => x.selPick))}, chosen ${pct(cell.map((r) => r.test))};` +
            ` within 1 of the shape's best skill ${reached.length}/${w.length} (first at step ${reached.length ? mean(reached).toFixed(1) : "–"});` +
            ` families served both offices: best written ${mean(w.map((x) => x.servedBest)).toFixed(1)}, chosen ${mean(w.map((x) => x.servedChosen)).toFixed(1)}`,
        );
      }
    }
    out(`  (${load.text()})`);
  }
}
out(`\n${rows.length} runs in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
if (traceOut) writeFileSync(traceOut, `${JSON.stringify(rows)}\n`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ temperature, seeds, sizes, budget, rows }, null, 1)}\n`);
