#!/usr/bin/env bun
/**
 * Kill the quickstart with SIGKILL at seeded random moments, resume it with --resume, and compare
 * the result with an uninterrupted run: history.jsonl (minus timings and call counters, which
 * legitimately differ), every gate decision, and every other derived file byte for byte
 * (best_skill.md, skills/, steps.jsonl). Re-paid calls are keys paid twice in the run's call ledger, and
 * calls paid after the kill whose answer was on disk when it happened (in the cache's table or its
 * side file): a completed call must be served from the cache after a resume. Also the paid calls in the resumed run's
 * ledger against the uninterrupted run's (a paid call whose ledger row a kill lost is counted on the resume from its
 * cache answer's paid mark; with several workers a kill can also change which calls a step pays for). `--set key=value` (repeatable) is
 * passed to every run, e.g. `--set optimizer.step_buffer_window=2` to resume from folded state.
 * Run: bun bench/kill-resume.ts [--trials 20] [--seed 7] [--latency-ms 3] [--set key=value]...
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stableHistory } from "./lib/history.ts";
import { mulberry32 } from "../src/lib/index.ts";

const REPO = join(import.meta.dir, "..");
const flag = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const TRIALS = flag("trials", 20);
const SEED = flag("seed", 7);
const LATENCY = flag("latency-ms", 3);
const SETS = process.argv.flatMap((a, i) =>
  a === "--set" && process.argv[i + 1] ? ["--set", process.argv[i + 1]!] : [],
);

/** The run folder's derived files compared byte for byte: best_skill.md, skills/ and steps.jsonl (steps/ too, were one written). */
function derivedFiles(out: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    const abs = join(out, rel);
    if (!existsSync(abs)) return;
    if (statSync(abs).isDirectory()) for (const name of readdirSync(abs).sort()) walk(join(rel, name));
    else files.set(rel, readFileSync(abs, "utf8"));
  };
  for (const rel of ["best_skill.md", "skills", "steps.jsonl", "steps"]) walk(rel);
  return files;
}

/** The first derived file that is missing, extra or different, or undefined when all match. */
function derivedDifference(ref: Map<string, string>, got: Map<string, string>): string | undefined {
  for (const [rel, text] of ref) {
    if (!got.has(rel)) return `${rel} is missing`;
    if (got.get(rel) !== text) return `${rel} differs`;
  }
  for (const rel of got.keys()) if (!ref.has(rel)) return `${rel} is extra`;
  return undefined;
}

/** First path at which two JSON values differ, for the failure report. */
function firstDifference(a: unknown, b: unknown, path = ""): string | undefined {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = firstDifference(
        (a as Record<string, unknown>)[k],
        (b as Record<string, unknown>)[k],
        `${path}${Array.isArray(a) ? `[${k}]` : `.${k}`}`,
      );
      if (d) return d;
    }
  }
  return `${path}: ${JSON.stringify(a)?.slice(0, 80)} vs ${JSON.stringify(b)?.slice(0, 80)}`;
}

function decisions(out: string): string[] {
  return (stableHistory(out) as { step: number; action: string }[]).map((r) => `${r.step}:${r.action}`);
}

function repaid(out: string): number {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    if (!db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_ledger'").get()) return 0;
    const row = db
      .query(
        "SELECT COALESCE(SUM(n - 1), 0) AS extra FROM (SELECT cache_key, COUNT(*) AS n FROM call_ledger WHERE cached = 0 AND status = 'ok' AND cache_key IS NOT NULL GROUP BY cache_key HAVING n > 1)",
      )
      .get() as { extra: number };
    return row.extra;
  } finally {
    db.close();
  }
}

