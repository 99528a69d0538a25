import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { describeRoles, type SkilloptModelClient } from "../backends/index.ts";
import { benchmarkNames, getBenchmark } from "../benchmarks/index.ts";
import { type LoadedConfig, loadConfig, type TrainConfig } from "../config/index.ts";
import type { Benchmark, BenchmarkContext, CallAccounting, EngineConfig, Splits } from "../engine/index.ts";
import { ConfigError, isSecretKey, readSkillFile, UsageError } from "../lib/index.ts";
import { multiValueFlag, repeatedFlag } from "./args.ts";
import { collectLegacy } from "./legacy.ts";
import { isSkillFolder, packFolder, readFolderSkill, readSkillFolder, type SkillFolder } from "./skill-folder.ts";

/*
 * What train, eval and config share: the config input from the command line, loading it, and
 * resolving the benchmark, initial skill, splits and model-client views a run needs.
 */

export interface ConfigInput {
  config: string;
  set: string[];
  cfgOptions: string[];
  legacy: Record<string, string>;
  envFile?: string | undefined;
  cwd: string;
}

/**
 * The config input as saved for --resume: overrides that set a secret are dropped (they never
 * reach a file we write); a resumed run reads its keys from the environment again.
 */
export function savedInput(input: ConfigInput): ConfigInput {
  const keep = (kv: string) => !isSecretKey(kv.split("=")[0]!.split(".").pop()!.trim());
  return {
    ...input,
    set: input.set.filter(keep),
    cfgOptions: input.cfgOptions.filter(keep),
    legacy: Object.fromEntries(Object.entries(input.legacy).filter(([k]) => !isSecretKey(k))),
  };
}

/** Load the config from CLI inputs; --config is required. */
export function loadFromInput(input: ConfigInput): LoadedConfig {
  if (!input.config)
    throw new UsageError(
      "--config is required (a bundled name such as quickstart, or a YAML file)",
      { flag: "config", expected: "bundled config name or YAML file" },
      { hint: "run `skillopt configs` to list bundled configs" },
    );
  return loadConfig({
    config: input.config,
    set: input.set,
    cfgOptions: input.cfgOptions,
    legacy: input.legacy,
    cwd: input.cwd,
    ...(input.envFile ? { envFile: input.envFile } : {}),
  });
}

/** The benchmark named by env.name (exit 2 when unknown). */
export async function resolveBenchmark(loaded: LoadedConfig): Promise<Benchmark> {
  const name = loaded.config.env.name;
  if (!name)
    throw new ConfigError(`env.name is empty in ${loaded.file}: name a benchmark (${benchmarkNames().join(", ")})`, {
      key: "env.name",
    });
  const bench = await getBenchmark(name);
  if (!bench)
    throw new ConfigError(
      `${loaded.where("env.name")}: env.name: unknown benchmark "${name}"; available: ${benchmarkNames().join(", ")}`,
      { key: "env.name" },
    );
  return bench;
}

/**
 * A benchmark that trains only part of the skill (Benchmark.editScope) refuses settings that
 * write elsewhere (the slow update, the skill-aware appendix), and a starting skill without that
 * part, before anything runs.
 */
export function checkEditScope(loaded: LoadedConfig, bench: Benchmark, init: { text: string; source: string }): void {
  const scope = bench.editScope;
  if (!scope) return;
  for (const key of ["use_slow_update", "use_skill_aware_reflection"] as const) {
    if (loaded.config.optimizer[key])
      throw new ConfigError(
        `${loaded.where(`optimizer.${key}`)}: optimizer.${key} writes outside ${scope.label}, the only part ${bench.name} trains; set it to false`,
        { key: `optimizer.${key}` },
      );
  }
  if (scope.read(init.text) === undefined)
    throw new ConfigError(
      `${init.source}: ${bench.name} trains ${scope.label}, and this skill has none (env.skill_init)`,
      {
        key: "env.skill_init",
      },
    );
}

const UPSTREAM_SKILL = /(^|\/)skillopt\/envs\/([^/]+)\/skills\/initial\.md$/;

