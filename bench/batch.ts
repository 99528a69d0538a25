/**
 * What model.batch saves and what it costs in time, on a SearchQA-shaped run (single-turn QA, a
 * 40-item training batch, a selection split, and a test split much larger than training, as in the
 * SearchQA protocol) through the CLI against the fake OpenAI server with its Batch API, answers from
 * the simulator (the same for live and batch calls).
 *
 *   bun bench/batch.ts [--test-items 400] [--train-items 80] [--seed 7]
 *
 * Provider time is simulated, not waited for: a live call takes 2 s, so a run's live wall is its
 * critical path (bench/lib/plan-bound.ts: dependent rounds from the config and the run's decisions)
 * × 2 s; each batch completes 5–30 min after submission (seeded), on the fake's clock, which moves a
 * full hour per poll so the bench itself never waits. A round that went through a batch costs its
 * batch's delay instead of its live rounds; batches submitted together overlap.
 * Prints cost (live vs model.batch=eval vs all), simulated wall (whole run and training part), the
 * calls paid twice, and whether the scores are identical; then the machine and its load.
 */
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../test/support/fake-openai.ts";
import { simReply } from "../test/support/sim-fake.ts";
import { runMeasured } from "./lib/cli.ts";
import { machineLine } from "./lib/machine.ts";
import { planBound } from "./lib/plan-bound.ts";

const { values } = parseArgs({
  options: {
    "test-items": { type: "string", default: "400" },
    "train-items": { type: "string", default: "80" },
    seed: { type: "string", default: "7" },
  },
});
const LIVE_S = 2;
const MIN = 60_000;
const testItems = Number(values["test-items"]);
const trainItems = Number(values["train-items"]);
let state = Number(values.seed) >>> 0;
const rand = () => {
  state = (state * 1664525 + 1013904223) >>> 0;
  return state / 2 ** 32;
};

const work = mkdtempSync(join(tmpdir(), "skillopt-bench-batch-"));
// One fake provider per mode: a batch of the same requests left by an earlier mode's run would
// otherwise be found and adopted (as it would be for a user), hiding that mode's own waits.
const startServer = () =>
  startFakeOpenAI({
    reply: simReply(),
    batch: { completionMs: () => Math.round((5 + 25 * rand()) * MIN), advancePerPollMs: 60 * MIN },
  });

const WORKERS = 24;
function args(out: string, mode: string, url: string): string[] {
  const set = (k: string, v: string | number) => ["--set", `${k}=${v}`];
  return [
    "train",
    "--config",
    "quickstart",
    "--out",
    out,
    "--json",
    ...set("model.backend", "openai_compatible"),
    ...set("model.openai_compatible_base_url", url),
    ...set("model.target", "gpt-4o-mini"),
    ...set("model.optimizer", "gpt-4o-mini"),
    ...set("model.batch", mode),
    ...set("model.batch_poll_seconds", 0.01),
    ...set("env.train_items", trainItems),
    ...set("env.val_items", 40),
    ...set("env.test_items", testItems),
    ...set("env.workers", WORKERS),
    ...set("train.batch_size", 40),
    ...set("train.num_epochs", 1),
    ...set("gradient.minibatch_size", 8),
    ...set("gradient.merge_batch_size", 8),
  ];
}

interface Row {
  mode: string;
  cost: number;
  hard: unknown;
  wallAll: number;
  wallTrain: number;
  paidTwice: number;
  batches: number;
  realS: number;
  /** Bytes the process wrote (dirtied pages, /usr/bin/time) per model call, cached ones included. */
  bytesPerCall: number | null;
}

