import { existsSync, lstatSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import * as v from "valibot";
import { errorMessage, log, sha256 } from "../lib/index.ts";
import { esc, fmtScore, renderDiff } from "../report/html/index.ts";
import { homeDir } from "../lib/paths.ts";
import { loadSleepConfig, resolveStateDir } from "../sleep/config.ts";
import { type NightScope, readLive, trustNight } from "../sleep/index.ts";
import { legacyRows, type Manifest, ManifestSchema } from "../sleep/manifest.ts";
import type { SleepReport } from "../sleep/report.ts";
import { listNights } from "../sleep/stage.ts";
import { safeReadFile } from "./safe-read.ts";

/** What the dashboard needs from SkillOpt-Sleep. */
export interface SleepPanel {
  render(url: URL): Promise<string>;
  act(verb: "adopt" | "reject", body: Record<string, unknown>): Promise<{ status: number; body: unknown }>;
}

/** How long an adopt or reject child may take before it is killed. */
const ACT_TIMEOUT_MS = 120_000;

/**
 * A file of the night itself, by plain name: never through a symlink, never a FIFO or device,
 * never larger than the cap. `undefined` when absent; throws with one line otherwise.
 */
function nightFile(dir: string, name: string): string | undefined {
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(name)) throw new Error(`${join(dir, name)}: not a plain file name`);
  const p = join(dir, name);
  try {
    if (lstatSync(p).isSymbolicLink()) throw new Error(`${p} is a symbolic link; not read`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const r = safeReadFile(p);
  if (r.ok) return r.text;
  if (r.missing) return undefined;
  throw new Error(r.reason);
}

function nightJson(dir: string, name: string): unknown {
  const text = nightFile(dir, name);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${join(dir, name)} is not valid JSON: ${errorMessage(err)}`);
  }
}

function readManifestSafe(dir: string): Manifest {
  const data = nightJson(dir, "manifest.json");
  const parsed = v.safeParse(ManifestSchema, data);
  if (!parsed.success) {
    const i = parsed.issues[0]!;
    throw new Error(`${join(dir, "manifest.json")}: invalid manifest at ${v.getDotPath(i) ?? "(root)"}: ${i.message}`);
  }
  return parsed.output;
}

/** Names already adopted, from a receipts file (a list of objects). */
function receiptNames(dir: string, file: string, key: string): Set<string> {
  const data = nightJson(dir, file);
  if (data === undefined) return new Set();
  if (!Array.isArray(data)) throw new Error(`${join(dir, file)} is not a list`);
  return new Set(data.map((r) => String((r as Record<string, unknown> | null)?.[key] ?? "")));
}

function readReport(dir: string): SleepReport | string {
  try {
    const r = nightJson(dir, "report.json");
    return r === undefined ? "This night has no report.json." : (r as SleepReport);
  } catch (err) {
    return errorMessage(err);
  }
}

/**
 * One staged target: the live file against the proposal. The live file is read only through
 * Sleep's own path rule for the night (sealed by this user, a target of its manifest, pinned
 * realpath, allowed roots, regular file, never blocking), the same rule adoption writes under.
 */
function targetHtml(
  scope: NightScope,
  dir: string,
  t: { which: string; live: string; file: string; pin: string },
  refused: string[],
): string {
  const head = `<h3>${esc(t.which)}: <code>${esc(t.live)}</code></h3>`;
  let live: Buffer | undefined;
  try {
    live = readLive(scope, t.live);
  } catch (err) {
    refused.push(errorMessage(err));
    return `${head}<div class="warn">${esc(errorMessage(err))}</div>`;
  }
  const proposed = nightFile(dir, t.file);
  if (proposed === undefined) return `${head}<div class="warn">${esc(join(dir, t.file))} is missing.</div>`;
  const drifted = (live ? sha256(live) : "") !== t.pin;
  return `${head}${drifted ? '<div class="warn">The live file changed since this night was staged: adoption will be refused.</div>' : ""}${renderDiff(live ? live.toString("utf8") : "", proposed)}`;
}

function editsTable(title: string, edits: SleepReport["edits"] | undefined): string {
  if (!edits || edits.length === 0) return "";
  const rows = edits
    .map((e) => `<tr><td>${esc(e.target)}</td><td>${esc(e.op)}</td><td>${esc(e.anchor)}</td><td><div class="edit-text">${esc(e.content)}</div></td><td>${esc(e.rationale)}</td></tr>`)
    .join("");
  return `<h3>${esc(title)}</h3><table class="edits"><thead><tr><th>file</th><th>op</th><th>anchor</th><th>text</th><th>rationale</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Δ in points with its always-valid bounds and the tasks used. */
function gateCell(g: { delta: number; ci: [number, number]; n_used: number }): string {
  const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;
  return `${pts(g.delta)} [${pts(g.ci[0])}, ${pts(g.ci[1])}] n=${g.n_used}`;
}

function gateTable(r: SleepReport): string {
  const trials = r.gate_trials ?? [];
  const head = `<p>Gate: <b>${esc(r.gate_action)}</b> · held-out score ${fmtScore(r.baseline_score)} → ${fmtScore(r.candidate_score)}${r.holdout_leaked ? ' · <span class="row-error">held-out leak detected</span>' : ""}${r.no_edits_reason ? ` · ${esc(r.no_edits_reason)}` : ""}</p>`;
  if (trials.length === 0) return head;
  const rows = trials
    .map(
      (t) =>
        `<tr><td>${esc(t.target)}</td><td class="n">${fmtScore(t.baseline_score)}</td><td class="n">${fmtScore(t.candidate_score)}</td><td class="n">${t.gate ? esc(gateCell(t.gate)) : "—"}</td><td>${t.accepted ? '<span class="badge b-accepted">kept</span>' : '<span class="badge b-rejected">dropped</span>'}${t.gate ? ` <span class="muted">${esc(t.gate.verdict)}${t.gate.paired_verdict ? ` · paired: ${esc(t.gate.paired_verdict)}` : ""}</span>` : ""}${t.blocked_by_regression ? ' <span class="muted">(regression)</span>' : ""}</td></tr>`,
    )
    .join("");
  return `${head}<table class="gate"><thead><tr><th>trial</th><th class="n">baseline</th><th class="n">candidate</th><th class="n">Δ [bounds] n</th><th>result</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function nightHtml(project: string, dir: string, stateDir: string | Error): string {
  const name = basename(dir);
  const rejected = existsSync(join(dir, "rejected.json"));
  let adopted = false;
  let body = "";
  /** Targets that break the path rules: such a night is offered for rejection only. */
  const refused: string[] = [];
  let pending: { legacy: string[]; skills: string[] } = { legacy: [], skills: [] };
  try {
    const m = readManifestSafe(dir);
    if (stateDir instanceof Error) throw stateDir;
    let scope: NightScope;
    try {
      scope = trustNight(dir, stateDir);
    } catch (err) {
      refused.push(errorMessage(err));
      throw err;
    }
    const doneLegacy = receiptNames(dir, "adopted_legacy.json", "target");
    const doneSkills = receiptNames(dir, "adopted_skills.json", "skill_name");
    adopted = doneLegacy.size > 0 || doneSkills.size > 0;
    pending = {
      legacy: legacyRows(m)
        .map((r) => r.which)
        .filter((w) => !doneLegacy.has(w)),
      skills: (m.skills ?? []).map((s) => s.skill_name).filter((n) => !doneSkills.has(n)),
    };
    const targets = [
      ...legacyRows(m).map((r) => ({ which: r.which, live: r.row.live_path, file: r.row.proposed_file, pin: r.row.live_sha256 })),
      ...(m.skills ?? []).map((s) => ({ which: `skill '${s.skill_name}'`, live: s.live_skill_path, file: s.proposed_file, pin: s.live_sha256 })),
    ];
    const diffs = targets.map((t) => targetHtml(scope, dir, t, refused)).join("");
    const r = readReport(dir);
    body = `${typeof r === "string" ? `<div class="warn">${esc(r)}</div>` : gateTable(r) + editsTable("Proposed edits", r.edits) + editsTable("Edits the gate dropped", r.rejected_edits)}${diffs || '<p class="muted">Nothing staged to adopt.</p>'}`;
  } catch (err) {
    body = `<div class="warn">${esc(errorMessage(err))}</div>`;
  }
  const state = rejected ? "rejected" : adopted && pending.legacy.length === 0 && pending.skills.length === 0 ? "adopted" : "staged";
  const attrs = `data-night="${esc(dir)}" data-project="${esc(project)}"`;
  const buttons =
    state === "staged" && refused.length > 0
      ? `<button type="button" class="reject-btn" ${attrs}>Reject</button> <span class="muted">not adoptable: see why below</span>`
      : state === "staged"
      ? `${pending.legacy.length ? `<button type="button" class="adopt-btn" ${attrs} data-mode="legacy">Adopt</button>` : ""}${pending.skills.map((s) => `<button type="button" class="adopt-btn" ${attrs} data-skill="${esc(s)}">Adopt skill ${esc(s)}</button>`).join(" ")} <button type="button" class="reject-btn" ${attrs}>Reject</button>`
      : "";
  return `<details class="step night" data-night-name="${esc(name)}" data-state="${state}"${state === "staged" ? " open" : ""}><summary>Night ${esc(name)} <span class="badge b-${state === "staged" ? "running" : state === "adopted" ? "accepted" : "rejected"}">${state}</span></summary><p>${buttons}</p>${body}</details>`;
}

/**
 * The Sleep panel: staged nights of a project with their gate results and diffs. Adopt and
 * reject run `skillopt sleep adopt|reject --json` itself, so the decision table, locks, journal
 * and receipts are exactly the CLI's.
 */
export function createSleepPanel(opts: { project: string; command: string[]; cwd: string; env?: Record<string, string | undefined> }): SleepPanel {
  // This user's Sleep state directory (as the adopt and reject children resolve it): only nights
  // sealed with its key are trusted.
  const stateDir = (): string | Error => {
    const env = { ...process.env, ...opts.env };
    const home = env.HOME || homeDir();
    try {
      return resolveStateDir(loadSleepConfig({}, { home }).config, env, home);
    } catch (err) {
      return new Error(`cannot resolve the Sleep state directory: ${errorMessage(err)}`);
    }
  };
  const projectOf = (raw: unknown) => resolve(typeof raw === "string" && raw.trim() ? raw.trim() : opts.project);
  return {
    async render(url) {
      const project = projectOf(url.searchParams.get("project"));
      const nights = listNights(project);
      const picker = `<form method="get" action="/sleep" class="inline"><label>Project <input name="project" value="${esc(project)}" size="60"></label> <button type="submit">Show</button></form>`;
      if (nights.length === 0)
        return `${picker}<p class="muted" id="no-nights">No staged night for ${esc(project)}. Run <code>skillopt sleep review</code> in the project to stage one.</p>`;
      const state = stateDir();
      return `${picker}<div id="nights">${nights.map((d) => nightHtml(project, d, state)).join("")}</div>`;
    },
    async act(verb, body) {
      const project = projectOf(body.project);
      const night = typeof body.night === "string" ? body.night : "";
      if (!night || !listNights(project).includes(resolve(night))) return { status: 404, body: { error: `no staged night ${night} in ${project}` } };
      const argv =
        verb === "adopt"
          ? ["sleep", "adopt", "--project", project, "--staging", night, ...(typeof body.skill === "string" && body.skill ? ["--skill", body.skill] : ["--legacy"]), "--json"]
          : ["sleep", "reject", night, "--project", project, "--json"];
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries({ ...process.env, ...opts.env, NO_COLOR: "1" })) if (v !== undefined) env[k] = v;
      const proc = Bun.spawn([...opts.command, ...argv], { cwd: opts.cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const timer = setTimeout(() => {
        log.withTag("ui").warn(`sleep ${verb} took longer than ${ACT_TIMEOUT_MS / 1000} s; stopped`);
        proc.kill("SIGKILL");
      }, ACT_TIMEOUT_MS);
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]).finally(() => clearTimeout(timer));
      let doc: Record<string, unknown> = {};
      try {
        doc = JSON.parse(stdout) as Record<string, unknown>;
      } catch {
        doc = { error: stderr.trim().split("\n").pop() ?? `exit ${code}` };
      }
      const message = code === 0 ? `${verb === "adopt" ? "adopted" : "rejected"} ${basename(night)}` : String(doc.message ?? doc.error ?? `exit ${code}`);
      return { status: code === 0 ? 200 : 409, body: { ...doc, exit_code: code, message } };
    },
  };
}

const UNAVAILABLE = `<div class="banner" id="sleep-unavailable">Sleep is not available in this dashboard.</div>`;

export async function sleepPage(panel: SleepPanel | undefined, url: URL): Promise<string> {
  return `<h1>SkillOpt-Sleep</h1><p id="sleep-msg" class="muted"></p>${panel ? await panel.render(url) : UNAVAILABLE}`;
}

export async function sleepAction(panel: SleepPanel | undefined, verb: "adopt" | "reject", body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  if (!panel) return { status: 501, body: { error: `sleep ${verb} is not available in this dashboard` } };
  return panel.act(verb, body);
}
