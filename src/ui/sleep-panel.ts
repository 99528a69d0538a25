import { basename, resolve } from "node:path";
import { errorMessage, homeDir, log } from "../lib/index.ts";
import { esc } from "../report/index.ts";
import { listNights, loadSleepConfig, resolveStateDir, type SleepConfigLayer } from "../sleep/index.ts";
import { nightHtml } from "./sleep-night.ts";
import {
  processEnv,
  readConfigFile,
  SLEEP_BACKENDS,
  SLEEP_NAMES,
  sleepBackend,
  unknownBackend,
  validationError,
} from "../config/index.ts";

/** The config layer the Sleep config is read with (Sleep imports config/ for types only; the CLI has its own). */
const SLEEP_CONFIG_LAYER: SleepConfigLayer = {
  readConfigFile,
  validationError,
  SLEEP_BACKENDS,
  SLEEP_NAMES,
  sleepBackend,
  unknownBackend,
};

/** The Sleep actions the dashboard offers, each run through the CLI's own command. */
export type SleepVerb = "adopt" | "reject" | "rollback";

/** What the dashboard needs from SkillOpt-Sleep. */
export interface SleepPanel {
  render(url: URL): Promise<string>;
  act(verb: SleepVerb, body: Record<string, unknown>): Promise<{ status: number; body: unknown }>;
}

/** How long an adopt, reject or rollback child may take before it is killed. */
const ACT_TIMEOUT_MS = 120_000;

/**
 * The Sleep panel: staged nights of a project with their gate results and diffs. Adopt, reject
 * and rollback run `skillopt sleep adopt|reject|rollback --json` itself, so the decision table, locks, journal
 * and receipts are exactly the CLI's.
 */
export function createSleepPanel(opts: {
  project: string;
  command: string[];
  cwd: string;
  env?: Record<string, string | undefined>;
}): SleepPanel {
  // This user's Sleep state directory (as the adopt and reject children resolve it): only nights
  // sealed with its key are trusted.
  const stateDir = (): string | Error => {
    const env = { ...processEnv(), ...opts.env };
    const home = env.HOME || homeDir();
    try {
      return resolveStateDir(loadSleepConfig(SLEEP_CONFIG_LAYER, {}, { home }).config, env, home);
    } catch (err) {
      return new Error(`cannot resolve the Sleep state directory: ${errorMessage(err)}`);
    }
  };
  const projectOf = (raw: unknown) => resolve(typeof raw === "string" && raw.trim() ? raw.trim() : opts.project);
  return {
    async render(url) {
      const project = projectOf(url.searchParams.get("project"));
      const nights = listNights(project);
      const picker = `<form method="get" action="/sleep" class="inline"><label>Project <input name="project" value="${esc(project)}" size="60"></label> \
<button \
type="submit">Show</button></form>`;
      if (nights.length === 0)
        return `${picker}<p class="muted" id="no-nights">No staged night for ${esc(project)}. Run <code>skillopt sleep review</code> in the project \
to stage one.</p>`;
      const state = stateDir();
      return `${picker}<div id="nights">${nights.map((d, i) => nightHtml(project, d, state, i === 0)).join("")}</div>`;
    },
    async act(verb, body) {
      const project = projectOf(body.project);
      const night = typeof body.night === "string" ? body.night : "";
      if (!night || !listNights(project).includes(resolve(night)))
        return { status: 404, body: { error: `no staged night ${night} in ${project}` } };
      const argv =
        verb === "adopt"
          ? [
              "sleep",
              "adopt",
              "--project",
              project,
              "--staging",
              night,
              ...(typeof body.skill === "string" && body.skill ? ["--skill", body.skill] : ["--legacy"]),
              "--json",
            ]
          : verb === "rollback"
            ? ["sleep", "rollback", night, "--project", project, "--json"]
            : ["sleep", "reject", night, "--project", project, "--json"];
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...processEnv(), ...opts.env, NO_COLOR: "1" }))
        if (v !== undefined) env[k] = v;
      const proc = Bun.spawn([...opts.command, ...argv], {
        cwd: opts.cwd,
        env,
        stdin: "ignore",
        stdout: "pipe",
        stderr: "pipe",
      });
      const timer = setTimeout(() => {
        log.withTag("ui").warn(`sleep ${verb} took longer than ${ACT_TIMEOUT_MS / 1000} s; stopped`);
        proc.kill("SIGKILL");
      }, ACT_TIMEOUT_MS);
      const [stdout, stderr, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ]).finally(() => clearTimeout(timer));
      let doc: Record<string, unknown> = {};
      try {
        doc = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        doc = { error: stderr.trim().split("\n").pop() ?? `exit ${code}` };
      }
      const done = { adopt: "adopted", reject: "rejected", rollback: "rolled back" }[verb];
      const message = code === 0 ? `${done} ${basename(night)}` : String(doc.message ?? doc.error ?? `exit ${code}`);
      return { status: code === 0 ? 200 : 409, body: { ...doc, exit_code: code, message } };
    },
  };
}

const UNAVAILABLE = `<div class="banner" id="sleep-unavailable">Sleep is not available in this dashboard.</div>`;

export async function sleepPage(panel: SleepPanel | undefined, url: URL): Promise<string> {
  return `<h1>SkillOpt-Sleep</h1><p id="sleep-msg" class="muted"></p>${panel ? await panel.render(url) : UNAVAILABLE}`;
}

export async function sleepAction(
  panel: SleepPanel | undefined,
  verb: SleepVerb,
  body: Record<string, unknown>,
): Promise<{ status: number; body: unknown }> {
  if (!panel) return { status: 501, body: { error: `sleep ${verb} is not available in this dashboard` } };
  return panel.act(verb, body);
}
