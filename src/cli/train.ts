import { mkdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { costUnknownWarnings, createModelClient, type SkilloptModelClient } from "../backends/index.ts";
import { firstN, packageLimits, type Role } from "../engine/index.ts";
import { compactTimestamp, UsageError } from "../lib/index.ts";
import { PROMPTS } from "../prompts/index.ts";
import { createConsole } from "../report/index.ts";
import {
  type ClaimedRun,
  claimForResume,
  claimNewRun,
  recordingWarnings,
  rememberRunRoot,
  runPaths,
  runRecorder,
} from "../run/index.ts";
import { openRunStore, type Store, useCallTables } from "../store/index.ts";
import { cacheArg, configArgs, globalArgs, jsonArg } from "./args.ts";
import { batchProgress } from "./batch-progress.ts";
import { COMMAND_META } from "./command-meta.ts";
import { checkContextFits } from "./context-fit.ts";
import { output } from "./output.ts";
import { cliNeeds, preflight, roleNeeds, splitNeed, startingSkillNeed } from "./preflight.ts";
import {
  accountingWithDrops,
  benchmarkContext,
  type ConfigInput,
  configInputOf,
  engineConfig,
  limitSplits,
  loadFromInput,
  resolveBenchmark,
  resolveInitialSkill,
  checkEditScope,
} from "./run-setup.ts";
import { closeInOrder, finishRun, printDryRun, recordRunStart, resumedInput, trainInterruptibly } from "./train-run.ts";

/** --max-cost in dollars (undefined: not given); anything but a positive number is a usage error. */
function maxCostOf(given: unknown): number | undefined {
  const maxCost = given === undefined ? undefined : Number(given);
  if (maxCost !== undefined && !(maxCost > 0))
    throw new UsageError(`--max-cost must be a positive number of dollars (got ${given})`, {
      flag: "max-cost",
      value: given,
      expected: "positive number of dollars",
    });
  return maxCost;
}

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
      input = resumedInput(run, input);
    }
    let store: Store | undefined = run?.store;
    let client: SkilloptModelClient | undefined;
    let failed = false;
    try {
      const maxCost = maxCostOf(args["max-cost"]);
      const loaded = loadFromInput(input);
      const config = loaded.config;
      for (const w of loaded.warnings) errWrite(`  [warn] ${w}\n`);
      const bench = await resolveBenchmark(loaded);
      const init = resolveInitialSkill(loaded, bench, input.cwd);
      checkEditScope(loaded, bench, init);
      // A fresh run checks its starting skill before anything is written or paid for (a resumed
      // run continues from skills already measured).
      if (!args.resume)
        await preflight([
          startingSkillNeed(init.text, init.source, config.optimizer.max_skill_tokens, packageLimits(config.optimizer)),
        ]);
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
        splitNeed(bench, "selection (val)", firstN(splits.val, config.evaluation.sel_env_num), "val"),
        ...cliNeeds(client, needed, loaded.environ),
      ]);
      // Where a local server tells its model's context, a plan whose prompts cannot fit stops here, before any call.
      const context = await checkContextFits(client, config, init.text);
      if (args["dry-run"]) {
        printDryRun(loaded, bench, client, splits, init, errWrite, context);
        return;
      }
      const runStore = prepareStore();
      if (!args.resume) rememberRunRoot(dir);
      const startLines = recordRunStart(runStore, paths, {
        input,
        loaded,
        bench,
        client,
        splits,
        resumed: Boolean(args.resume),
        init,
      });
      const screen = createConsole({
        write: errWrite,
        tty: Boolean(process.stderr.isTTY),
        quiet: output.quiet || output.json,
      });
      const events = recordingWarnings(dir, screen);
      // The first line always says which backend runs (the simulator named as such), also under --json.
      if (!output.quiet) errWrite(`${startLines.join("\n")}\n`);
      // A model without a price runs (no cap asked for one), but says so now rather than at the end.
      for (const w of costUnknownWarnings(client)) errWrite(`  [warn] ${w}\n`);
      const recorder = runRecorder(runStore, dir, new Map());
      const deps = {
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
      };
      const facts = { recorder, store: runStore, dir, shown: shown(dir), client };
      const result = await trainInterruptibly(deps, controller, facts, errWrite);
      if (result)
        finishRun(result, { dir, paths, folder: init.folder, initial: init.text, client, warnings: events.given });
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      // A run refused before it started leaves nothing behind (releaseOrDiscard); a started one keeps its folder.
      await closeInOrder([() => client?.close(), () => (run ? run.releaseOrDiscard() : store?.close())], failed);
    }
  },
});
