import { defineCommand } from "citty";
import {
  adoptNight,
  configurePromptOverrides,
  createSleepBackend,
  type HandoffBackend,
  handoffPin,
  harvest,
  type HarvestPort,
  loadTasksFile,
  type NightOutcome,
  PendingCallsError,
  resolveClaudeHome,
  resolveSkillPath,
  runNight,
  sanitizeLine,
  type SessionState,
  skillRoots,
  type SleepConfig,
  SOURCE_NAMES,
  type SourceName,
  splitFractions,
  type TaskRecord,
  tasksPayload,
  writeHandoffPin,
} from "../../sleep/index.ts";
import { existsSync, renameSync } from "node:fs";
import { join } from "node:path";
import { DataError, homeDir, log, StagingError, UsageError } from "../../lib/index.ts";
import { harvestState, openHarvestStore, openSleepStore } from "../../store/index.ts";
import { batchShown } from "../batch-progress.ts";
import { canDrawProgress, output, printJson, printResult } from "../output.ts";
import type { AnyCommand } from "../command-def.ts";
import { sleepArgs, sleepSetup, sourceLocations, whereSessions } from "./common.ts";
import { connectModels } from "./models.ts";
import { processEnv } from "../../config/index.ts";
import { batchText, nightEventText } from "../../report/index.ts";

/** Sources a `transcript_source` value names. */
export function sourcesOf(cfg: SleepConfig): SourceName[] {
  const s = cfg.transcript_source;
  if (Array.isArray(s)) return [...new Set(s)] as SourceName[];
  if (s === "all") return [...SOURCE_NAMES];
  if (s === "auto") return ["codex", "claude"];
  return [s as SourceName];
}

/** The harvest port for a config: every selected source, incremental over the state database. */
function harvestPortFor(
  cfg: SleepConfig,
  project: string,
  statePath: string,
  env: Readonly<Record<string, string | undefined>>,
): HarvestPort {
  return async ({ sinceMs, limit }) => {
    const store = openHarvestStore(statePath);
    const scope = cfg.projects === "all" ? "all" : cfg.projects === "invoked" ? "invoked" : cfg.projects;
    const opts = {
      scope,
      invokedProject: project,
      limit,
      sinceMs,
      env,
      state: harvestState<SourceName, SessionState>(store),
      locations: sourceLocations(cfg),
      readThreads: cfg.harvest_threads ?? "auto",
      prefetch: cfg.harvest_prefetch ?? "auto",
    } as const;
    const sources = sourcesOf(cfg);
    let r = await harvest({ ...opts, sources: cfg.transcript_source === "auto" ? ["codex"] : sources });
    if (cfg.transcript_source === "auto" && r.digests.length === 0) r = await harvest({ ...opts, sources: ["claude"] });
    return {
      digests: r.digests,
      commit: () => r.commit(),
      close: () => store.close(),
    };
  };
}

