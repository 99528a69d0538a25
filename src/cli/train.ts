import { existsSync, mkdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { stringify } from "yaml";
import { type CallEvent, createModelClient, type SkilloptModelClient } from "../backends/index.ts";
import { benchmarkNames, getBenchmark } from "../benchmarks/index.ts";
import { type LoadedConfig, loadConfig, type TrainConfig } from "../config/index.ts";
import {
  type Benchmark,
  type BenchmarkContext,
  type CallAccounting,
  deriveSizes,
  type EngineConfig,
  firstN,
  normalizeLrControl,
  normalizeUpdateMode,
  planCalls,
  type RunCheckpoint,
  type RunRecorder,
  type Splits,
  train,
} from "../engine/index.ts";
import { ConfigError, isSecretKey, readSkillFile, redactValue, UsageError, writeFileAtomic, writeJsonAtomic } from "../lib/index.ts";
import { PROMPTS } from "../prompts/index.ts";
import { createConsole } from "../report/console.ts";
import {
  claimRun,
  commitCheckpoint,
  getRunMeta,
  holdsStartedRun,
  lastCheckpoint,
  openRunStore,
  releaseRun,
  setRunMeta,
  skillTexts,
  stepRecords,
  type Store,
  useCallTables,
} from "../store/index.ts";
import { configArgs, globalArgs, jsonArg, multiValueFlag, repeatedFlag } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { writeReportAfterRun } from "./run-report.ts";
import { collectLegacy } from "./legacy.ts";

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
  if (!input.config) throw new UsageError("--config is required (a bundled name such as quickstart, or a YAML file)", { hint: "run `skillopt configs` to list bundled configs" });
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
  if (!name) throw new ConfigError(`env.name is empty in ${loaded.file}: name a benchmark (${benchmarkNames().join(", ")})`);
  const bench = await getBenchmark(name);
  if (!bench) throw new ConfigError(`${loaded.where("env.name")}: env.name: unknown benchmark "${name}"; available: ${benchmarkNames().join(", ")}`);
  return bench;
}

const UPSTREAM_SKILL = /(^|\/)skillopt\/envs\/([^/]+)\/skills\/initial\.md$/;

/** The initial skill: env.skill_init, or the benchmark's embedded one (spec §1.1; missing file = exit 2). */
export function resolveInitialSkill(loaded: LoadedConfig, bench: Benchmark, cwd: string): { text: string; source: string; note?: string } {
  const p = loaded.config.env.skill_init;
  if (!p) return { text: bench.initialSkill, source: `${bench.name} (embedded initial skill)` };
  const candidates = isAbsolute(p) ? [p] : [resolve(cwd, p), resolve(loaded.dir, p)];
  const found = candidates.find((c) => existsSync(c));
  if (found) return { text: readSkillFile(found, "env.skill_init"), source: found };
  if (UPSTREAM_SKILL.test(p.replaceAll("\\", "/"))) {
    return { text: bench.initialSkill, source: `${bench.name} (embedded initial skill)`, note: `env.skill_init ${p} is upstream's layout and not present here; using the embedded initial skill of ${bench.name}` };
  }
  throw new ConfigError(`${loaded.where("env.skill_init")}: env.skill_init: file not found: ${p}`, { hint: "fix the path, or set env.skill_init to \"\" to start from the benchmark's initial skill" });
}

