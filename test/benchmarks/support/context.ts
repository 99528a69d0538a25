import { join } from "node:path";
import type { Benchmark, BenchmarkContext } from "../../../src/engine/ports.ts";
import { compatClient } from "../../backends/support.ts";
import { REPO_ROOT } from "../../support/cli.ts";

export const FIXTURES = join(REPO_ROOT, "fixtures", "benchmarks");

/** Upstream's configs beside the repo (../shared); tests that need them skip with a message when absent. */
export const UPSTREAM_CONFIGS = join(REPO_ROOT, "..", "shared", "upstream", "configs");

/** A BenchmarkContext whose model is the real model layer pointed at the fake server. */
export async function benchContext(url: string, env: Record<string, unknown>, workDir: string) {
  const client = await compatClient(url);
  const ctx: BenchmarkContext = {
    model: client,
    env: { split_mode: "split_dir", split_seed: 42, exec_timeout: 60, max_completion_tokens: 512, limit: 0, ...env },
    configDir: REPO_ROOT,
    workDir,
    target: { model: "gpt-4o-mini", maxTokens: 512 },
    seed: 42,
  };
  return Object.assign(ctx, { [Symbol.asyncDispose]: () => client[Symbol.asyncDispose]() });
}

/** Load the splits and roll out every item of one split. */
export async function rollAll(bench: Benchmark, ctx: BenchmarkContext, split: "train" | "val" | "test") {
  const splits = await bench.loadSplits(ctx);
  const out = [];
  for (const item of splits[split]) out.push(await bench.rollout(item, "# Skill\n- be precise", ctx, 0));
  return out;
}
