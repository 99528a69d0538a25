import { join, relative, resolve } from "node:path";
import { defineCommand } from "citty";
import { costUnknownWarnings, createModelClient, type SkilloptModelClient } from "../backends/index.ts";
import {
  type Benchmark,
  byTaskType,
  Evaluator,
  firstN,
  formatViolation,
  packageLimits,
  gateSettings,
  meanScores,
  NO_EVENTS,
  noAnswerError,
  type Role,
  type TaskItem,
} from "../engine/index.ts";
import { compareFlags, runComparison } from "./eval-compare.ts";
import {
  closest,
  compactTimestamp,
  NoAnswerError,
  readSkillFile,
  redactText,
  UsageError,
  writeFileAtomic,
  writeJsonAtomic,
} from "../lib/index.ts";
import { createConsole, formatViolationText } from "../report/index.ts";
import { recordingWarnings } from "../run/index.ts";
import { cacheArg, configArgs, globalArgs, jsonArg } from "./args.ts";
import { output, printJson, printResult } from "./output.ts";
import { writeReportAfterRun } from "./run-report.ts";
import { collectLegacy, LEGACY_EVAL_FLAGS } from "./legacy.ts";
import { batchProgress } from "./batch-progress.ts";
import {
  backendLine,
  benchmarkContext,
  configInputOf,
  limitSplits,
  loadFromInput,
  resolveBenchmark,
} from "./run-setup.ts";
import { describeNoAnswer, whatToFix } from "./no-answer.ts";
import { cliNeeds, preflight, roleNeeds } from "./preflight.ts";
import { COMMAND_META } from "./command-meta.ts";
import { isSkillFolder, packFolder, readSkillFolder } from "./skill-folder.ts";

const SPLITS: Record<string, "train" | "val" | "test" | "all"> = {
  train: "train",
  val: "val",
  valid_seen: "val",
  selection: "val",
  valid: "val",
  test: "test",
  valid_unseen: "test",
  all: "all",
};

/** Canonical split for a name or upstream alias; an unknown name is a usage error (spec §10.5). */
function canonicalSplit(name: string): "train" | "val" | "test" | "all" {
  const s = SPLITS[name.trim().toLowerCase()];
  if (!s)
    throw new UsageError(
      `--split ${name}: unknown split`,
      { flag: "split", value: name, choices: Object.keys(SPLITS), suggestion: closest(name, Object.keys(SPLITS)) },
      { hint: "use train, val (valid_seen), test (valid_unseen) or all" },
    );
  return s;
}

/** The --baseline flags, read and checked; undefined without --baseline. */
function baselineOptions(args: Record<string, unknown>, cwd: string) {
  if (!args.baseline) {
    const stray = ["baseline-label", "title", "markdown", "noise-items"].find((k) => args[k] !== undefined);
    if (stray)
      throw new UsageError(`--${stray} needs --baseline OLD_SKILL`, {
        flag: stray,
        value: String(args[stray]),
        expected: "--baseline OLD_SKILL given too",
      });
    return undefined;
  }
  const path = resolve(cwd, String(args.baseline));
  const raw = args["noise-items"];
  const noiseItems = raw === undefined ? undefined : Number(raw);
  if (noiseItems !== undefined && !(Number.isInteger(noiseItems) && noiseItems >= 0))
    throw new UsageError(`--noise-items must be a whole number ≥ 0 (got ${raw})`, {
      flag: "noise-items",
      value: raw,
      expected: "integer >= 0",
    });
  return {
    baseline: { path, text: readSkillFile(path, "--baseline"), label: String(args["baseline-label"] ?? "baseline") },
    title: args.title === undefined ? undefined : String(args.title),
    markdown: args.markdown === undefined ? undefined : String(args.markdown),
    noiseItems,
    ...compareFlags(args),
  };
}

