import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { storedAnswers } from "../support/call-cache.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

function history(dir: string): Record<string, unknown>[] {
  const p = join(dir, "history.jsonl");
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A history without what legitimately differs between two runs (timings and call accounting). */
function comparable(dir: string): unknown[] {
  return history(dir).map(({ timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved, ...rest }) => {
    void [timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved];
    return rest;
  });
}

function cachedCalls(cacheDir: string): number {
  return storedAnswers(join(cacheDir, "calls.sqlite"));
}

// One rollout at a time: where the sequential test stops is then also where paying stops, so an
// uninterrupted run and a killed-and-resumed one pay exactly the same calls.
const SETTINGS = [
  "--set",
  "env.workers=1",
  "--set",
  "gradient.analyst_workers=1",
  "--set",
  "evaluation.gate_rule=paired",
];

describe("paired gate: kill -9 in the middle of a sequential decision", () => {
  test("resume gives the same verdict, and no completed call is paid again", async () => {
    using dir = tempDir();
    const ref = join(dir.path, "ref");
    const cut = join(dir.path, "cut");
    const r0 = await runCli([
      "train",
      "--config",
      "quickstart",
      "--out",
      ref,
      "--quiet",
      ...SETTINGS,
      "--set",
      `model.cache_dir=${join(dir.path, "ref-cache")}`,
    ]);
    expect(r0.code, r0.stderr).toBe(0);
    // A step whose decision used (nearly) the whole split: long enough to be killed inside.
    const long = history(ref).find(
      (h) =>
        (h.gate as { rule?: string; n_used?: number } | undefined)?.rule === "paired" &&
        Number((h.gate as { n_used: number }).n_used) >= 20,
    );
    expect(long).toBeDefined();
    const k = Number(long!.step);

    const cache = join(dir.path, "cache");
    const proc = Bun.spawn(
      [
        process.execPath,
        join(REPO_ROOT, "src", "main.ts"),
        "train",
        "--config",
        "quickstart",
        "--out",
        cut,
        ...SETTINGS,
        "--set",
        `model.cache_dir=${cache}`,
        "--set",
        "model.sim_latency_ms=10",
      ],
      {
        cwd: REPO_ROOT,
        env: Object.fromEntries(
          Object.entries({ ...process.env, NO_COLOR: "1" }).filter(
            ([key, v]) => v !== undefined && key !== "SKILLOPT_LOG_LEVEL",
          ),
        ) as Record<string, string>,
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    // Read the console until step k's paired decision has begun, then let a few of its calls complete.
    let text = "";
    const reader = proc.stderr.getReader();
    const marker = new RegExp(`\\[STEP ${k}/\\d+\\][\\s\\S]*\\(decided item by item against the current skill\\)`);
    while (!marker.test(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(marker.test(text)).toBe(true);
    const start = cachedCalls(cache);
    while (cachedCalls(cache) < start + 4 && proc.exitCode === null) await Bun.sleep(5);
    proc.kill(9);
    await proc.exited;
    // Killed inside step k's decision: the step was never committed.
    expect(history(cut).some((h) => h.step === k)).toBe(false);
    expect(cachedCalls(cache)).toBeGreaterThanOrEqual(start + 4);

    const r = await runCli(["train", "--resume", cut, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const refStep = history(ref).find((h) => h.step === k)!;
    const cutStep = history(cut).find((h) => h.step === k)!;
    expect(cutStep.gate).toEqual(refStep.gate);
    expect(cutStep.action).toBe(refStep.action);
    expect(comparable(cut)).toEqual(comparable(ref));
    // No call was paid twice (the calls completed before the kill came back from the cache), and
    // every paid call is counted once: a kill between a call's answer (the cache's side file) and
    // its ledger row (the run store's) is made up on the resume from the answer's paid mark
    // (docs/reliability.md; test/backends/killed-ledger.test.ts places that kill deterministically).
    const refCalls = JSON.parse(readFileSync(join(ref, "summary.json"), "utf8")).calls;
    const cutCalls = JSON.parse(r.stdout).calls;
    expect(cutCalls.total - cutCalls.cached).toBe(refCalls.total - refCalls.cached);
  }, 120_000);
});