const rows: Row[] = [];
for (const mode of ["off", "eval", "all"]) {
  const out = join(work, mode);
  await using server = await startServer();
  const r = await runMeasured(args(out, mode, server.url), {
    OPENAI_COMPATIBLE_API_KEY: "sk-bench",
    SKILLOPT_CACHE_DIR: join(work, `cache-${mode}`),
  });
  if (r.code !== 0) throw new Error(`train with model.batch=${mode} failed (exit ${r.code}): ${r.stderr.slice(-800)}`);
  const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Record<string, unknown>;
  const calls = (summary.calls as { total: number }).total;
  const bound = planBound(out, { targetWorkers: WORKERS, optimizerWorkers: 8, mergeBatch: 8 });
  const mine = server.batch.batches;
  // Batches submitted at the same moment of the fake's clock ran side by side: a wave costs its slowest.
  const waves = new Map<number, number>();
  for (const b of mine) waves.set(b.created_ms, Math.max(waves.get(b.created_ms) ?? 0, b.complete_ms - b.created_ms));
  const batchS = [...waves.values()].reduce((a, b) => a + b, 0) / 1000;
  const trainRounds = bound.parts.baseline + bound.parts.steps + bound.parts.boundaries;
  const wallTrain =
    mode === "all"
      ? batchS - (mine.length && bound.parts.final ? Math.max(...[...waves.values()].slice(-1)) / 1000 : 0)
      : trainRounds * LIVE_S;
  const wallAll =
    mode === "off"
      ? (trainRounds + bound.parts.final) * LIVE_S
      : mode === "eval"
        ? trainRounds * LIVE_S + batchS
        : batchS;
  rows.push({
    mode,
    cost: Number(summary.cost_usd),
    hard: [
      (summary.baseline as { test?: unknown })?.test,
      (summary.best as { test?: unknown })?.test,
      (summary.final as { test?: unknown })?.test,
    ].join("/"),
    wallAll,
    wallTrain,
    paidTwice: paidTwice(join(out, "state.sqlite"), join(work, `cache-${mode}`, "calls.sqlite")),
    batches: mine.length,
    realS: r.wallS,
    bytesPerCall: r.bytesWritten === null ? null : r.bytesWritten / calls,
  });
}

const live = rows[0]!;
const fmtT = (s: number) =>
  s >= 3600 ? `${(s / 3600).toFixed(1)} h` : s >= 60 ? `${(s / 60).toFixed(1)} min` : `${s.toFixed(0)} s`;
const lines = [
  `model.batch on a SearchQA-shaped run (conventions on the simulator through the fake OpenAI server: ${trainItems} train, 40 selection, ${testItems} test items; batch 40, 1 epoch; gpt-4o-mini prices, batch column 50 %)`,
  `live call 2 s (critical path from the run's decisions), batch completion 5–30 min (seed ${values.seed}); simulated, nothing waited for`,
  "",
  "mode   cost ($)   vs live   wall (whole run)   wall (training part)   batches   calls paid twice   test baseline/best/final   KB written/call   (bench real s)",
  ...rows.map(
    (r) =>
      `${r.mode.padEnd(6)} ${r.cost.toFixed(4).padStart(8)}   ${`${((100 * r.cost) / live.cost).toFixed(0)} %`.padStart(7)}   ${fmtT(r.wallAll).padStart(16)}   ${fmtT(r.wallTrain).padStart(20)}   ${String(r.batches).padStart(7)}   ${String(r.paidTwice).padStart(16)}   ${String(r.hard).padStart(25)}   ${(r.bytesPerCall === null ? "—" : (r.bytesPerCall / 1024).toFixed(1)).padStart(15)}   ${r.realS.toFixed(1)}`,
  ),
  "",
  `aim: model.batch=eval ≤ 60 % of live cost → ${((100 * rows[1]!.cost) / live.cost).toFixed(0)} % (${rows[1]!.cost / live.cost <= 0.6 ? "met" : "NOT met"}); training part's wall unchanged → ${rows[1]!.wallTrain === live.wallTrain ? "yes" : "NO"}; calls paid twice → ${rows.reduce((n, r) => n + r.paidTwice, 0)}; scores identical → ${rows.every((r) => JSON.stringify(r.hard) === JSON.stringify(live.hard)) ? "yes" : "NO"}`,
  machineLine(),
];
process.stdout.write(`${lines.join("\n")}\n`);
rmSync(work, { recursive: true, force: true });

/** Paid calls of one cache key recorded more than once in the run's ledger, plus batch requests answered in two batches. */
function paidTwice(runDb: string, cacheDb: string): number {
  const run = new Database(runDb, { readonly: true });
  const cache = new Database(cacheDb, { readonly: true });
  try {
    const ledger = (
      run
        .query(
          "SELECT COUNT(*) AS n FROM (SELECT cache_key FROM call_ledger WHERE cached = 0 AND status != 'error' AND cache_key IS NOT NULL GROUP BY cache_key HAVING COUNT(*) > 1)",
        )
        .get() as { n: number }
    ).n;
    const hasBatches = cache.query("SELECT name FROM sqlite_master WHERE name = 'call_batch_items'").get();
    const batch = hasBatches
      ? (
          cache
            .query(
              "SELECT COUNT(*) AS n FROM (SELECT key FROM call_batch_items WHERE state = 'answered' GROUP BY key HAVING COUNT(*) > 1)",
            )
            .get() as { n: number }
        ).n
      : 0;
    return ledger + batch;
  } finally {
    run.close();
    cache.close();
  }
}
