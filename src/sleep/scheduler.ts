import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { sha256, StagingError, UsageError, writeFileAtomic } from "../lib/index.ts";

/** Managed-block delimiters of the user crontab (spec §10.1; kept for compatibility). */
export const BLOCK_START = "# >>> skillopt-sleep (managed) >>>";
export const BLOCK_END = "# <<< skillopt-sleep (managed) <<<";

/** POSIX single-quote a word for sh. */
function shQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** PowerShell single-quoted literal. */
function psQuote(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** A scheduled run: when, for which project, and the full argv of the run. */
export interface ScheduleSpec {
  hour: number;
  minute: number;
  project: string;
  /** Full argv of the scheduled command (executable first). */
  argv: string[];
  /**
   * Environment the run needs at night, written into the line (cron starts with a minimal PATH,
   * so `--backend claude` would not find the CLI otherwise). Never secrets: see scheduleEnv().
   */
  env?: Record<string, string>;
}

/** Variables carried into the scheduled run when set: where the tools and the agents' data are. */
const SCHEDULE_ENV = [
  "PATH",
  "HOME",
  "LANG",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "CODEX_HOME",
  "CLAUDE_CONFIG_DIR",
  "OPENCODE_DB",
  "SKILLOPT_SLEEP_STATE_DIR",
  "SKILLOPT_SLEEP_PROMPTS_PATH",
  "SKILLOPT_CACHE_DIR",
  "SKILLOPT_SLEEP_NEG_FEEDBACK",
  "SKILLOPT_SLEEP_POS_FEEDBACK",
  "SKILLOPT_SLEEP_AGENT_MARKERS",
  "VSCODE_PORTABLE",
] as const;

/** The subset of `env` a scheduled run carries (names from SCHEDULE_ENV only: no keys or tokens). */
export function scheduleEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SCHEDULE_ENV) {
    const v = env[k];
    if (typeof v === "string" && v !== "" && !/[\u0000-\u001f\u007f]/.test(v)) out[k] = v;
  }
  return out;
}

function checkSpec(s: ScheduleSpec): void {
  if (!Number.isInteger(s.hour) || s.hour < 0 || s.hour > 23)
    throw new UsageError(`--hour must be an integer 0..23, got ${s.hour}`, {
      flag: "hour",
      value: s.hour,
      expected: "integer 0-23",
    });
  if (!Number.isInteger(s.minute) || s.minute < 0 || s.minute > 59)
    throw new UsageError(`--minute must be an integer 0..59, got ${s.minute}`, {
      flag: "minute",
      value: s.minute,
      expected: "integer 0-59",
    });
  for (const w of [s.project, ...s.argv]) {
    if (w === "" || /[\u0000-\u001f\u007f]/.test(w))
      throw new StagingError(`Refusing unsafe scheduler configuration: ${JSON.stringify(w)}`, {
        data: { problem: "unsafe_config" },
      });
  }
}

/** Marker identifying a project's line. */
export function projectMarker(project: string): string {
  return `# project-sha256=${sha256(project)}`;
}

/**
 * The cron line of a spec. cron turns every unescaped `%` of the command into a newline (and
 * feeds the rest to stdin), even inside shell quotes, so each `%` is written as `\%`.
 */
export function cronLine(s: ScheduleSpec): string {
  checkSpec(s);
  const state = join(s.project, ".skillopt-sleep");
  const env = Object.entries(s.env ?? {}).map(([k, v]) => shQuote(`${k}=${v}`));
  const run = [...(env.length ? ["env", ...env] : []), ...s.argv.map(shQuote)].join(" ");
  const command = `mkdir -p ${shQuote(state)}; cd ${shQuote(s.project)} && ${run} >> ${shQuote(join(state, "cron.log"))} 2>&1  ${projectMarker(s.project)}`;
  return `${s.minute} ${s.hour} * * *  ${command.replace(/%/g, "\\%")}`;
}

/** Split a crontab into (outside text, managed lines). */
function parseCrontab(text: string): { outside: string[]; managed: string[] } {
  const outside: string[] = [];
  const managed: string[] = [];
  let inBlock = false;
  for (const line of text.split("\n")) {
    if (line.trim() === BLOCK_START) inBlock = true;
    else if (line.trim() === BLOCK_END) inBlock = false;
    else if (inBlock) {
      if (line.trim()) managed.push(line);
    } else outside.push(line);
  }
  while (outside.length && outside[outside.length - 1] === "") outside.pop();
  return { outside, managed };
}