/** Paid calls (not served from the cache) in a run's ledger. */
function paidCalls(out: string): number {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    if (!db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_ledger'").get()) return 0;
    return (db.query("SELECT COUNT(*) AS n FROM call_ledger WHERE cached = 0").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/**
 * Keys of the answers a call cache holds on disk: its table's rows and those still in the side
 * files of the processes that wrote it (src/store/journal.ts), as a kill -9 leaves them.
 */
function answerKeysOnDisk(cacheDir: string): Set<string> {
  const keys = new Set<string>();
  const file = join(cacheDir, "calls.sqlite");
  if (existsSync(file)) {
    const db = new Database(file, { readonly: true });
    try {
      if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_cache'").get())
        for (const r of db.query("SELECT key FROM call_cache").all() as { key: string }[]) keys.add(r.key);
      if (db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_answers'").get())
        for (const r of db.query("SELECT lower(hex(key)) AS key FROM call_answers").all() as { key: string }[])
          keys.add(r.key);
    } finally {
      db.close();
    }
  }
  for (const name of existsSync(cacheDir) ? readdirSync(cacheDir) : []) {
    if (!name.startsWith("calls.sqlite.pending-")) continue;
    for (const line of readFileSync(join(cacheDir, name), "utf8").split("\n")) {
      try {
        // An answer's line is ["c", key, …] (src/store/journal.ts); earlier versions wrote {t: "cache", key}.
        const row = JSON.parse(line) as unknown;
        if (Array.isArray(row) && row[0] === "c" && typeof row[1] === "string") keys.add(row[1]);
        const obj = row as { t?: string; key?: string } | null;
        if (obj && !Array.isArray(obj) && obj.t === "cache" && obj.key) keys.add(obj.key);
      } catch {
        // an empty or torn line
      }
    }
  }
  return keys;
}

/** Calls paid after `since` (ms epoch) whose answer was already on disk: a completed call paid again. */
function paidAgain(out: string, since: number, onDisk: Set<string>): number {
  if (onDisk.size === 0) return 0;
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    if (!db.query("SELECT 1 FROM sqlite_master WHERE name = 'call_ledger'").get()) return 0;
    const rows = db
      .query("SELECT cache_key FROM call_ledger WHERE cached = 0 AND cache_key IS NOT NULL AND at > ?")
      .all(since) as { cache_key: string }[];
    return rows.filter((r) => onDisk.has(r.cache_key)).length;
  } finally {
    db.close();
  }
}

interface Run {
  code: number;
  stderr: string;
  ms: number;
}

async function train(
  args: string[],
  env: Record<string, string>,
  killAfterMs?: number,
): Promise<Run & { killed: boolean }> {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(REPO, "src", "main.ts"), "train", ...args], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  let killed = false;
  const timer =
    killAfterMs === undefined
      ? undefined
      : setTimeout(() => {
          killed = true;
          proc.kill("SIGKILL");
        }, killAfterMs);
  const stderr = await new Response(proc.stderr).text();
  const code = await proc.exited;
  if (timer) clearTimeout(timer);
  return { code, stderr, ms: performance.now() - started, killed: killed && code !== 0 };
}

function phaseOf(stderr: string): string {
  const lines = stderr.trim().split("\n").filter(Boolean);
  const last = (lines[lines.length - 1] ?? "").toLowerCase();
  if (/step\s+\d+.*done|commit|saved/.test(last)) return "state commit";
  if (/baseline/.test(last)) return "baseline";
  if (/\[\d\/6 rollout/.test(last)) return "rollouts";
  if (/\[\d\/6 (reflect|aggregate|select)/.test(last)) return "reflection";
  if (/\[\d\/6 (update|evaluate)|gate/.test(last)) return "gate";
  if (/slow update|meta skill|epoch/.test(last)) return "epoch boundary";
  if (/^\s*test\b|\btest [0-9a-f]{8}/.test(last)) return "final test";
  return lines.length <= 8 ? "startup" : `other (${last.trim().slice(0, 40)})`;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-kill-resume-"));
  const base = [
    "--config",
    "quickstart",
    "--set",
    "model.backend=sim",
    "--set",
    `model.sim_latency_ms=${LATENCY}`,
    ...SETS,
  ];
  const refOut = join(root, "ref");
  const ref = await train([...base, "--out", refOut], { SKILLOPT_CACHE_DIR: join(root, "cache-ref") });
  if (ref.code !== 0) throw new Error(`reference run failed (exit ${ref.code}):\n${ref.stderr}`);
  const refDerived = derivedFiles(refOut);
  const refHistory = JSON.stringify(stableHistory(refOut));
  const refDecisions = decisions(refOut).join(",");
  const refPaid = paidCalls(refOut);
  console.log(
    `reference: ${(ref.ms / 1000).toFixed(1)} s, ${decisions(refOut).length} steps, ${refDerived.size} derived files${SETS.length ? ` (${SETS.filter((a) => a !== "--set").join(", ")})` : ""}`,
  );

  const rand = mulberry32(SEED);
  let identical = 0;
  let killedTrials = 0;
  let totalRepaid = 0;
  let samePaid = 0;
  const phases: Record<string, number> = {};
  const failures: string[] = [];
  for (let i = 0; i < TRIALS; i++) {
    const out = join(root, `run-${i}`);
    const env = { SKILLOPT_CACHE_DIR: join(root, `cache-${i}`) };
    const at = Math.round((0.03 + 0.9 * rand()) * ref.ms);
    const first = await train([...base, "--out", out], env, at);
    // What the killed run left on disk: a resume must serve every one of these from the cache.
    const keptAt = Date.now();
    const kept = first.killed ? answerKeysOnDisk(env.SKILLOPT_CACHE_DIR) : new Set<string>();
    if (first.killed) {
      killedTrials++;
      const p = phaseOf(first.stderr);
      phases[p] = (phases[p] ?? 0) + 1;
    }
    let resumed: Run = first;
    let resumes = 0;
    while (resumed.code !== 0 && resumes < 3) {
      // Killed before the run folder held any state: a user simply reruns the same command.
      resumed = existsSync(join(out, "state.sqlite"))
        ? await train(["--resume", out], env)
        : await train([...base, "--out", out], env);
      // Stopped before it started (no saved config yet): a user reruns the same command.
      if (resumed.code !== 0 && /nothing to resume/.test(resumed.stderr))
        resumed = await train([...base, "--out", out], env);
      resumes++;
    }
    const derivedDiff = resumed.code === 0 ? derivedDifference(refDerived, derivedFiles(out)) : undefined;
    const same =
      resumed.code === 0 &&
      derivedDiff === undefined &&
      JSON.stringify(stableHistory(out)) === refHistory &&
      decisions(out).join(",") === refDecisions;
    const extra = existsSync(join(out, "state.sqlite")) ? repaid(out) + paidAgain(out, keptAt, kept) : 0;
    totalRepaid += extra;
    const paid = existsSync(join(out, "state.sqlite")) ? paidCalls(out) : 0;
    if (paid === refPaid) samePaid++;
    if (same) identical++;
    else {
      const why = resumed.code
        ? `resume exit ${resumed.code}: ${resumed.stderr.trim().split("\n").pop()}`
        : (firstDifference(JSON.parse(refHistory), stableHistory(out)) ?? derivedDiff ?? "gate decisions differ");
      failures.push(
        `trial ${i + 1}: killed at ${at} ms (${first.killed ? phaseOf(first.stderr) : "not killed"}): ${why}`,
      );
    }
    console.log(
      `trial ${String(i + 1).padStart(2)}: kill at ${String(at).padStart(5)} ms ${first.killed ? `(${phaseOf(first.stderr)})` : "(finished first)"} → ${same ? "identical" : "DIFFERENT"}, re-paid ${extra}, paid ${paid}${paid === refPaid ? "" : ` (uninterrupted ${refPaid})`}`,
    );
  }
  if (process.argv.includes("--keep")) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
  for (const f of failures) console.log(f);
  console.log("");
  console.log(`trials:                 ${TRIALS} (${killedTrials} killed mid-run)`);
  console.log(
    `kill moments:           ${Object.entries(phases)
      .map(([p, n]) => `${p} ${n}`)
      .join(", ")}`,
  );
  console.log(
    `identical results:      ${identical}/${TRIALS} (history, gate decisions, best_skill.md, skills/, steps.jsonl)`,
  );
  console.log(`re-paid completed calls: ${totalRepaid}`);
  console.log(`paid calls as uninterrupted (${refPaid}): ${samePaid}/${TRIALS}`);
}

await main();