export default defineCommand({
  meta: COMMAND_META.eval,
  args: {
    ...globalArgs,
    ...jsonArg,
    ...configArgs,
    skill: { type: "string", description: "Skill file to evaluate", valueHint: "FILE" },
    split: {
      type: "string",
      description: "train | val (valid_seen) | test (valid_unseen) | all",
      default: "all",
      valueHint: "SPLIT",
    },
    out: { type: "string", description: "Output directory (default outputs/eval_<env>_<timestamp>)", valueHint: "DIR" },
    "fail-under": {
      type: "string",
      description: "Exit 1 when the hard score is below this (for CI)",
      valueHint: "SCORE",
    },
    ...cacheArg,
    baseline: {
      type: "string",
      description:
        "Compare with this skill on the same items and samples (a pull-request check): flips, Δ with its interval, verdict",
      valueHint: "OLD_SKILL",
    },
    "baseline-label": {
      type: "string",
      description: "With --baseline: what to call the baseline in the report (e.g. the base branch)",
      valueHint: "TEXT",
    },
    title: {
      type: "string",
      description: "With --baseline: the report's heading (default: the skill path)",
      valueHint: "TEXT",
    },
    format: {
      type: "string",
      description: "With --baseline: text or markdown (a comment-ready report on stdout)",
      default: "text",
      valueHint: "FORMAT",
    },
    markdown: {
      type: "string",
      description: "With --baseline: also write the Markdown report to this file",
      valueHint: "FILE",
    },
    "fail-on": {
      type: "string",
      description:
        "With --baseline: regression (exit 1 on a confident regression, the default) or undecided (also on undecided)",
      default: "regression",
      valueHint: "WHEN",
    },
    "noise-items": {
      type: "string",
      description:
        "With --baseline: baseline items re-sampled to measure the flip rate for the power statement (default evaluation.noise_floor_items)",
      valueHint: "N",
    },
  },
  async run({ args, rawArgs }) {
    const cwd = process.cwd();
    const { skillPath, skill, split, failUnder, compare } = evalOptions(args, cwd);
    const { out_root: outRoot, ...legacy } = collectLegacy(rawArgs, LEGACY_EVAL_FLAGS);
    const loaded = loadFromInput(configInputOf(args, rawArgs, legacy));
    const config = loaded.config;
    for (const w of loaded.warnings) process.stderr.write(`  [warn] ${w}\n`);
    const bench = await resolveBenchmark(loaded);
    const problem = formatViolation(skill, skill, config.optimizer.max_skill_tokens, packageLimits(config.optimizer));
    if (problem)
      process.stderr.write(
        `  [warn] --skill ${args.skill}: ${formatViolationText(problem)} (training would reject this skill)\n`,
      );
    const outArg = args.out ?? outRoot;
    const out = resolve(
      cwd,
      outArg ? String(outArg) : join("outputs", `eval_${config.env.name}_${compactTimestamp()}`),
    );
    // The target, plus the roles the benchmark's scorer calls (a judge runs on the optimizer role).
    const roles: Role[] = ["target", ...(bench.rolesNeeded?.(config.env as Record<string, unknown>) ?? [])];
    // A batch can take hours: its lines go to stderr also under --json (stdout keeps the result); --quiet drops them.
    const quietBatch = output.quiet;
    // Rerunning an eval whose batch is still pending (killed while it waited) re-attaches to it by
    // the requests' cache keys, whatever --out says: nothing is submitted twice.
    const onBatch = batchProgress(out, { write: (s) => process.stderr.write(s), quiet: quietBatch });
    const client = await createModelClient(config, {
      env: loaded.environ,
      placeholderModels: loaded.placeholderModels,
      noCache: args.cache === false,
      roles,
      onBatch,
    });
    const controller = new AbortController();
    try {
      const ctx = benchmarkContext(config, loaded, client, join(out, "work"), controller.signal);
      const splits = limitSplits(await bench.loadSplits(ctx), config.env.limit);
      const n = config.evaluation.test_env_num;
      const items: TaskItem[] =
        split === "all" ? [...splits.train, ...splits.val, ...splits.test] : firstN(splits[split], n);
      if (!items.length)
        throw new UsageError(`split ${split} of ${bench.name} is empty`, {
          flag: "split",
          value: split,
          expected: `a split of ${bench.name} that holds items`,
        });
      await preflight([
        ...roleNeeds(client, roles, { optimizer: "the judge" }),
        ...cliNeeds(client, roles, loaded.environ),
      ]);
      const quiet = output.quiet || output.json;
      if (!quiet)
        process.stderr.write(
          `  ${backendLine(client)}\n  [eval] split=${split} items=${items.length} skill=${relative(cwd, skillPath)}\n`,
        );
      // A model without a price (a mistyped name) is named now, not only as "cost unknown" at the end.
      for (const w of costUnknownWarnings(client)) process.stderr.write(`  [warn] ${w}\n`);
      const events = recordingWarnings(
        out,
        quiet
          ? NO_EVENTS
          : createConsole({ write: (s) => process.stderr.write(s), tty: Boolean(process.stderr.isTTY), quiet: false }),
        { fresh: true },
      );
      const ev = new Evaluator(bench, ctx, config.env.workers ?? 16, events);
      if (compare) {
        const gate = gateSettings(config.evaluation);
        const noiseItems = compare.noiseItems ?? gate.noiseFloorItems;
        await runComparison({
          ev,
          client,
          gate,
          items,
          candidate: { path: skillPath, text: skill },
          baseline: compare.baseline,
          title: compare.title ?? relative(cwd, skillPath),
          benchmark: bench.name,
          split,
          backend: client.info.target?.backend === "sim" ? "sim (offline simulator)" : client.info.target?.backend,
          out,
          format: compare.format,
          markdownFile: compare.markdown,
          failOn: compare.failOn,
          noiseItems,
          cwd,
          warnings: events.given,
        });
        return;
      }
      await scoreSkill({ ev, client, bench, skill, skillPath, items, split, out, failUnder, warnings: events.given });
    } finally {
      await client.close();
    }
  },
});

