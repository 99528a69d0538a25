import { defineCommand } from "citty";
import { resolve } from "node:path";
import { log, StagingError, UnsupportedError, UsageError } from "../../lib/index.ts";
import {
  cronLine,
  readCrontab,
  type ScheduleSpec,
  scheduleEnv,
  scheduleWindows,
  updateCrontab,
  writeCrontab,
} from "../../sleep/index.ts";
import { repeatedFlag } from "../args.ts";
import { output, printJson, printResult } from "../output.ts";
import { PATH_FLAGS, sleepArgs, sleepSetup } from "./common.ts";
import { processEnv } from "../../config/index.ts";

const NOT_FORWARDED = new Set([
  "json",
  "quiet",
  "verbose",
  "debug",
  "color",
  "hour",
  "minute",
  "project",
  "scope",
  "backend",
  "skill-root",
  "progress",
]);
const CWD_PATHS = new Set([...PATH_FLAGS, "tasks-file"]);

/** The executable that runs us: the compiled binary, or `bun <abs>/src/main.ts` from source. */
export function selfArgv(): string[] {
  const script = process.argv[1];
  if (script && /\.(ts|js|mjs)$/.test(script) && !script.startsWith("/$bunfs") && !script.includes("~BUN"))
    return [process.execPath, resolve(script)];
  return [process.execPath];
}

/** The full argv of the scheduled run: every flag given to `schedule` is kept (§12.1 #22). */
export function scheduledArgv(
  args: Record<string, unknown>,
  rawArgs: readonly string[],
  project: string,
  backend: string,
  cwd = process.cwd(),
): string[] {
  const argv = [
    ...selfArgv(),
    "sleep",
    "review",
    "--project",
    project,
    "--scope",
    typeof args.scope === "string" && args.scope ? args.scope : "invoked",
    "--backend",
    backend,
  ];
  for (const [name, def] of Object.entries(sleepArgs)) {
    if (NOT_FORWARDED.has(name)) continue;
    const v = args[name];
    if (def.type === "boolean") {
      if (v === true) argv.push(`--${name}`);
    } else if (typeof v === "string" && v !== "")
      argv.push(`--${name}`, CWD_PATHS.has(name) && !v.startsWith("~") ? resolve(cwd, v) : v);
  }
  for (const root of repeatedFlag(rawArgs, "skill-root")) argv.push("--skill-root", resolve(project, root));
  return argv;
}

function toInt(v: unknown, name: string, def: number): number {
  if (v === undefined || v === "") return def;
  if (!/^\d+$/.test(String(v)))
    throw new UsageError(`--${name} expects an integer, got ${JSON.stringify(v)}`, {
      flag: name,
      value: v,
      expected: "non-negative integer",
    });
  return Number(v);
}

export default defineCommand({
  meta: {
    name: "schedule",
    description: "Run review nightly (crontab managed block; Task Scheduler on Windows); adoption stays manual",
  },
  args: {
    ...sleepArgs,
    hour: { type: "string", description: "Hour (0-23, default 3)", valueHint: "H" },
    minute: { type: "string", description: "Minute (0-59, default 17)", valueHint: "M" },
  },
  async run({ args, rawArgs }) {
    const setup = sleepSetup(args, rawArgs);
    const spec: ScheduleSpec = {
      hour: toInt(args.hour, "hour", 3),
      minute: toInt(args.minute, "minute", 17),
      project: setup.project,
      argv: scheduledArgv(args, rawArgs, setup.project, setup.loaded.config.backend),
      env: scheduleEnv(processEnv()),
    };
    if (process.platform === "win32") {
      const name = scheduleWindows(spec, processEnv());
      if (output.json) printJson({ ok: true, task: name, argv: spec.argv });
      else
        printResult(
          `[sleep] scheduled task ${name} daily at ${spec.hour}:${String(spec.minute).padStart(2, "0")}; it only stages proposals, adoption stays manual`,
        );
      return;
    }
    const line = cronLine(spec);
    const current = readCrontab(processEnv());
    if (current === undefined) {
      // With --json, one error document (the line to add by hand is its hint), not a bare line.
      if (output.json) {
        throw new UnsupportedError(
          "crontab is not available",
          { feature: "crontab", needs: "crontab on PATH" },
          {
            hint: `add this line to your scheduler by hand: ${line}`,
          },
        );
      }
      process.exitCode = 1;
      log.error("crontab is not available; add this line to your scheduler by hand:");
      printResult(line);
      return;
    }
    const next = updateCrontab(current, setup.project, line);
    try {
      writeCrontab(next.text, processEnv());
    } catch (err) {
      // With --json the CLI boundary prints the error with its facts (program, exit code).
      if (err instanceof StagingError && !output.json) {
        process.exitCode = 1;
        process.stderr.write(`[sleep] ${err.message}\n`);
        return;
      }
      throw err;
    }
    if (output.json) printJson({ ok: true, line, scheduled: next.managed, argv: spec.argv });
    else
      printResult(
        [
          `[sleep] scheduled nightly review at ${spec.hour}:${String(spec.minute).padStart(2, "0")} for ${setup.project}; it only stages proposals, \
adoption stays manual`,
          "currently scheduled:",
          ...next.managed.map((l) => `  ${l.slice(0, 140)}`),
        ].join("\n"),
      );
  },
});
