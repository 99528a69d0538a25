// Wall time of a 4-epoch conventions run on the simulator with a fixed latency per call, against
// the critical-path bound of its dependent rounds, and total calls against the count spec §2.17
// predicts from the run's own step records.
//
//   bun bench/train.ts [--latency 200] [--epochs 4] [--no-early]
import { createModelClient } from "../src/backends/index.ts";
import { createSimBackend } from "../src/backends/sim/index.ts";
import type { ChatBackend } from "../src/backends/types.ts";
import { getBenchmark } from "../src/benchmarks/index.ts";
import { loadConfig } from "../src/config/index.ts";
import { firstN, mergeCallsFor, type RunCheckpoint, type RunRecorder, train } from "../src/engine/index.ts";
import type { Role } from "../src/engine/ports.ts";
import { PROMPTS } from "../src/prompts/index.ts";
import { simContext } from "../test/engine/support.ts";

const argv = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : dflt;
};
const latency = Number(opt("latency", "200"));
const epochs = Number(opt("epochs", "4"));
const early = !argv.includes("--no-early");

const { config } = loadConfig({
  config: "conventions",
  set: [`model.backend=sim`, `model.sim_latency_ms=${latency}`, `train.num_epochs=${epochs}`, `evaluation.early_reject=${early}`],
});

interface Span {
  role: Role;
  start: number;
  end: number;
}
const spans: Span[] = [];
const timed = (role: Role): ChatBackend => {
  const inner = createSimBackend(role, config);
  return {
    ...inner,
    async complete(req, o) {
      const start = performance.now();
      try {
        return await inner.complete(req, o);
      } finally {
        spans.push({ role, start, end: performance.now() });
      }
    },
  };
};

const client = await createModelClient(config, { noCache: true, backends: { optimizer: timed("optimizer"), target: timed("target") } });
const workers: Record<Role, number> = { optimizer: config.gradient.analyst_workers, target: config.env.workers ?? 8 };
const bench = (await getBenchmark("conventions"))!;
const ctx = simContext(config, client);
const splits = await bench.loadSplits(ctx);
const records: Record<string, unknown>[] = [];
const boundaries: Record<string, unknown>[] = [];
const recorder: RunRecorder = {
  resume: () => undefined,
  commit(cp: RunCheckpoint) {
    if (cp.kind === "step" && cp.record) records.push(cp.record);
    if (cp.kind === "boundary" && cp.record) boundaries.push(cp.record);
  },
};
const t0 = performance.now();
const { summary } = await train({ cfg: config, bench, ctx, splits, initialSkill: bench.initialSkill, prompts: PROMPTS, recorder, accounting: client, events: { emit: () => {} }, clock: { now: () => Date.now() } });
const wall = (performance.now() - t0) / 1000;
await client.close();

// Dependent rounds: maximal busy periods (a call that starts after every earlier call has ended
// opens a new round). Each round needs at least ceil(calls / workers) latencies.
spans.sort((a, b) => a.start - b.start);
let bound = 0;
let rounds = 0;
let i = 0;
while (i < spans.length) {
  let end = spans[i]!.end;
  const count: Record<Role, number> = { optimizer: 0, target: 0 };
  while (i < spans.length && spans[i]!.start < end - 1) {
    count[spans[i]!.role] += 1;
    end = Math.max(end, spans[i]!.end);
    i++;
  }
  rounds++;
  bound += Math.max(Math.ceil(count.optimizer / workers.optimizer), Math.ceil(count.target / workers.target)) * (latency / 1000);
}

// Spec §2.17 from the run's own records (F/S per batch, patches, merged items, budget).
const M = config.gradient.minibatch_size;
const b = config.gradient.merge_batch_size;
const V = firstN(splits.val, config.evaluation.sel_env_num).length;
let predicted = V;
for (const r of records) {
  const n = Number(r.rollout_n);
  const fails = Math.round(n * (1 - Number(r.rollout_hard)));
  const succ = config.gradient.failure_only ? 0 : n - fails;
  const fp = Number(r.n_failure_patches ?? 0);
  const sp = Number(r.n_success_patches ?? 0);
  predicted += n + Math.ceil(fails / M) + Math.ceil(succ / M);
  if (fp + sp > 0) predicted += mergeCallsFor(fp, b) + mergeCallsFor(sp, b) + (fp > 0 && sp > 0 ? 1 : 0);
  if (r.edit_budget !== null && Number(r.n_edits_merged) > Number(r.edit_budget)) predicted += 1;
  if (typeof r.candidate_hash === "string" && !String(r.action).startsWith("skip") && r.action !== "reject_format" && !r.selection_cache_hit) predicted += V;
}
const slowN = Math.min(config.optimizer.slow_update_samples, splits.train.length);
for (const br of boundaries) {
  const slow = br.slow_update as { action?: string; candidate_hash?: string } | undefined;
  if (!br.pairs) continue;
  predicted += 2 * slowN + (config.optimizer.use_slow_update ? 1 : 0) + (config.optimizer.use_meta_skill ? 1 : 0);
  if (slow?.candidate_hash) predicted += V;
}
const hashes = summary as { baseline: { hash: string }; best: { hash: string }; final: { hash: string } };
predicted += new Set([hashes.baseline.hash, hashes.best.hash, hashes.final.hash]).size * firstN(splits.test, config.evaluation.test_env_num).length;
const calls = (summary.calls as { total: number }).total;
const saved = Number(summary.selection_calls_saved);

console.log(`conventions, ${epochs} epochs, sim latency ${latency} ms, workers optimizer=${workers.optimizer} target=${workers.target}, early rejection ${early ? "on" : "off"}`);
console.log(`wall time            ${wall.toFixed(2)} s`);
console.log(`critical-path bound  ${bound.toFixed(2)} s over ${rounds} dependent rounds`);
console.log(`ratio                ${(wall / bound).toFixed(3)} (aim ≤ 1.15)`);
const reused = Number(summary.rollouts_reused ?? 0);
console.log(`calls                ${calls} (spec §2.17 predicts ${predicted} from the run's records; minus ${saved} saved by early rejection and ${reused} identical rollouts reused = ${predicted - saved - reused})`);
console.log(`early rejection      ${saved} selection calls saved`);
console.log(`scores               baseline ${(summary.baseline as { selection: number }).selection} → best ${(summary.best as { selection: number }).selection} (selection)`);