/** The flags of eval, read and checked before anything is loaded. */
function evalOptions(args: Record<string, unknown>, cwd: string) {
  if (!args.skill) throw new UsageError("--skill FILE is required", { flag: "skill", expected: "skill file" });
  const given = resolve(cwd, String(args.skill));
  // A skill folder is scored by its SKILL.md.
  const skillPath = isSkillFolder(given) ? join(given, "SKILL.md") : given;
  const skill = isSkillFolder(given)
    ? packFolder(readSkillFolder(given, "--skill"), readSkillFile(skillPath, "--skill"), "train")
    : readSkillFile(skillPath, "--skill");
  const split = canonicalSplit(String(args.split ?? "all"));
  const failUnder = args["fail-under"] === undefined ? undefined : Number(args["fail-under"]);
  if (failUnder !== undefined && !(failUnder >= 0 && failUnder <= 1))
    throw new UsageError(`--fail-under must be a score between 0 and 1 (got ${args["fail-under"]})`, {
      flag: "fail-under",
      value: args["fail-under"],
      expected: "number 0-1",
    });
  const compare = baselineOptions(args, cwd);
  if (compare && failUnder !== undefined)
    throw new UsageError(
      "--fail-under and --baseline cannot be combined",
      { flag: "fail-under", value: failUnder, conflicts: ["fail-under", "baseline"] },
      { hint: "--baseline fails on a confident regression (--fail-on undecided to fail on undecided too)" },
    );
  return { skillPath, skill, split, failUnder, compare };
}

/**
 * What a task cost the target with the skill loaded (mean prompt + completion tokens of its calls,
 * and dollars, null when a price is unknown), when every result carries it (the target reported
 * usage on every call): the skill's deployed cost, as the weighted objective charges it.
 */
function deployedPerTask(
  results: readonly Record<string, unknown>[],
): { tokens: number; cost_usd: number | null } | undefined {
  if (!results.length || results.some((r) => typeof r.task_tokens !== "number")) return undefined;
  const tokens = results.reduce((a, r) => a + (r.task_tokens as number), 0) / results.length;
  const known = results.every((r) => typeof r.task_cost_usd === "number");
  const cost = known ? results.reduce((a, r) => a + (r.task_cost_usd as number), 0) / results.length : null;
  return { tokens: Math.round(tokens), cost_usd: cost === null ? null : Math.round(cost * 1e8) / 1e8 };
}

function perTaskLine(p: ReturnType<typeof deployedPerTask>): string {
  if (!p) return "";
  const cost = p.cost_usd === null ? "price unknown" : p.cost_usd === 0 ? "$0" : `$${p.cost_usd.toPrecision(2)}`;
  return `\nPer task: ${p.tokens.toLocaleString("en-US")} tokens, ${cost} (the target's reported usage)`;
}

