import { createModelClient, type SkilloptModelClient } from "../../src/backends/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { loadConfig, type TrainConfig } from "../../src/config/index.ts";
import {
  type BenchmarkContext,
  type EngineEvent,
  type RunCheckpoint,
  type RunRecorder,
  type StepRecord,
  train,
  type TrainResult,
} from "../../src/engine/index.ts";
import { PROMPTS } from "../../src/prompts/index.ts";

/** A recorder that keeps checkpoints in memory and can "crash" (throw) at a chosen commit. */
export class MemoryRecorder implements RunRecorder {
  checkpoints: RunCheckpoint[] = [];
  skills: Record<string, string> = {};
  crashAtStep: number | undefined;
  crashBeforeCommit = false;

  resume() {
    const last = this.checkpoints[this.checkpoints.length - 1];
    return last ? { state: structuredClone(last.state), skills: { ...this.skills } } : undefined;
  }

  commit(cp: RunCheckpoint) {
    if (cp.kind === "step" && cp.step === this.crashAtStep && this.crashBeforeCommit)
      throw new Error(`simulated crash before step ${cp.step}`);
    this.checkpoints.push(structuredClone(cp));
    for (const s of cp.skills) this.skills[s.hash] = s.text;
    if (cp.kind === "step" && cp.step === this.crashAtStep) throw new Error(`simulated crash after step ${cp.step}`);
  }

  /** Step records, in order (the last record of a step wins, as in the store). */
  records(): StepRecord[] {
    const byStep = new Map<number, StepRecord>();
    for (const cp of this.checkpoints) if (cp.kind === "step") byStep.set(cp.step, cp.record);
    return [...byStep.values()];
  }
}

/** The quickstart config with overrides (the sim backend: the preload strips every provider key). */
export function quickConfig(set: string[] = []): TrainConfig {
  return loadConfig({ config: "quickstart", set }).config;
}

export interface Run {
  result: TrainResult;
  recorder: MemoryRecorder;
  client: SkilloptModelClient;
  events: EngineEvent[];
}

/** The benchmark context of an in-process simulator run (no work dir: conventions writes nothing). */
export function simContext(config: TrainConfig, client: SkilloptModelClient): BenchmarkContext {
  return {
    model: client,
    env: config.env as Record<string, unknown>,
    configDir: process.cwd(),
    workDir: "/nonexistent",
    target: { model: client.info.target?.model ?? "sim", maxTokens: 256 },
    seed: config.train.seed,
  };
}

/** Train on the simulator through the real model layer (no call cache unless a dir is given). */
export async function trainOnSim(
  config: TrainConfig,
  recorder = new MemoryRecorder(),
  opts: {
    cacheDir?: string;
    onEvent?: (e: EngineEvent, client: SkilloptModelClient) => void;
    /** The engine's clock in ms (default: always 0). */
    now?: () => number;
  } = {},
): Promise<Run> {
  const client = await createModelClient(config, opts.cacheDir ? { cacheDir: opts.cacheDir } : { noCache: true });
  const bench = (await getBenchmark(config.env.name))!;
  const ctx = simContext(config, client);
  const splits = await bench.loadSplits(ctx);
  const events: EngineEvent[] = [];
  try {
    const result = await train({
      cfg: config,
      bench,
      ctx,
      splits,
      initialSkill: bench.initialSkill,
      prompts: PROMPTS,
      recorder,
      accounting: client,
      events: {
        emit: (e) => {
          events.push(e);
          opts.onEvent?.(e, client);
        },
      },
      clock: { now: opts.now ?? (() => 0) },
    });
    return { result, recorder, client, events };
  } finally {
    await client.close();
  }
}

/** Records without the fields that legitimately differ between two runs (calls, time). */
export function comparable(records: Record<string, unknown>[]): Record<string, unknown>[] {
  return records.map((r) => {
    const { timing, wall_time_s, calls, tokens, cost_usd, ...rest } = r;
    void timing;
    void wall_time_s;
    void calls;
    void tokens;
    void cost_usd;
    return rest;
  });
}
