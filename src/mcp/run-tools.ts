import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { configRefusals, type LaunchPolicy, pathRefusal } from "../config/index.ts";
import { ConfigError } from "../lib/index.ts";
import { isRunDir, listRunRows, newRunFolder, readRunRow, readRunWarnings } from "../run/index.ts";
import type { Child, CliOutcome, Children } from "./children.ts";
import { lastLine, toolOutcome } from "./cli-call.ts";
import { type Args, flagsOf } from "./fields.ts";
import type { Tool } from "./server.ts";

/** A training run this server started, watched until it ends. */
interface Launch {
  out: string;
  child: Child;
  outcome?: CliOutcome;
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

const CONFIG_FIELDS = {
  config: {
    type: "string",
    required: true,
    description: "Bundled config name (see `skillopt configs`, e.g. quickstart) or a YAML file path",
  },
  set: { type: "strings", description: "Overrides, each section.key=value (as --set)" },
} as const;

/**
 * The dashboard's launch policy for a train or eval call: no program, no endpoint, no sandbox
 * change, no file outside the server's folder (from the call or from a project config) unless
 * `skillopt mcp --allow-commands` started the server. One line per refusal, or undefined.
 */
function refused(args: Args, paths: readonly string[], cwd: string, policy: LaunchPolicy): string | undefined {
  if (policy.allowCommands) return undefined;
  const lines: string[] = [];
  for (const name of paths) {
    const value = args[name];
    if (typeof value !== "string" || value === "") continue;
    const line = pathRefusal(name, value, cwd, policy);
    if (line) lines.push(line);
  }
  try {
    const set = Array.isArray(args.set) ? args.set.map(String) : [];
    lines.push(...configRefusals({ config: String(args.config), set, cwd, policy }));
  } catch (err) {
    // A config that does not load fails the same way in the CLI, before it does anything: let the
    // CLI say so in its own words.
    if (!(err instanceof ConfigError)) throw err;
  }
  return lines.length ? lines.join("; ") : undefined;
}

/** What the run tools share: the CLI children, the folder and policy, the runs this server started. */
interface RunToolsCtx {
  children: Children;
  cwd: string;
  policy: LaunchPolicy;
  launches: Map<string, Launch>;
  runDir: (run: string) => string;
}

/** run_status: a run's row, warnings, and the process of a run this server started. */
function runStatusTool(ctx: RunToolsCtx): Tool {
  const { launches, runDir } = ctx;
  return {
    name: "run_status",
    title: "Run status",
    description:
      "Status of one run: running/finished/failed/interrupted…, steps done of total, best selection score, cost, and the warnings it " +
      "recorded (typed: code and facts). For a run started with the " +
      "train tool, also whether its process is alive and its error line if it failed. Call it to follow a training run.",
    fields: { run: { type: "string", required: true, description: "Run folder path, or its name under outputs/" } },
    annotations: { readOnlyHint: true },
    async call(args) {
      const dir = runDir(String(args.run));
      const launch = launches.get(dir);
      const row = isRunDir(dir) ? readRunRow(dir) : undefined;
      const proc = launch
        ? {
            pid: launch.child.proc.pid,
            alive: launch.outcome === undefined,
            exit_code: launch.outcome?.code ?? null,
            error:
              launch.outcome && launch.outcome.code !== 0
                ? ((toolOutcome("train", launch.outcome) as { message?: string }).message ??
                  lastLine(launch.outcome.stderr) ??
                  null)
                : null,
          }
        : null;
      // While the child that writes the folder is alive, a store not yet readable means it is starting.
      const status =
        proc?.alive && (!row || row.status === "unknown")
          ? "starting"
          : row && row.status !== "unknown"
            ? row.status
            : proc?.error
              ? "failed"
              : (row?.status ?? "unknown");
      return {
        ok: true,
        data: {
          dir,
          run_id: basename(dir),
          status,
          steps: row?.steps ?? 0,
          total_steps: row?.total_steps ?? null,
          best: row?.best ?? null,
          row: row ?? null,
          /** The faults the run survived and its stops (warnings.jsonl), as typed records. */
          warnings: isRunDir(dir) ? readRunWarnings(dir).warnings : [],
          process: proc,
        },
      };
    },
  };
}

/** eval: `skillopt eval --json` in a child, awaited (cancelling the call stops it). */
function evalTool(ctx: RunToolsCtx): Tool {
  const { children, cwd, policy } = ctx;
  return {
    name: "eval",
    title: "Score a skill",
    description:
      "Score a skill file on a benchmark split, as `skillopt eval --json`: returns the summary (hard and soft scores, items, cost, where results " +
      "were saved); with baseline, the pull-request check (verdict, flips, Δ and its interval). Waits for the evaluation to end; cancel the " +
      "call to stop it.",
    fields: {
      ...CONFIG_FIELDS,
      skill: { type: "string", required: true, description: "Skill file to score (e.g. a run's best_skill.md)" },
      split: { type: "string", description: "train | val | test | all (default all)" },
      out: { type: "string", description: "Output folder (default outputs/eval_<env>_<timestamp>)" },
      fail_under: { type: "number", description: "Report passed=false when the hard score is below this" },
      baseline: {
        type: "string",
        description:
          "Compare with this (older) skill on the same items and samples: flips both ways, Δ with its interval, verdict improved/regressed/undecided",
      },
      baseline_label: { type: "string", description: "With baseline: what to call it in the report (e.g. main)" },
      fail_on: {
        type: "string",
        description: "With baseline: regression (default) or undecided; sets failed=true in the result",
      },
      cache: { type: "boolean", description: "Use the model-call cache (default true)" },
    },
    // It writes a results folder, calls the configured model (which costs money) and may run the
    // tasks' evaluator: not read-only, not harmless.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    async call(args, signal) {
      const refusal = refused(args, ["skill", "baseline", "out"], cwd, policy);
      if (refusal) return { ok: false, message: `eval: ${refusal}` };
      const noCache = args.cache === false ? ["--no-cache"] : [];
      const out = await children.run(
        [
          "eval",
          ...flagsOf(args, [
            "config",
            "set",
            "skill",
            "split",
            "out",
            "fail_under",
            "baseline",
            "baseline_label",
            "fail_on",
          ]),
          ...noCache,
          "--json",
        ],
        signal,
      );
      return toolOutcome("eval", out);
    },
  };
}