/** The initial skill: env.skill_init, or the benchmark's embedded one (spec §1.1; missing file = exit 2). */
export function resolveInitialSkill(
  loaded: LoadedConfig,
  bench: Benchmark,
  cwd: string,
): { text: string; source: string; note?: string; folder?: SkillFolder } {
  const p = loaded.config.env.skill_init;
  if (!p) return { text: bench.initialSkill, source: `${bench.name} (embedded initial skill)` };
  const candidates = isAbsolute(p) ? [p] : [resolve(cwd, p), resolve(loaded.dir, p)];
  const found = candidates.find((c) => existsSync(c));
  // A skill folder (SKILL.md and its files) trains as a package (docs/packages.md); a benchmark that
  // trains one part of SKILL.md (the trigger's description) carries the other files unchanged.
  if (found && isSkillFolder(found)) {
    const folder = readSkillFolder(found, "env.skill_init");
    const skillMd = readFolderSkill(found, "env.skill_init");
    return {
      text: packFolder(folder, skillMd, bench.editScope ? "carry" : loaded.config.optimizer.skill_files),
      source: join(found, "SKILL.md"),
      folder,
    };
  }
  if (found) return { text: readSkillFile(found, "env.skill_init"), source: found };
  if (UPSTREAM_SKILL.test(p.replaceAll("\\", "/"))) {
    return {
      text: bench.initialSkill,
      source: `${bench.name} (embedded initial skill)`,
      note: `env.skill_init ${p} is upstream's layout and not present here; using the embedded initial skill of ${bench.name}`,
    };
  }
  throw new ConfigError(`${loaded.where("env.skill_init")}: env.skill_init: file not found: ${p}`, {
    key: "env.skill_init",
    hint: 'fix the path, or set env.skill_init to "" to start from the benchmark\'s initial skill',
  });
}

/** The benchmark context for a run. */
export function benchmarkContext(
  config: TrainConfig,
  loaded: LoadedConfig,
  client: SkilloptModelClient,
  workDir: string,
  signal: AbortSignal,
): BenchmarkContext {
  return {
    model: client,
    env: config.env as Record<string, unknown>,
    configDir: loaded.dir,
    workDir,
    target: {
      // The model layer's resolution (a placeholder replaced per backend); "" = the CLI's own default.
      model: client.info.target ? (client.info.target.model ?? "") : config.model.target,
      maxTokens: config.env.max_completion_tokens,
      ...(config.model.reasoning_effort ? { reasoningEffort: config.model.reasoning_effort } : {}),
    },
    signal,
    seed: config.train.seed,
    environ: loaded.environ,
  };
}

/** Apply `env.limit` (first N of each split; idempotent when a benchmark already applied it). */
export function limitSplits(splits: Splits, limit: number): Splits {
  if (!(limit > 0)) return splits;
  return { train: splits.train.slice(0, limit), val: splits.val.slice(0, limit), test: splits.test.slice(0, limit) };
}

/** First line of a run: which backend each role uses, with the simulator named as such. */
export function backendLine(client: SkilloptModelClient): string {
  return `[model config] ${describeRoles(client)}`;
}

/**
 * The client's call accounting with the structured results it dropped (malformed or truncated)
 * per stage, so summary.json and each step record show how many answers were thrown away.
 */
export function accountingWithDrops(client: SkilloptModelClient): CallAccounting {
  return {
    snapshot() {
      const totals = client.snapshot();
      const ledger = client.ledger.summary().by_stage;
      for (const [stage, t] of Object.entries(totals.by_stage)) t.dropped = ledger[stage]?.dropped ?? 0;
      return totals;
    },
    budgetExceeded: () => client.budgetExceeded(),
  };
}

/** The engine's view of the config, with each role's model as the model layer resolved it. */
export function engineConfig(config: TrainConfig, client: SkilloptModelClient): EngineConfig {
  return { ...config, model: { ...config.model, optimizer: client.info.optimizer?.model ?? config.model.optimizer } };
}

/** The config input of a command's flags (--config, --set, --cfg-options, --env-file, upstream's per-key flags). */
export function configInputOf(
  args: { config?: unknown; "env-file"?: unknown },
  rawArgs: string[],
  legacy: Record<string, string> = collectLegacy(rawArgs),
): ConfigInput {
  return {
    config: String(args.config ?? ""),
    set: repeatedFlag(rawArgs, "set"),
    cfgOptions: multiValueFlag(rawArgs, "cfg-options"),
    legacy,
    envFile: typeof args["env-file"] === "string" ? args["env-file"] : undefined,
    cwd: process.cwd(),
  };
}