/**
 * One skill scored on the split: results.jsonl and eval_summary.json written, the result
 * printed; items without an answer fail the evaluation (no score), --fail-under checks the hard score.
 */
async function scoreSkill(p: {
  ev: Evaluator;
  client: SkilloptModelClient;
  bench: Benchmark;
  skill: string;
  skillPath: string;
  items: TaskItem[];
  split: string;
  out: string;
  failUnder: number | undefined;
  warnings: readonly unknown[];
}): Promise<void> {
  const { ev, client, bench, skill, skillPath, items, split, out, failUnder } = p;
  const res = await ev.run(skill, items, `eval ${split}`, undefined, undefined, 0, "eval");
  const totals = client.snapshot();
  const sim = client.info.target?.backend === "sim";
  const rows = [...res.results, ...res.errored.map((e) => ({ id: e.id, error: e.reason, role: e.role }))];
  writeFileAtomic(join(out, "results.jsonl"), rows.map((r) => `${JSON.stringify(r)}\n`).join(""));
  const common = {
    skill: skillPath,
    split,
    n_items: items.length,
    benchmark: bench.name,
    backend: sim ? "sim (offline simulator)" : client.info.target?.backend,
    calls: { total: totals.calls, cached: totals.cached },
    cost_usd: totals.cost_usd,
  };
  if (res.errored.length) {
    // Items without an answer make no score: the evaluation failed, and says where.
    const err = describeNoAnswer(noAnswerError(res, `evaluation of split ${split}`), client) as NoAnswerError;
    writeJsonAtomic(join(out, "eval_summary.json"), {
      ...common,
      status: "failed",
      error: redactText(err.message),
      hard: null,
      soft: null,
      answered: res.results.length,
      errored: res.errored.length,
      ...(failUnder === undefined ? {} : { fail_under: failUnder, passed: false }),
    });
    writeReportAfterRun(out);
    if (failUnder !== undefined)
      process.stderr.write(
        `  [fail-under] not checked: ${res.errored.length} of ${items.length} items got no answer, so there is no score to compare with ${failUnder}\n`,
      );
    throw new NoAnswerError(err.message, {
      cause: err,
      data: err.data,
      hint: `nothing was scored; ${whatToFix(err)}, then rerun (partial results: ${join(out, "results.jsonl")})`,
    });
  }
  const { hard, soft } = meanScores(res.results);
  const byType = byTaskType(res.results);
  const perTask = deployedPerTask(res.results);
  const summary = {
    ...common,
    status: "finished",
    hard: Math.round(hard * 1e6) / 1e6,
    soft: Math.round(soft * 1e6) / 1e6,
    by_type: byType,
    errored: 0,
    ...(perTask ? { per_task: perTask } : {}),
    ...(failUnder === undefined ? {} : { fail_under: failUnder, passed: hard >= failUnder }),
    ...(bench.splitMetrics ? { metrics: bench.splitMetrics(res.results) } : {}),
  };
  writeJsonAtomic(join(out, "eval_summary.json"), summary);
  const report = writeReportAfterRun(out);
  if (output.json) printJson({ ...summary, warnings: p.warnings });
  else
    printResult(
      `Results: hard=${summary.hard.toFixed(4)} soft=${summary.soft.toFixed(4)} (n=${items.length}, split=${split}${
        sim ? ", sim (offline " + "simulator)" : ""
      })${metricsLine(summary.metrics)}${perTaskLine(perTask)}\nSaved to: ${out}${report ? `\nReport: ${report}` : ""}`,
    );
  if (failUnder !== undefined && hard < failUnder) {
    process.stderr.write(
      `  [fail-under] hard=${hard.toFixed(4)} is below ${failUnder}: all ${items.length} items were answered, and the answers scored below the threshold\n`,
    );
    process.exitCode = 1;
  }
}

/** The benchmark's own figures over the split (trigger precision/recall/F1), one line, or "". */
function metricsLine(m: Record<string, number | null> | undefined): string {
  if (!m) return "";
  const f = (v: number | null | undefined) =>
    v === null || v === undefined ? "n/a" : Number.isInteger(v) ? String(v) : v.toFixed(4);
  return `\n${Object.entries(m)
    .map(([k, v]) => `${k}=${f(v)}`)
    .join(" ")}`;
}