/** The run tools: list, status, train (detached), eval, report. */
export function runTools(children: Children, cwd: string, policy: LaunchPolicy): Tool[] {
  const launches = new Map<string, Launch>();
  const outputs = join(cwd, "outputs");

  /** A run folder from a path, or a name under outputs/. */
  function runDir(run: string): string {
    const direct = resolve(cwd, run);
    if (isDir(direct) || launches.has(direct)) return direct;
    const named = join(outputs, run);
    if (isDir(named) || launches.has(named)) return named;
    throw new Error(
      `${run}: no such run folder (neither a path nor a name under ${outputs}; the runs tool lists them)`,
    );
  }

  const ctx: RunToolsCtx = { children, cwd, policy, launches, runDir };
  return [
    {
      name: "runs",
      title: "List runs",
      description:
        "List training and eval runs under a folder (default outputs/) with status, steps, best score and cost, as `skillopt runs --json`.",
      fields: { dir: { type: "string", description: "Folder holding runs (default outputs/)" } },
      annotations: { readOnlyHint: true },
      async call(args) {
        const root = resolve(cwd, String(args.dir ?? "outputs"));
        if (!isDir(root)) {
          if (args.dir) return { ok: false, message: `${args.dir}: no such directory` };
          return { ok: true, data: { runs: [] } };
        }
        return { ok: true, data: { runs: listRunRows(root) } };
      },
    },
    runStatusTool(ctx),
    {
      name: "train",
      title: "Start a training run",
      description:
        "Start `skillopt train --config … --out DIR` in the background and return at once with the run id and folder; follow it with run_status. " +
        "`--config quickstart` trains offline on the built-in simulator.",
      fields: {
        ...CONFIG_FIELDS,
        out: { type: "string", description: "Output folder (default outputs/<config>_<timestamp>)" },
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      async call(args) {
        const refusal = refused(args, ["out"], cwd, policy);
        if (refusal) return { ok: false, message: `train: ${refusal}` };
        const out = args.out
          ? resolve(cwd, String(args.out))
          : newRunFolder(outputs, String(args.config), (p) => launches.has(p));
        if (launches.get(out)?.outcome === undefined && launches.has(out))
          return { ok: false, message: `${out}: a run this server started is still writing there` };
        const child = children.start(["train", ...flagsOf(args, ["config", "set"]), `--out=${out}`, "--json"]);
        const launch: Launch = { out, child };
        launches.set(out, launch);
        void child.done.then((o) => {
          launch.outcome = o;
        });
        return { ok: true, data: { run_id: basename(out), out, pid: child.proc.pid, status: "started" } };
      },
    },
    evalTool(ctx),
    {
      name: "report",
      title: "Report location",
      description:
        "Write (or refresh) a run's self-contained HTML report and return its path, as `skillopt report DIR --json`.",
      fields: { run: { type: "string", required: true, description: "Run folder path, or its name under outputs/" } },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      async call(args: Args, signal) {
        const dir = runDir(String(args.run));
        return toolOutcome("report", await children.run(["report", dir, "--json"], signal));
      },
    },
  ];
}
