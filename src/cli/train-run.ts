import { readFileSync } from "node:fs";
import type { SkilloptModelClient } from "../backends/index.ts";
import type { LoadedConfig, TrainConfig } from "../config/index.ts";
import { type Benchmark, deriveSizes, estimateRun, type Splits, type TrainResult, train } from "../engine/index.ts";
import {
  errorMessage,
  log,
  ModelUnfitError,
  NoAnswerError,
  plainYaml,
  redactText,
  redactValue,
  UsageError,
  unpackPackage,
  writeFileAtomic,
  writeJsonAtomic,
  yamlLibrary,
} from "../lib/index.ts";
import { resultText } from "../report/index.ts";
import type { ClaimedRun, RunPaths, runRecorder } from "../run/index.ts";
import { setRunMeta, type Store } from "../store/index.ts";
import type { ContextFit } from "./context-fit.ts";
import { describeNoAnswer, failureReason, whatToFix } from "./no-answer.ts";
import { output, printJson, printResult } from "./output.ts";
import { writeReportAfterRun } from "./run-report.ts";
import { backendLine, type ConfigInput, savedInput } from "./run-setup.ts";
import { type SkillFolder, writeBestSkillFolder } from "./skill-folder.ts";

/*
 * The parts of `skillopt train` around the engine call: the resumed input, the dry-run plan, what
 * a run records when it starts, the engine call under SIGINT/SIGTERM, what a run records when it
 * stops on an error and writes when it ends, and closing what it opened.
 */

/** How many files beside SKILL.md a skill package trains or carries (empty for a single file). */
function packageNote(text: string, mode: "train" | "carry"): string {
  const n = unpackPackage(text).files.length;
  return n
    ? `; a package of SKILL.md and ${n} text file${n === 1 ? "" : "s"}, ${mode === "train" ? "trained" : "carried unchanged"}`
    : "";
}

/** A resumed run's config input: the saved one, with this command line's overrides after it. */
export function resumedInput(run: ClaimedRun, given: ConfigInput): ConfigInput {
  const saved = JSON.parse(run.savedInput ?? "null") as ConfigInput;
  return {
    ...saved,
    set: [...saved.set, ...given.set],
    cfgOptions: [...saved.cfgOptions, ...given.cfgOptions],
    legacy: { ...saved.legacy, ...given.legacy },
  };
}

/**
 * Each role's price for the dry-run estimate, from the run's prices (built-ins, the user pricing
 * file, model.pricing): live or Batch API; the simulator is free.
 */
function rolePrices(client: SkilloptModelClient, batch: boolean) {
  const price = (r: "optimizer" | "target") => {
    const i = client.info[r];
    if (i?.backend === "sim") return { input_per_mtok: 0, output_per_mtok: 0 };
    if (!i?.model) return null;
    return (batch ? client.prices.batchLookup(i.model) : client.prices.lookup(i.model)) ?? null;
  };
  return { optimizer: price("optimizer"), target: price("target") };
}

/** `train --dry-run`: the plan and predicted calls, with what each role resolved to; no model is called. */
export function printDryRun(
  loaded: LoadedConfig,
  bench: Benchmark,
  client: SkilloptModelClient,
  splits: Splits,
  init: { text: string; source: string },
  write: (s: string) => void,
  context: ContextFit[] = [],
): void {
  const estimate = estimateRun({
    cfg: loaded.config,
    splits,
    initialSkill: init.text,
    prices: rolePrices(client, false),
    batch: { modes: client.batchModes, prices: rolePrices(client, true) },
  });
  const plan = {
    dry_run: true,
    config: loaded.file,
    benchmark: bench.name,
    backends: client.info,
    initial_skill: init.source,
    ...(context.length ? { context_windows: context } : {}),
    ...estimate,
  };
  if (!output.quiet) write(`  ${backendLine(client)}\n`);
  if (output.json) printJson(plan);
  else printResult(yamlLibrary().stringify(plan).trimEnd());
}

/** "sim (offline simulator)" when a role runs on the simulator, else "". */
function simNote(client: SkilloptModelClient): string {
  return client.info.optimizer?.backend === "sim" || client.info.target?.backend === "sim"
    ? "sim (offline simulator)"
    : "";
}

/**
 * What a run records before its first step: the run's meta row (input without secrets, resolved
 * config, status running) and the resolved config file. Returns the lines the console starts with.
 */
export function recordRunStart(
  store: Store,
  paths: RunPaths,
  o: {
    input: ConfigInput;
    loaded: LoadedConfig;
    bench: Benchmark;
    client: SkilloptModelClient;
    splits: Splits;
    resumed: boolean;
    init: { text: string; source: string; note?: string };
  },
): string[] {
  const { config } = o.loaded;
  const info = o.client.info;
  setRunMeta(store, {
    input: JSON.stringify(redactValue(savedInput(o.input))),
    config: JSON.stringify(redactValue(config)),
    benchmark: o.bench.name,
    pid: process.pid,
    status: "running",
    reason: "",
    backend: simNote(o.client) || `${info.optimizer?.backend}/${info.target?.backend}`,
    total_steps: deriveSizes(config as TrainConfig, o.splits.train.length).totalSteps,
    ...(o.resumed ? {} : { started_at: Date.now() }),
  });
  const roles = (["optimizer", "target"] as const).map(
    (r) =>
      `${r}=${info[r]?.backend === "sim" ? "sim (offline simulator, not a real model)" : `${info[r]?.backend ?? "?"} ${info[r]?.model ?? ""}`.trim()}`,
  );
  const saved = redactValue(config);
  writeFileAtomic(
    paths.config,
    `# resolved from ${o.loaded.file}; secrets masked\n# backends: ${roles.join(", ")}\n${plainYaml(saved) ?? yamlLibrary().stringify(saved)}`,
  );
  return [
    `  ${backendLine(o.client)}`,
    `  [initial skill] ${o.init.source} (${o.init.text.length} chars${packageNote(o.init.text, config.optimizer.skill_files)})`,
    ...(o.init.note ? [`  [note] ${o.init.note}`] : []),
    `  [out] ${paths.dir}`,
  ];
}