function printHuman(out: NightOutcome, dry: boolean, adopted: string[], where: () => string): void {
  const r = out.report;
  const lines = [`[sleep] night ${out.night}: ${out.nSessions} sessions -> ${r.n_tasks} tasks`];
  if (out.nSessions === 0) lines.push(`[sleep] ${where()}`);
  const f = (x: number | null) => (x === null ? "—" : x.toFixed(3));
  // Nothing replayed is no score (not 0.000 -> 0.000).
  const scores =
    r.n_replayed === 0 ? "not scored (nothing was replayed)" : `${f(r.baseline_score)} -> ${f(r.candidate_score)}`;
  lines.push(`[sleep] held-out ${scores} => ${r.gate_action} (accepted=${r.accepted})`);
  for (const e of r.edits) lines.push(`   + [${e.target}/${e.op}] ${sanitizeLine(e.content)}`);
  if (r.rejected_edits.length) {
    lines.push(
      r.gate_action === "reject_unverified"
        ? "[sleep] not validated (kept as suggestions):"
        : "[sleep] rejected by gate:",
    );
    for (const e of r.rejected_edits) lines.push(`   - [${e.target}/${e.op}] ${sanitizeLine(e.content)}`);
  }
  for (const n of r.notes) lines.push(`[sleep] note: ${sanitizeLine(n)}`);
  if (!dry && out.stagingDir) lines.push(`[sleep] staged: ${out.stagingDir}`);
  if (out.proposals.length)
    lines.push(
      `[sleep] ${dry ? "would change" : "proposed changes to"}: ${out.proposals.map((p) => sanitizeLine(p.baseline.path)).join(", ")}`,
    );
  if (out.skillProposals.length) {
    lines.push(
      `[sleep] per-skill proposals: ${out.skillProposals.map((p) => JSON.stringify(sanitizeLine(p.name))).join(", ")}`,
    );
    lines.push(
      "[sleep] adopt them with `skillopt sleep adopt --skill NAME` (repeatable) or `--all-skills`; the managed pair with `--legacy`",
    );
  }
  if (adopted.length) lines.push(`[sleep] auto-adopted: ${adopted.join(", ")}`);
  else if (!dry && out.proposals.length)
    lines.push("[sleep] review with `skillopt sleep diff`, then run `skillopt sleep adopt` to apply it");
  else if (!dry && out.stagingDir && !out.skillProposals.length)
    lines.push("[sleep] nothing to adopt: no proposal changed a file");
  printResult(lines.join("\n"));
}

/** Per-phase progress on stderr: a redrawn bar on a TTY, one line per phase start and end otherwise. */
function progressRenderer(tty: boolean) {
  let open = false;
  const clear = () => {
    if (open) process.stderr.write("\n");
    open = false;
  };
  return {
    line(text: string) {
      clear();
      process.stderr.write(`${text}\n`);
    },
    update(phase: string, done: number, total: number) {
      if (!tty) {
        if (done === 0 || done === total) process.stderr.write(`[sleep] replay ${phase}: ${done}/${total}\n`);
        return;
      }
      const width = 24;
      const fill = total ? Math.round((done / total) * width) : width;
      process.stderr.write(
        `\r[sleep] ${phase.padEnd(22)} [${"#".repeat(fill)}${".".repeat(width - fill)}] ${done}/${total}`,
      );
      open = true;
      if (done === total) clear();
    },
    end: clear,
  };
}

/** A --tasks-file, refused unless reviewed when a model will replay it (exit 2). */
function reviewedTasksFile(path: string, cfg: SleepConfig): ReturnType<typeof loadTasksFile> {
  const seedTasks = loadTasksFile(path, { holdoutFraction: cfg.holdout_fraction, seed: cfg.seed });
  for (const w of seedTasks.warnings) log.warn(`[sleep] warning: ${w}`);
  if (cfg.backend !== "mock" && seedTasks.meta.reviewed !== true) {
    throw new DataError(
      `${seedTasks.meta.tasks_file}: not reviewed; set "reviewed": true after checking it before replaying it with backend ${cfg.backend}`,
      { data: { path: seedTasks.meta.tasks_file, input: "--tasks-file", problem: "not_reviewed" } },
    );
  }
  return seedTasks;
}

/**
 * Ctrl-C (or a stop from the dashboard) ends the night where it is: the next review settles it
 * (forgets it, or keeps it as interrupted when its proposal was staged), as after a kill. Returns
 * the function that removes the handlers.
 */
function stopOnSignal(bar: { end(): void }): () => void {
  const onStop = (signal: NodeJS.Signals) => {
    bar.end();
    process.stderr.write(
      `[sleep] interrupted: the next review settles this night (a proposal it had staged stays adoptable)\n`,
    );
    // The signal again, without this handler: the process ends as the signal ends it.
    unlisten();
    process.kill(process.pid, signal);
  };
  const unlisten = () => {
    process.removeListener("SIGINT", onStop);
    process.removeListener("SIGTERM", onStop);
  };
  process.once("SIGINT", onStop);
  process.once("SIGTERM", onStop);
  return unlisten;
}