/** The benchmark context for a run. */
export function benchmarkContext(config: TrainConfig, loaded: LoadedConfig, client: SkilloptModelClient, workDir: string, signal: AbortSignal): BenchmarkContext {
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
  const role = (r: "optimizer" | "target") => {
    const i = client.info[r];
    if (!i) return `${r}=(none)`;
    return i.backend === "sim" ? `${r}=sim (offline simulator — not a real model)` : `${r}=${i.model ?? "(the CLI's default model)"} (${i.backend})`;
  };
  const auto = client.resolved.auto ? ` [backend auto → ${client.resolved.auto.chose}: ${client.resolved.auto.reason}]` : "";
  return `[model config] ${role("optimizer")} ${role("target")}${auto}`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function timestamp(d = new Date()): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

function pad4(n: number): string {
  return String(n).padStart(4, "0");
}

/** Writes a run's state to state.sqlite and mirrors it into the run folder's files. */
function runRecorder(store: Store, out: string, skills: Map<string, string>): RunRecorder {
  const history = join(out, "history.jsonl");
  const lines: string[] = [];
  const write = (cp: RunCheckpoint) => {
    for (const s of cp.skills) skills.set(s.hash, s.text);
    const current = skills.get(cp.state.current.hash);
    const best = skills.get(cp.state.best.hash);
    if (cp.kind !== "final" && current !== undefined) writeFileAtomic(join(out, "skills", `skill_v${pad4(cp.step)}.md`), current);
    if (best !== undefined) writeFileAtomic(join(out, "best_skill.md"), best);
    if (cp.kind === "step" && cp.record) {
      // Rewritten whole through temp + rename, so a reader never sees a torn line (a few KB per step).
      lines.push(`${JSON.stringify(cp.record)}\n`);
      writeFileAtomic(history, lines.join(""));
      const dir = join(out, "steps", `step_${pad4(cp.step)}`);
      const a = cp.artifacts ?? {};
      if (a.merged_patch) writeJsonAtomic(join(dir, "merged_patch.json"), a.merged_patch);
      if (a.ranked_edits) writeJsonAtomic(join(dir, "ranked_edits.json"), a.ranked_edits);
      if (Array.isArray(a.edit_apply_report) && a.edit_apply_report.length) writeJsonAtomic(join(dir, "edit_apply_report.json"), a.edit_apply_report);
      if (a.lr_decision) writeJsonAtomic(join(dir, "lr_decision.json"), a.lr_decision);
      const cand = typeof cp.record.candidate_hash === "string" ? skills.get(cp.record.candidate_hash) : undefined;
      if (cand !== undefined) writeFileAtomic(join(dir, "candidate_skill.md"), cand);
    }
    if (cp.kind === "final" && cp.record) writeJsonAtomic(join(out, "summary.json"), cp.record);
  };
  return {
    resume() {
      const last = lastCheckpoint(store);
      if (!last) return undefined;
      const texts = skillTexts(store);
      for (const [h, t] of Object.entries(texts)) skills.set(h, t);
      // Rebuild history.jsonl from the store: the files may lag the last committed step.
      lines.splice(0, lines.length, ...stepRecords(store).map((r) => `${JSON.stringify(r)}\n`));
      writeFileAtomic(history, lines.join(""));
      return { state: last.state, skills: texts };
    },
    commit(cp) {
      const status = cp.kind === "final" ? (cp.state.finished ? "finished" : "stopped") : "running";
      commitCheckpoint(store, { ...cp, meta: { status, ...(cp.kind === "final" && cp.record ? { summary: JSON.stringify(cp.record) } : {}) } });
      write(cp);
    },
  };
}

/**
 * The client's call accounting with the structured results it dropped (malformed or truncated)
 * per stage, so summary.json and each history.jsonl step show how many answers were thrown away.
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
function engineConfig(config: TrainConfig, client: SkilloptModelClient): EngineConfig {
  return { ...config, model: { ...config.model, optimizer: client.info.optimizer?.model ?? config.model.optimizer } };
}

function dryRun(config: TrainConfig, loaded: LoadedConfig, bench: Benchmark, splits: Splits, client: SkilloptModelClient, source: string, init: string): Record<string, unknown> {
  const sizes = deriveSizes(config, splits.train.length);
  const mode = normalizeUpdateMode(config.optimizer.skill_update_mode);
  const lr = normalizeLrControl(config.optimizer.lr_control_mode, mode);
  const sel = firstN(splits.val, config.evaluation.sel_env_num).length;
  const test = firstN(splits.test, config.evaluation.test_env_num).length;
  const plan = planCalls(config, sizes, splits.train.length, sel, test, mode, lr);
  // The run's prices: built-ins, the user pricing file, model.pricing.
  const prices = client.prices;
  const price = (r: "optimizer" | "target") => {
    const m = client.info[r]?.model;
    if (client.info[r]?.backend === "sim") return { input_per_mtok: 0, output_per_mtok: 0 };
    return m ? (prices.lookup(m) ?? null) : null;
  };
  const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  // Rough token sizes per call (the real figures come from the ledger after the run).
  const skillTok = Math.ceil((init.length / 4) * 1.5);
  const tokens = {
    target: { prompt: skillTok + 300, completion: Math.min(200, config.env.max_completion_tokens) },
    optimizer: { prompt: skillTok + config.gradient.minibatch_size * 600, completion: 1500 },
  };
  const estimate = (r: "optimizer" | "target", calls: number) => {
    const p = price(r);
    if (!p) return null;
    return Math.round(calls * ((tokens[r].prompt * p.input_per_mtok + tokens[r].completion * p.output_per_mtok) / 1e6) * 1e4) / 1e4;
  };
  const costT = estimate("target", sum(plan.target));
  const costO = estimate("optimizer", sum(plan.optimizer));
  return {
    dry_run: true,
    config: loaded.file,
    benchmark: bench.name,
    // What each role resolved to (a shipped placeholder model replaced per backend), before anything else.
    backends: client.info,
    initial_skill: source,
    splits: { train: splits.train.length, val: splits.val.length, test: splits.test.length, selection: sel, test_items: test },
    epochs: config.train.num_epochs,
    steps_per_epoch: sizes.stepsPerEpoch,
    total_steps: sizes.totalSteps,
    batch_size: config.train.batch_size,
    update_mode: mode,
    lr_control_mode: lr,
    edit_budgets: plan.budgets,
    predicted_calls: { target: { ...plan.target, total: sum(plan.target) }, optimizer: { ...plan.optimizer, total: sum(plan.optimizer) } },
    prices_per_mtok: { optimizer: price("optimizer"), target: price("target") },
    estimated_cost_usd: {
      target: costT,
      optimizer: costO,
      total: costT === null || costO === null ? null : Math.round((costT + costO) * 1e4) / 1e4,
      assumes_tokens_per_call: tokens,
    },
    note: "Calls are upper bounds: the selection cache and early rejection lower target calls; optimizer counts assume both failures and successes in every batch. The cost is a rough estimate from assumed tokens per call (null where a price is unknown); the run reports the real cost.",
  };
}

export default defineCommand({
  meta: { name: "train", description: "Train a skill: rollouts, reflection, gated edits, epochs (upstream's per-key flags such as --batch_size 8 are accepted too)" },
  args: {
    ...globalArgs,
    ...jsonArg,
    ...configArgs,
    out: { type: "string", description: "Output directory (default outputs/<env>_<YYYYMMDD-HHMMSS>, or env.out_root)", valueHint: "DIR" },
    resume: { type: "string", description: "Continue the run in DIR from its last committed step", valueHint: "DIR" },
    "max-cost": { type: "string", description: "Stop cleanly once this many dollars are spent (model.max_cost_usd)", valueHint: "USD" },
    cache: { type: "boolean", description: "Use the model-call cache (--no-cache turns it off)", default: true },
    "dry-run": { type: "boolean", description: "Resolve, load the data and print the plan and predicted calls; call no model" },
  },
  async run({ args, rawArgs }) {
    const cwd = process.cwd();
    const errWrite = (s: string) => process.stderr.write(s);
    let input: ConfigInput = {
      config: String(args.config ?? ""),
      set: repeatedFlag(rawArgs, "set"),
      cfgOptions: multiValueFlag(rawArgs, "cfg-options"),
      legacy: collectLegacy(rawArgs),
      envFile: typeof args["env-file"] === "string" ? args["env-file"] : undefined,
      cwd,
    };
    let out: string;
    let store: Store | undefined;
    let claimed: Store | undefined;
    if (args.resume) {
      out = resolve(cwd, String(args.resume));
      if (!existsSync(join(out, "state.sqlite"))) throw new UsageError(`--resume ${args.resume}: no run there (no state.sqlite)`, { hint: "pass the output directory of an earlier `skillopt train`" });
      store = openRunStore(join(out, "state.sqlite"));
      const claim = claimRun(store, process.pid, processAlive);
      if (!claim.ok) {
        throw new UsageError(`--resume ${args.resume}: the run is still in progress (pid ${claim.holder})`, { hint: "wait for it to finish, or stop it first" });
      }
      claimed = store;
      const meta = getRunMeta(store);
      const saved = JSON.parse(meta.input ?? "null") as ConfigInput | null;
      if (!saved) {
        throw new UsageError(`--resume ${args.resume}: the run was stopped before it started, so there is nothing to resume`, {
          hint: `start it again with the same command and --out ${args.resume}`,
        });
      }
      input = { ...saved, set: [...saved.set, ...input.set], cfgOptions: [...saved.cfgOptions, ...input.cfgOptions], legacy: { ...saved.legacy, ...input.legacy } };
    }
    const maxCost = args["max-cost"] === undefined ? undefined : Number(args["max-cost"]);
    if (maxCost !== undefined && !(maxCost > 0)) throw new UsageError(`--max-cost must be a positive number of dollars (got ${args["max-cost"]})`);
    const loaded = loadFromInput(input);
    const config = loaded.config;
    for (const w of loaded.warnings) errWrite(`  [warn] ${w}\n`);
    const bench = await resolveBenchmark(loaded);
    const init = resolveInitialSkill(loaded, bench, input.cwd);
    out ??= resolve(cwd, args.out ? String(args.out) : config.env.out_root || join("outputs", `${config.env.name}_${timestamp()}`));
    if (!args.resume && !args["dry-run"]) {
      // A store without a saved input belongs to a run stopped before it started: take it over.
      if (existsSync(join(out, "state.sqlite")) && holdsStartedRun(join(out, "state.sqlite"))) {
        throw new UsageError(`${relative(cwd, out) || out} already holds a run`, { hint: `continue it with --resume ${relative(cwd, out) || out}, or choose another --out` });
      }
      mkdirSync(out, { recursive: true });
      store ??= openRunStore(join(out, "state.sqlite"));
      const claim = claimRun(store, process.pid, processAlive);
      if (!claim.ok) throw new UsageError(`${relative(cwd, out) || out}: another skillopt train (pid ${claim.holder}) is writing this run`, { hint: "choose another --out" });
      claimed = store;
    }
    const controller = new AbortController();
    const client = await createModelClient(config, {
      env: loaded.environ,
      placeholderModels: loaded.placeholderModels,
      noCache: args.cache === false,
      ...(maxCost === undefined ? {} : { maxCostUsd: maxCost }),
      ...(args["dry-run"] ? {} : { ledgerStore: prepareStore(), runId: "train" }),
      onCall: (e: CallEvent) => void e,
    });
    function prepareStore(): Store {
      mkdirSync(out, { recursive: true });
      store ??= openRunStore(join(out, "state.sqlite"));
      useCallTables(store);
      return store;
    }
    const onSigint = () => controller.abort(new UsageError("interrupted"));
    try {
      const ctx = benchmarkContext(config, loaded, client, join(out, "work"), controller.signal);
      const splits = limitSplits(await bench.loadSplits(ctx), config.env.limit);
      if (args["dry-run"]) {
        const plan = dryRun(config, loaded, bench, splits, client, init.source, init.text);
        if (!output.quiet) errWrite(`  ${backendLine(client)}\n`);
        if (output.json) printJson(plan);
        else printResult(stringify(plan).trimEnd());
        return;
      }
      const runStore = prepareStore();
      const simNote = client.info.optimizer?.backend === "sim" || client.info.target?.backend === "sim" ? "sim (offline simulator)" : "";
      setRunMeta(runStore, {
        input: JSON.stringify(redactValue(savedInput(input))),
        config: JSON.stringify(redactValue(config)),
        benchmark: bench.name,
        pid: process.pid,
        status: "running",
        backend: simNote || `${client.info.optimizer?.backend}/${client.info.target?.backend}`,
        total_steps: deriveSizes(config, splits.train.length).totalSteps,
        ...(args.resume ? {} : { started_at: Date.now() }),
      });
      const roles = (["optimizer", "target"] as const).map((r) => `${r}=${client.info[r]?.backend === "sim" ? "sim (offline simulator, not a real model)" : `${client.info[r]?.backend ?? "?"} ${client.info[r]?.model ?? ""}`.trim()}`);
      writeFileAtomic(join(out, "config.resolved.yaml"), `# resolved from ${loaded.file}; secrets masked\n# backends: ${roles.join(", ")}\n${stringify(redactValue(config))}`);
      const events = createConsole({ write: errWrite, tty: Boolean(process.stderr.isTTY), quiet: output.quiet || output.json });
      const startLines = [`  ${backendLine(client)}`, `  [initial skill] ${init.source} (${init.text.length} chars)`, ...(init.note ? [`  [note] ${init.note}`] : []), `  [out] ${out}`];
      // The first line always says which backend runs (the simulator named as such), also under --json.
      if (output.json && !output.quiet) errWrite(`${startLines.join("\n")}\n`);
      else events.emit({ type: "run_start", lines: startLines });
      process.once("SIGINT", onSigint);
      process.once("SIGTERM", onSigint);
      const skills = new Map<string, string>();
      let result: Awaited<ReturnType<typeof train>>;
      try {
        result = await train({
          cfg: engineConfig(config, client),
          bench,
          ctx,
          splits,
          initialSkill: init.text,
          prompts: PROMPTS,
          recorder: runRecorder(runStore, out, skills),
          accounting: accountingWithDrops(client),
          events,
          clock: { now: () => Date.now() },
          signal: controller.signal,
        });
      } catch (err) {
        setRunMeta(runStore, { status: "interrupted" });
        if (controller.signal.aborted) {
          errWrite(`  interrupted — the run is resumable: skillopt train --resume ${relative(cwd, out) || out}\n`);
          process.exitCode = 130;
          return;
        }
        throw err;
      }
      const summary = { ...result.summary, out, backend: simNote || undefined };
      writeJsonAtomic(join(out, "summary.json"), summary);
      const report = writeReportAfterRun(out);
      if (output.json) printJson(summary);
      else printResult(`${resultText(summary)}${report ? `\n  report:     ${report}` : ""}`);
    } finally {
      process.removeListener("SIGINT", onSigint);
      process.removeListener("SIGTERM", onSigint);
      await client.close();
      if (claimed) releaseRun(claimed, process.pid);
      store?.close();
    }
  },
});

function pct(x: unknown): string {
  return typeof x === "number" ? x.toFixed(3) : "—";
}

/** The human result: the three scores, counts, calls and cost. */
export function resultText(s: Record<string, unknown>): string {
  const g = (k: string) => (s[k] ?? {}) as Record<string, unknown>;
  const calls = g("calls");
  const lines = [
    `${s.status === "finished" ? "Training finished" : `Training stopped (${s.stopped_reason})`}${s.backend ? ` — ${s.backend}` : ""}`,
    `  selection: baseline ${pct(g("baseline").selection)} → best ${pct(g("best").selection)} (step ${g("best").step}) · final ${pct(g("final").selection)}`,
    `  test:      baseline ${pct(g("baseline").test)} → best ${pct(g("best").test)} · final ${pct(g("final").test)}`,
    `  steps ${s.steps}/${s.total_steps}: accepted ${s.accepted}, rejected ${s.rejected} (early ${s.rejected_early}), skipped ${s.skipped}`,
    `  calls ${calls.total} (cached ${calls.cached}), selection rollouts saved by early rejection ${s.selection_calls_saved}, cost ${typeof s.cost_usd === "number" ? `$${s.cost_usd.toFixed(4)}` : "unknown"}, wall ${s.wall_s}s`,
    `  best skill: ${join(String(s.out), "best_skill.md")}`,
  ];
  return lines.join("\n");
}
