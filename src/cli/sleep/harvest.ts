import { existsSync, readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { helpShows } from "../args.ts";
import { sanitizeLine } from "../../lib/index.ts";
import {
  harvest,
  type HarvestOptions,
  type HarvestProgress,
  type HarvestResult,
  mine,
  sessionLimit,
  type SourceName,
  splitFractions,
  tasksPayload,
  writeTasksFile,
} from "../../sleep/index.ts";
import { harvestState, openHarvestStore, openSleepStore } from "../../store/index.ts";
import { canDrawProgress, output, printJson, printResult } from "../output.ts";
import { SESSION_STORE_FLAGS, sleepArgs, sleepSetup, sourceLocations, whereSessions } from "./common.ts";
import { sourcesOf } from "./night.ts";
import { processEnv } from "../../config/index.ts";

/**
 * `skillopt sleep harvest`: read the sessions, mine them with the heuristic miner, and print (or
 * write with --output) a reviewed-task draft (spec §2.6). Read-only towards the agents; it writes
 * only the parse cache in the state dir and the --output file. Never marks sessions as delivered.
 */
export default defineCommand({
  meta: { name: "harvest", description: "Read coding-agent sessions and write a reviewed-task draft" },
  args: helpShows(
    {
      ...sleepArgs,
      output: {
        type: "string",
        description: "Write the tasks payload (skillopt_sleep.tasks.v1) to PATH",
        valueHint: "PATH",
      },
      new: {
        type: "boolean",
        description: "Only what the next `sleep review` would read (not yet consumed, within its window)",
      },
    },
    [
      "project",
      "scope",
      "source",
      ...SESSION_STORE_FLAGS,
      "lookback-hours",
      "max-sessions",
      "max-tasks",
      "harvest-threads",
      "harvest-prefetch",
      "state-dir",
      "progress",
      "output",
      "new",
    ],
  ),
  async run({ args, rawArgs }) {
    const env = processEnv();
    const setup = sleepSetup(args, rawArgs, env);
    const cfg = setup.loaded.config;
    const split = splitFractions(setup.loaded);
    const limit = sessionLimit(cfg);
    const store = openHarvestStore(setup.statePath);
    const progress = progressRenderer(cfg.progress && !output.quiet);
    let result: HarvestResult;
    /** The harvest's own cost (reading and digesting the sessions; not start-up or mining). */
    let timing: { seconds: number; cpu_seconds: number; read_workers: number; prefetch: boolean };
    try {
      let sinceMs: number | undefined;
      if (args.new) {
        const sleep = openSleepStore(setup.statePath);
        try {
          const last = sleep.lastHarvestMs(setup.project);
          sinceMs = last ?? (cfg.lookback_hours > 0 ? Date.now() - cfg.lookback_hours * 3_600_000 : undefined);
        } finally {
          sleep.close();
        }
      }
      const scope = cfg.projects === "all" ? "all" : cfg.projects === "invoked" ? "invoked" : cfg.projects;
      const opts: Omit<HarvestOptions, "sources"> = {
        scope,
        invokedProject: setup.project,
        limit,
        sinceMs,
        includeDelivered: !args.new,
        env,
        state: harvestState(store),
        onProgress: progress.onEvent,
        locations: sourceLocations(cfg),
        readThreads: cfg.harvest_threads ?? "auto",
        prefetch: cfg.harvest_prefetch ?? "auto",
      };
      // spec §3.2: auto = Codex, and Claude only when Codex has nothing.
      const auto = cfg.transcript_source === "auto";
      const sources: SourceName[] = auto ? ["codex"] : sourcesOf(cfg);
      const started = performance.now();
      const cpu = process.cpuUsage();
      result = await harvest({ ...opts, sources });
      if (auto && result.digests.length === 0) result = await harvest({ ...opts, sources: ["claude"] });
      const used = process.cpuUsage(cpu);
      timing = {
        seconds: round3((performance.now() - started) / 1000),
        cpu_seconds: round3((used.user + used.system) / 1e6),
        read_workers: result.readWorkers,
        prefetch: result.prefetch,
      };
    } finally {
      progress.done();
      store.close();
    }
    // spec §2.6: heuristic miner only, never the LLM miner.
    // spec §2.6: the target filter runs whenever target_skill_path is set (its path tokens alone
    // suffice); the ×3 candidate pool only when target_task_filter is on and the skill has content.
    const targetText =
      cfg.target_skill_path && existsSync(setup.skillPath) ? readFileSync(setup.skillPath, "utf8") : "";
    const target = cfg.target_skill_path ? { text: targetText, path: setup.skillPath } : undefined;
    const tasks = await mine(result.digests, {
      maxTasks: cfg.max_tasks_per_night,
      maxSessions: limit,
      val: split.val,
      test: split.test,
      seed: cfg.seed,
      target,
      widenForTarget: Boolean(cfg.target_task_filter && targetText.trim()),
    });
    const payload = tasksPayload(tasks, {
      project: setup.project,
      transcript_source: String(cfg.transcript_source),
      n_sessions: result.digests.length,
      target_skill_path: cfg.target_skill_path || setup.skillPath,
    });
    const written = args.output ? writeTasksFile(args.output, payload) : undefined;
    if (output.json) {
      printJson({ ...payload, ...(written ? { output: written } : {}), harvest: result.stats, harvest_timing: timing });
      return;
    }
    const lines = [`${result.digests.length} sessions -> ${tasks.length} tasks`];
    if (result.digests.length === 0) lines.push(whereSessions(cfg, sourcesOf(cfg), setup.project));
    if (written) lines.push(`wrote reviewed-task draft: ${written}`);
    for (const t of tasks) lines.push(`  [${t.split}/${t.outcome}] ${sanitizeLine(t.intent).slice(0, 90)}`);
    printResult(lines.join("\n"));
  },
});

/** Progress on stderr: a redrawn bar on a TTY, one plain line per source otherwise. */
function progressRenderer(enabled: boolean): { onEvent?: (e: HarvestProgress) => void; done(): void } {
  if (!enabled) return { done() {} };
  const tty = canDrawProgress();
  let drawn = false;
  let lastDraw = 0;
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  return {
    onEvent(e) {
      if (e.kind === "source_start") {
        if (!tty) process.stderr.write(`[sleep] harvest ${e.source}: ${e.candidates} candidate sessions\n`);
      } else if (e.kind === "session" && tty) {
        const now = Date.now();
        if (now - lastDraw < 80 && e.done !== e.total) return;
        lastDraw = now;
        const width = 24;
        const filled = Math.round((e.done / Math.max(1, e.total)) * width);
        process.stderr.write(
          `\r[sleep] harvest ${e.source} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${e.done}/${e.total} ${mb(e.bytes)}`,
        );
        drawn = true;
      } else if (e.kind === "source_done") {
        const s = e.stats;
        if (drawn) process.stderr.write("\r\u001b[K");
        drawn = false;
        process.stderr.write(
          `[sleep] harvest ${s.source}: ${s.sessions} sessions (${s.candidates} seen, ${s.unchanged} unchanged, ${s.filtered} filtered, ${mb(s.bytes_read)} \
read${s.errors ? `, ${s.errors} unreadable` : ""})\n`,
        );
      }
    },
    done() {
      if (drawn) process.stderr.write("\r\u001b[K");
    },
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