/** Archive a handoff round's data once its night is staged. */
function archiveRound(dir: string, night: number): void {
  const done = existsSync(`${dir}.night${night}.done`)
    ? `${dir}.night${night}.done.${Date.now()}`
    : `${dir}.night${night}.done`;
  try {
    renameSync(dir, done);
  } catch (err) {
    throw new StagingError(`cannot archive the handoff round data ${dir}: ${String(err)}`, { data: { path: dir } });
  }
  process.stderr.write(`[sleep] archived round data -> ${done}\n`);
}

/** A night's `--json` answer. */
function nightJson(
  out: NightOutcome,
  dry: boolean,
  adopted: string[],
  seedMeta: ReturnType<typeof loadTasksFile>["meta"] | undefined,
): Record<string, unknown> {
  const r = out.report;
  return {
    night: out.night,
    accepted: r.accepted,
    gate_action: r.gate_action,
    no_edits_reason: r.no_edits_reason,
    baseline: r.baseline_score,
    candidate: r.candidate_score,
    n_tasks: r.n_tasks,
    tasks_source: r.tasks_source,
    n_sessions: out.nSessions,
    n_accepted_edits: r.edits.length,
    n_rejected_edits: r.rejected_edits.length,
    edits: r.edits,
    rejected_edits: r.rejected_edits,
    gate_no_regression: r.gate_no_regression,
    gate_trials: r.gate_trials,
    skill_groups: r.skill_groups,
    notes: r.notes,
    staging_dir: dry ? null : out.stagingDir || null,
    staged_skills: out.skillProposals.map((p) => p.name),
    proposals: out.proposals.map((p) => ({ which: p.which, live_path: p.baseline.path })),
    adopted,
    budget: r.budget,
    ...(seedMeta ? { tasks_file: seedMeta.tasks_file, tasks_reviewed: seedMeta.reviewed === true } : {}),
  };
}

/** A handoff night waiting on answers (exit 3): where the prompts are and where the answers go. */
function printPending(err: PendingCallsError): void {
  process.exitCode = 3;
  if (output.json) printJson({ handoff_pending: err.pending, prompts: err.promptsPath, answers_dir: err.answersDir });
  else
    printResult(
      `[sleep] ${err.pending} model call(s) pending: answer the prompts in ${err.promptsPath}\n[sleep] write each answer to the file named \
above it (in ${err.answersDir}), then rerun the same command`,
    );
}

