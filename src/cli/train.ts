import { mkdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { stringify } from "yaml";
import { createModelClient, type SkilloptModelClient } from "../backends/index.ts";
import { deriveSizes, estimateRun, firstN, type Role, train } from "../engine/index.ts";
import {
  compactTimestamp,
  errorMessage,
  log,
  NoAnswerError,
  redactText,
  redactValue,
  UsageError,
  writeFileAtomic,
  writeJsonAtomic,
} from "../lib/index.ts";
import { PROMPTS } from "../prompts/index.ts";
import { createConsole, resultText } from "../report/index.ts";
import { type ClaimedRun, claimForResume, claimNewRun, runPaths, runRecorder } from "../run/index.ts";
import { openRunStore, setRunMeta, type Store, useCallTables } from "../store/index.ts";
import { cacheArg, configArgs, globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { writeReportAfterRun } from "./run-report.ts";
import { describeNoAnswer, failureReason, whatToFix } from "./no-answer.ts";
import { cliNeeds, preflight, roleNeeds, splitNeed, startingSkillNeed } from "./preflight.ts";
import {
  accountingWithDrops,
  backendLine,
  benchmarkContext,
  type ConfigInput,
  configInputOf,
  engineConfig,
  limitSplits,
  loadFromInput,
  resolveBenchmark,
  resolveInitialSkill,
  roleBatch,
  rolePrices,
  savedInput,
} from "./run-setup.ts";
import { batchProgress } from "./batch-progress.ts";
import { COMMAND_META } from "./command-meta.ts";

export default defineCommand({
  meta: COMMAND_META.train,
  args: {
    ...globalArgs,
    ...jsonArg,
    ...configArgs,
    out: {
      type: "string",
      description: "Output directory (default outputs/<env>_<YYYYMMDD-HHMMSS>, or env.out_root)",
      valueHint: "DIR",
    },
    resume: { type: "string", description: "Continue the run in DIR from its last committed step", valueHint: "DIR" },
    "max-cost": {
      type: "string",
      description: "Stop cleanly once this many dollars are spent (model.max_cost_usd)",
      valueHint: "USD",
    },
    ...cacheArg,
    "dry-run": {
      type: "boolean",
      description: "Resolve, load the data and print the plan and predicted calls; call no model",
    },
  },
  async run({ args, rawArgs }) {
    const cwd = process.cwd();
    const errWrite = (s: string) => process.stderr.write(s);
    const shown = (dir: string) => relative(cwd, dir) || dir;
    let input: ConfigInput = configInputOf(args, rawArgs);
    let out: string | undefined;
    let run: ClaimedRun | undefined;
    if (args.resume) {
      out = resolve(cwd, String(args.resume));
      run = claimForResume(out, String(args.resume));
      const saved = JSON.parse(run.savedInput ?? "null") as ConfigInput;
      input = {
        ...saved,
        set: [...saved.set, ...input.set],
        cfgOptions: [...saved.cfgOptions, ...input.cfgOptions],
        legacy: { ...saved.legacy, ...input.legacy },
      };
    }
    let store: Store | undefined = run?.store;
    let client: SkilloptModelClient | undefined;
    let failed = false;
    try {
      const maxCost = args["max-cost"] === undefined ? undefined : Number(args["max-cost"]);
      if (maxCost !== undefined && !(maxCost > 0))
        throw new UsageError(`--max-cost must be a positive number of dollars (got ${args["max-cost"]})`);
      const loaded = loadFromInput(input);
      const config = loaded.config;
      for (const w of loaded.warnings) errWrite(`  [warn] ${w}\n`);
      const bench = await resolveBenchmark(loaded);
      const init = resolveInitialSkill(loaded, bench, input.cwd);
      // A fresh run checks its starting skill before anything is written or paid for (a resumed
      // run continues from skills already measured).
      if (!args.resume) await preflight([startingSkillNeed(init.text, init.source, config.optimizer.max_skill_tokens)]);
      const dir =
        out ??
        resolve(
          cwd,
          args.out
            ? String(args.out)
            : config.env.out_root || join("outputs", `${config.env.name}_${compactTimestamp()}`),
        );
      const paths = runPaths(dir);
      if (!run && !args["dry-run"]) {
        run = claimNewRun(dir, shown(dir));
        store = run.store;
      }
      const prepareStore = (): Store => {
        mkdirSync(dir, { recursive: true });
        store ??= openRunStore(paths.state);
        useCallTables(store);
        return store;
      };
      client = await createModelClient(config, {
        env: loaded.environ,
        placeholderModels: loaded.placeholderModels,
        noCache: args.cache === false,
        ...(maxCost === undefined ? {} : { maxCostUsd: maxCost }),
        ...(args["dry-run"]
          ? {}
          : {
              ledgerStore: prepareStore(),
              runId: "train",
              onBatch: batchProgress(dir, { write: errWrite, quiet: output.quiet }),
            }),
      });
      const controller = new AbortController();
      const ctx = benchmarkContext(config, loaded, client, paths.work, controller.signal);
      const splits = limitSplits(await bench.loadSplits(ctx), config.env.limit);
      // What the run needs, checked before the first paid call (the baseline's rollouts).
      const needed: Role[] = [
        "optimizer",
        "target",
        ...(bench.rolesNeeded?.(config.env as Record<string, unknown>) ?? []),
      ];
      await preflight([
        ...roleNeeds(client, needed),
        splitNeed(bench, "train", splits.train),
        splitNeed(bench, "selection (val)", firstN(splits.val, config.evaluation.sel_env_num)),
        ...cliNeeds(client, needed, loaded.environ),
      ]);
      if (args["dry-run"]) {
        const estimate = estimateRun({
          cfg: config,
          splits,
          initialSkill: init.text,
          prices: rolePrices(client),
          batch: roleBatch(client),
        });
        // What each role resolved to (a shipped placeholder model replaced per backend), before anything else.
        const plan = {
          dry_run: true,
          config: loaded.file,
          benchmark: bench.name,
          backends: client.info,
          initial_skill: init.source,
          ...estimate,
        };
        if (!output.quiet) errWrite(`  ${backendLine(client)}\n`);
        if (output.json) printJson(plan);
        else printResult(stringify(plan).trimEnd());
        return;
      }
      const runStore = prepareStore();
      const simNote =
        client.info.optimizer?.backend === "sim" || client.info.target?.backend === "sim"
          ? "sim (offline simulator)"
          : "";
      setRunMeta(runStore, {
        input: JSON.stringify(redactValue(savedInput(input))),
        config: JSON.stringify(redactValue(config)),
        benchmark: bench.name,
        pid: process.pid,
        status: "running",
        reason: "",
        backend: simNote || `${client.info.optimizer?.backend}/${client.info.target?.backend}`,
        total_steps: deriveSizes(config, splits.train.length).totalSteps,
        ...(args.resume ? {} : { started_at: Date.now() }),
      });
      const info = client.info;
      const roles = (["optimizer", "target"] as const).map(
        (r) =>
          `${r}=${info[r]?.backend === "sim" ? "sim (offline simulator, not a real model)" : `${info[r]?.backend ?? "?"} ${info[r]?.model ?? ""}`.trim()}`,
      );
      writeFileAtomic(
        paths.config,
        `# resolved from ${loaded.file}; secrets masked\n# backends: ${roles.join(", ")}\n${stringify(redactValue(config))}`,
      );
      const events = createConsole({
        write: errWrite,
        tty: Boolean(process.stderr.isTTY),
        quiet: output.quiet || output.json,
      });
      const startLines = [
        `  ${backendLine(client)}`,
        `  [initial skill] ${init.source} (${init.text.length} chars)`,
        ...(init.note ? [`  [note] ${init.note}`] : []),
        `  [out] ${dir}`,
      ];
      // The first line always says which backend runs (the simulator named as such), also under --json.
      if (!output.quiet) errWrite(`${startLines.join("\n")}\n`);
      const onSigint = () => controller.abort(new UsageError("interrupted"));
      process.once("SIGINT", onSigint);
      process.once("SIGTERM", onSigint);
      const recorder = runRecorder(runStore, dir, new Map());
      let result: Awaited<ReturnType<typeof train>>;
      try {
        result = await train({
          cfg: engineConfig(config, client),
          bench,
          ctx,
          splits,
          initialSkill: init.text,
          prompts: PROMPTS,
          recorder,
          accounting: accountingWithDrops(client),
          events,
          clock: { now: () => Date.now() },
          signal: controller.signal,
        });
      } catch (err) {
        if (controller.signal.aborted) {
          recorder.flush();
          setRunMeta(runStore, { status: "interrupted" });
          errWrite(`  interrupted — the run is resumable: skillopt train --resume ${shown(dir)}\n`);
          process.exitCode = 130;
          return;
        }
        // Stopped on an error: failed (never "finished"), with the reason, resumable from the last commit.
        const told = describeNoAnswer(err, client);
        // Best effort: on a full disk these writes fail too, and must not replace the error that stopped the run.
        try {
          recorder.flush();
          setRunMeta(runStore, { status: "failed", reason: redactText(failureReason(told)) });
          writeReportAfterRun(dir);
        } catch (cleanup) {
          log.debug(`after the run failed, recording its state failed too: ${errorMessage(cleanup)}`);
        }
        if (told instanceof NoAnswerError) {
          throw new NoAnswerError(told.message, {
            cause: err,
            data: told.data,
            hint: `${whatToFix(told)}; nothing committed is lost — once it answers, continue with: skillopt train --resume ${shown(dir)}`,
          });
        }
        throw told;
      } finally {
        process.removeListener("SIGINT", onSigint);
        process.removeListener("SIGTERM", onSigint);
      }
      const summary = { ...result.summary, out: dir, backend: simNote || undefined };
      writeJsonAtomic(paths.summary, summary);
      const report = writeReportAfterRun(dir);
      if (output.json) printJson(summary);
      else printResult(`${resultText(summary)}${report ? `\n  report:     ${report}` : ""}`);
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      // Closing and releasing write too (cache, ledger, owner row): on a full disk they fail as well,
      // and must not replace the error that stopped the run.
      for (const step of [() => client?.close(), () => (run ? run.release() : store?.close())]) {
        try {
          await step();
        } catch (err) {
          // After a failed run, a cleanup failure is only logged: the first error wins.
          // biome-ignore lint/correctness/noUnsafeFinally: after a successful run a cleanup failure is the run's error
          if (!failed) throw err;
          log.debug(`cleanup after a failed run: ${errorMessage(err)}`);
        }
      }
    }
  },
});