/** Render a crontab with the managed block (omitted when empty). */
function renderCrontab(outside: readonly string[], managed: readonly string[]): string {
  const parts = [...outside];
  if (managed.length) parts.push(BLOCK_START, ...managed, BLOCK_END);
  return parts.length ? `${parts.join("\n")}\n` : "";
}

/** New crontab text with this project's line replaced by `line` (or removed when undefined; all managed lines with `all`). */
export function updateCrontab(
  text: string,
  project: string,
  line: string | undefined,
  all = false,
): { text: string; managed: string[] } {
  const { outside, managed } = parseCrontab(text);
  const marker = projectMarker(project);
  const kept = all ? [] : managed.filter((l) => !l.endsWith(marker));
  if (line) kept.push(line);
  return { text: renderCrontab(outside, kept), managed: kept };
}

/** The environment the scheduler's programs run with: the caller's current one (Sleep reads no process.env). */
type Env = Record<string, string | undefined>;

function run(argv: string[], env: Env, stdin?: string): { code: number; stdout: string; stderr: string } {
  try {
    // The environment passed explicitly: without it Bun gives the child (and searches for crontab
    // on) the environment the process started with, not process.env as it is now.
    const p = Bun.spawnSync(argv, {
      env,
      stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
      stdout: "pipe",
      stderr: "pipe",
      timeout: 30_000,
    });
    return { code: p.exitCode ?? 1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
  } catch (err) {
    return { code: 127, stdout: "", stderr: String(err) };
  }
}

/** Read the user crontab ("" when there is none). Undefined when `crontab` is unavailable. */
export function readCrontab(env: Env): string | undefined {
  const r = run(["crontab", "-l"], env);
  if (r.code === 127) return undefined;
  if (r.code !== 0) return /no crontab/i.test(r.stderr) || r.stdout === "" ? "" : undefined;
  return r.stdout;
}

/** Install crontab text via `crontab -`. */
export function writeCrontab(text: string, env: Env): void {
  const r = run(["crontab", "-"], env, text);
  if (r.code !== 0) {
    throw new StagingError(`crontab - failed: ${r.stderr.trim() || `exit ${r.code}`}`, {
      data: { program: "crontab", exit_code: r.code, problem: "scheduler_failed" },
    });
  }
}

/** Windows: the Task Scheduler task name of a project. */
function taskName(project: string): string {
  return `SkillOpt-Sleep-${sha256(project).slice(0, 20)}`;
}

/** Windows: write `<project>/.skillopt-sleep/run.ps1` and register a daily task (spec §10.1). */
export function scheduleWindows(s: ScheduleSpec, env: Env): string {
  checkSpec(s);
  const dir = join(s.project, ".skillopt-sleep");
  mkdirSync(dir, { recursive: true });
  const ps1 = join(dir, "run.ps1");
  const [exe, ...rest] = s.argv;
  writeFileAtomic(
    ps1,
    [
      "$ErrorActionPreference = 'Stop'",
      `Set-Location -LiteralPath ${psQuote(s.project)}`,
      `& ${psQuote(exe!)} ${rest.map(psQuote).join(" ")} *>> ${psQuote(join(dir, "cron.log"))}`,
      "",
    ].join("\r\n"),
  );
  const hhmm = `${String(s.hour).padStart(2, "0")}:${String(s.minute).padStart(2, "0")}`;
  const r = run(
    [
      "schtasks",
      "/create",
      "/tn",
      taskName(s.project),
      "/tr",
      `powershell.exe -NoProfile -NonInteractive -ExecutionPolicy Bypass -File "${ps1}"`,
      "/sc",
      "daily",
      "/st",
      hhmm,
      "/f",
    ],
    env,
  );
  if (r.code !== 0)
    throw new StagingError(`schtasks /create failed: ${r.stderr.trim() || r.stdout.trim() || `exit ${r.code}`}`, {
      data: { program: "schtasks", exit_code: r.code, problem: "scheduler_failed" },
    });
  return taskName(s.project);
}

/** Windows: delete this project's task (or every SkillOpt-Sleep task) and its helper script. */
export function unscheduleWindows(project: string, all: boolean, env: Env): string[] {
  let names = [taskName(project)];
  if (all) {
    const q = run(["schtasks", "/query", "/fo", "csv", "/nh"], env);
    names = [...new Set([...q.stdout.matchAll(/"\\?(SkillOpt-Sleep-[0-9a-f]{20})"/g)].map((m) => m[1]!))];
  }
  for (const n of names) run(["schtasks", "/delete", "/tn", n, "/f"], env);
  rmSync(join(project, ".skillopt-sleep", "run.ps1"), { force: true });
  return names;
}