/** `review` / `run` / `dry-run`: one night of the cycle. */
export function nightCommand(name: string, description: string, dry: boolean): AnyCommand {
  return defineCommand({
    meta: { name, description },
    args: sleepArgs,
    async run({ args, rawArgs }) {
      const env = processEnv();
      const setup = sleepSetup(args, rawArgs, env);
      const cfg = setup.loaded.config;
      const split = splitFractions(setup.loaded);
      let seedTasks = args["tasks-file"] ? reviewedTasksFile(args["tasks-file"], cfg) : undefined;
      // spec §2.1: a tasks file's own target skill applies unless --target-skill-path is given.
      const fileTarget = seedTasks?.meta.target_skill_path;
      const skillPath =
        !args["target-skill-path"] && typeof fileTarget === "string" && fileTarget
          ? resolveSkillPath({ ...cfg, target_skill_path: fileTarget }, setup.project)
          : setup.skillPath;
      configurePromptOverrides(env.SKILLOPT_SLEEP_PROMPTS_PATH || join(homeDir(), ".skillopt-sleep", "prompts.json"));
      const backend = await createSleepBackend(cfg, {
        project: setup.project,
        env,
        stateDir: setup.stateDir,
        // sleep.batch: a batch can take hours; its progress is shown as train shows it (faults even under --quiet).
        connect: connectModels((e) => {
          if (batchShown(e, output.quiet)) process.stderr.write(`[sleep] [batch] ${batchText(e)}\n`);
        }),
      });
      if (!output.quiet && !output.json) process.stderr.write(`[sleep] backend ${backend.describe}\n`);
      // Handoff rounds replay the same pinned tasks until every answer is in (spec §2.3), and only
      // tasks this review pinned in this round (sealed to it): never a pin a repository shipped.
      // A dry-run pins separately, so its tasks never leak into the next real night (§12.1 #18).
      const round = backend.name === "handoff" ? (backend as HandoffBackend).handoffRound : undefined;
      let tasksSource: "mined" | "tasks_file" | "handoff_pin" = seedTasks ? "tasks_file" : "mined";
      const pinned = round ? handoffPin(round, dry) : undefined;
      if (pinned && !seedTasks) {
        seedTasks = loadTasksFile(pinned, { holdoutFraction: cfg.holdout_fraction, seed: cfg.seed });
        tasksSource = "handoff_pin";
      }
      const store = openSleepStore<TaskRecord>(setup.statePath);
      const progress = cfg.progress && !output.quiet;
      const bar = progressRenderer(canDrawProgress());
      const unlisten = stopOnSignal(bar);
      try {
        const out = await runNight({
          config: cfg,
          project: setup.project,
          skillPath,
          memoryPath: setup.memoryPath,
          extraMemoryPaths: setup.memoryPaths.slice(1),
          stateDir: setup.stateDir,
          dry,
          backend,
          store,
          harvest: harvestPortFor(cfg, setup.project, setup.statePath, env),
          split,
          skillRoots: skillRoots(setup.project, resolveClaudeHome(cfg), cfg.skill_roots),
          seedTasks: seedTasks?.tasks,
          tasksSource,
          // A night that found no task pins nothing: the next one harvests again (spec §2.3).
          onTasks:
            round && !pinned
              ? (tasks, n) => {
                  if (tasks.length === 0) return;
                  const meta = {
                    project: setup.project,
                    transcript_source: String(cfg.transcript_source),
                    n_sessions: n,
                  };
                  writeHandoffPin(round, dry, tasksPayload(tasks, { ...meta, target_skill_path: skillPath }));
                }
              : undefined,
          onEvent: (e) => {
            const [phase, detail] = nightEventText(e);
            // A warning is shown always (through the log); the phases only with --progress.
            if (e.type === "model_changed") log.warn(`${phase}: ${detail}`);
            else if (progress) bar.line(`[sleep] ${phase}: ${sanitizeLine(detail)}`);
          },
          onProgress: progress ? (phase, done, total) => bar.update(phase, done, total) : undefined,
        });
        if (round && !dry && out.stagingDir) archiveRound(round.dir, out.night);
        let adopted: string[] = [];
        if (!dry && cfg.auto_adopt && out.report.accepted && out.proposals.length && out.stagingDir) {
          const a = adoptNight(out.stagingDir, { mode: "legacy" }, { stateDir: setup.stateDir });
          store.recordAdoption(out.stagingDir, "legacy", JSON.stringify(a.receipts), Date.now());
          adopted = a.updated_paths;
        }
        if (output.json) printJson(nightJson(out, dry, adopted, seedTasks?.meta));
        else
          printHuman(out, dry, adopted, () => whereSessions(cfg, seedTasks ? [] : sourcesOf(cfg), setup.project, env));
      } catch (err) {
        if (!(err instanceof PendingCallsError)) throw err;
        printPending(err);
      } finally {
        unlisten();
        bar.end();
        store.close();
        await backend.close?.();
      }
    },
  });
}

/** Refuse a NIGHT positional that is not a night name or path. */
export function nightArg(value: unknown): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string")
    throw new UsageError("NIGHT must be a staging folder name or path", {
      flag: "night",
      value,
      expected: "staging folder name or path",
    });
  return value;
}