/**
 * A run stopped on an error: failed (never "finished"), with the reason, resumable from the last
 * commit. Returns the error to raise, with what to fix and how to resume.
 */
function recordFailure(
  err: unknown,
  o: {
    recorder: ReturnType<typeof runRecorder>;
    store: Store;
    dir: string;
    shown: string;
    client: SkilloptModelClient;
  },
): unknown {
  const told = describeNoAnswer(err, o.client);
  // Best effort: on a full disk these writes fail too, and must not replace the error that stopped the run.
  try {
    o.recorder.flush();
    setRunMeta(o.store, { status: "failed", reason: redactText(failureReason(told)) });
    writeReportAfterRun(o.dir);
  } catch (cleanup) {
    log.debug(`after the run failed, recording its state failed too: ${errorMessage(cleanup)}`);
  }
  if (told instanceof ModelUnfitError) {
    const flag = told.data.role === "optimizer" ? "model.optimizer_backend" : "model.target_backend";
    return new ModelUnfitError(told.message, {
      cause: err,
      data: told.data,
      hint:
        `${told.hint ?? "use another model"}; nothing committed is lost — once the model is changed, continue with: ` +
        `skillopt train --resume ${o.shown} --set ${flag}=…`,
    });
  }
  if (!(told instanceof NoAnswerError)) return told;
  return new NoAnswerError(told.message, {
    cause: err,
    data: told.data,
    hint: `${whatToFix(told)}; nothing committed is lost — once it answers, continue with: skillopt train --resume ${o.shown}`,
  });
}

/**
 * The engine's run under SIGINT and SIGTERM: an interrupt flushes what was recorded and leaves
 * the run resumable (exit 130, undefined returned); any other error is recorded (recordFailure)
 * and raised.
 */
export async function trainInterruptibly(
  deps: Parameters<typeof train>[0],
  controller: AbortController,
  run: Parameters<typeof recordFailure>[1],
  write: (s: string) => void,
): Promise<TrainResult | undefined> {
  const onSigint = () => controller.abort(new UsageError("interrupted", { command: "skillopt train" }));
  process.once("SIGINT", onSigint);
  process.once("SIGTERM", onSigint);
  try {
    return await train(deps);
  } catch (err) {
    if (controller.signal.aborted) {
      run.recorder.flush();
      setRunMeta(run.store, { status: "interrupted" });
      write(`  interrupted — the run is resumable: skillopt train --resume ${run.shown}\n`);
      process.exitCode = 130;
      return undefined;
    }
    throw recordFailure(err, run);
  } finally {
    process.removeListener("SIGINT", onSigint);
    process.removeListener("SIGTERM", onSigint);
  }
}

/**
 * A finished (or stopped) run's outputs: the best skill folder when it started from a folder
 * (its files byte for byte, SKILL.md the best skill), summary.json, the report, and the result printed.
 */
export function finishRun(
  result: TrainResult,
  o: {
    dir: string;
    paths: RunPaths;
    folder: SkillFolder | undefined;
    initial: string;
    client: SkilloptModelClient;
    warnings: readonly unknown[];
  },
): void {
  // A skill folder comes back as best_skill/: its files byte for byte, SKILL.md the best skill;
  // so does a single file to which training added files (the skill became a folder).
  const best = readFileSync(o.paths.bestSkill, "utf8");
  const folder =
    o.folder || unpackPackage(best).files.length
      ? writeBestSkillFolder(o.dir, o.folder ?? { dir: o.dir, files: [] }, o.initial, best)
      : undefined;
  const summary = {
    ...result.summary,
    out: o.dir,
    backend: simNote(o.client) || undefined,
    ...(folder ? { best_skill_dir: folder } : {}),
  };
  writeJsonAtomic(o.paths.summary, summary);
  const report = writeReportAfterRun(o.dir, result.summary.steps);
  if (output.json) printJson({ ...summary, warnings: o.warnings });
  else
    printResult(
      `${resultText(summary)}${folder ? `\n  best skill folder: ${folder}` : ""}${report ? `\n  report:     ${report}` : ""}`,
    );
}

/**
 * Close what a run opened, in order. Closing writes too (cache, ledger, owner row): after a failed
 * run a cleanup failure is only logged (the first error wins); after a successful one it is the
 * run's error.
 */
export async function closeInOrder(steps: (() => unknown)[], failed: boolean): Promise<void> {
  let first: unknown;
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      if (failed) log.debug(`cleanup after a failed run: ${errorMessage(err)}`);
      else first ??= err;
    }
  }
  if (first !== undefined) throw first;
}
