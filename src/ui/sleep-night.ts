import { existsSync, lstatSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import * as v from "valibot";
import { errorMessage, sha256 } from "../lib/index.ts";
import { esc, fmtScore, renderDiff } from "../report/index.ts";
import { legacyRows, type Manifest, ManifestSchema, type NightScope, readLive, trustNight } from "../sleep/index.ts";
import type { SleepReport } from "../sleep/index.ts";
import { cardsFor, cardsHtml, editsTable, nightCards } from "./sleep-evidence.ts";
import { safeReadFile } from "./safe-read.ts";

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

/** Values of one key across a receipts file (a list of objects). */
function receiptValues(dir: string, file: string, key: string): string[] {
  const data = nightJson(dir, file);
  if (data === undefined) return [];
  if (!Array.isArray(data)) throw new Error(`${join(dir, file)} is not a list`);
  return data.map((r) => String((r as Record<string, unknown> | null)?.[key] ?? ""));
}

function readReport(dir: string): SleepReport | string {
  try {
    const r = nightJson(dir, "report.json");
    return r === undefined ? "This night has no report.json." : (r as SleepReport);
  } catch (err) {
    return errorMessage(err);
  }
}

/** One staged file of a night. */
interface Target {
  which: string;
  live: string;
  file: string;
  pin: string;
  /** Fan-out skill name ("" for the managed rows). */
  skill: string;
}

/**
 * One staged target: the live file against the proposal. The live file is read only through
 * Sleep's own path rule for the night (sealed by this user, a target of its manifest, pinned
 * realpath, allowed roots, regular file, never blocking), the same rule adoption writes under.
 */
function targetHtml(scope: NightScope, dir: string, t: Target, refused: string[]): string {
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
  return `${head}${drifted ? '<div class="warn">The live file changed since this night was staged: adoption will be refused.</div>' : ""}${renderDiff(
    live ? live.toString("utf8") : "",
    proposed,
  )}`;
}

/** Δ in points with its always-valid bounds and the tasks used. */
function gateCell(g: { delta: number; ci: [number, number]; n_used: number }): string {
  const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;
  return `${pts(g.delta)} [${pts(g.ci[0])}, ${pts(g.ci[1])}] n=${g.n_used}`;
}

function gateTable(r: SleepReport): string {
  const trials = r.gate_trials ?? [];
  const head = `<p>Gate: <b>${esc(r.gate_action)}</b> · held-out score \
${
  r.n_replayed === 0
    ? "not scored (nothing was replayed)"
    : `${fmtScore(r.baseline_score)} → \
${fmtScore(r.candidate_score)}`
}${r.holdout_leaked ? ' · <span class="row-error">held-out leak detected</span>' : ""}${
  r.no_edits_reason
    ? ` · \
${esc(r.no_edits_reason)}`
    : ""
}</p>`;
  if (trials.length === 0) return head;
  const rows = trials
    .map(
      (t) =>
        `<tr><td>${esc(t.target)}</td><td class="n">${fmtScore(t.baseline_score)}</td><td class="n">${fmtScore(t.candidate_score)}</td><td \
class="n">${t.gate ? esc(gateCell(t.gate)) : "—"}</td>\
<td>${t.accepted ? '<span class="badge b-accepted">kept</span>' : '<span class="badge b-rejected">dropped</span>'}${
          t.gate
            ? ` <span \
class="muted">${esc(t.gate.verdict)}${
                t.gate.paired_verdict
                  ? ` · paired: \
${esc(t.gate.paired_verdict)}`
                  : ""
              }</span>`
            : ""
        }${t.blocked_by_regression ? ' <span class="muted">(regression)</span>' : ""}</td></tr>`,
    )
    .join("");
  return `${head}<table class="gate"><thead><tr><th>trial</th><th class="n">baseline</th><th class="n">candidate</th><th class="n">Δ [bounds] \
n</th><th>result</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A modal that shows what a click would do and asks before doing it. */
function confirmDialog(
  id: string,
  title: string,
  body: string,
  button: { verb: "adopt" | "rollback"; label: string; attrs: string },
): string {
  return `<dialog class="sleep-confirm" id="${id}" data-verb="${button.verb}"><h2>${esc(title)}</h2>${body}<p class="confirm-actions"><button \
type="button" class="confirm-btn" data-verb="${button.verb}" ${button.attrs}>${esc(button.label)}</button> <button type="button" \
class="cancel-btn">Cancel</button></p></dialog>`;
}

function adoptDialog(
  id: string,
  night: string,
  targets: Target[],
  diffs: Map<string, string>,
  r: SleepReport | string,
  attrs: string,
): string {
  const paths = targets.map((t) => t.live);
  const cards = typeof r === "string" ? [] : cardsFor(nightCards(r), paths);
  const body = `<p>Adopting rewrites ${targets.length} file(s) exactly as shown below. The original bytes are kept in the night folder; \
<b>Rollback</b> (or <code>skillopt sleep rollback</code>) restores them.</p>${targets.map((t) => diffs.get(t.live) ?? "").join("")}<h3>Evidence for \
each edit</h3>${
    cards.length
      ? cardsHtml(cards)
      : '<p class="muted">No evidence card was recorded for these files; the gate table of the night is ' +
        "all the evidence there is.</p>"
  }`;
  return confirmDialog(id, `Adopt night ${night}?`, body, {
    verb: "adopt",
    label: `Adopt ${targets.length} file(s)`,
    attrs,
  });
}

/** Which rows of this night were adopted, and whether an earlier adoption was rolled back. */
function adoptionState(dir: string): { legacy: Set<string>; skills: Set<string>; rolledBack: boolean } {
  const legacy = new Set(receiptValues(dir, "adopted_legacy.json", "live_path"));
  const skills = new Set(receiptValues(dir, "adopted_skills.json", "skill_name"));
  let rolledBack = false;
  try {
    rolledBack = readdirSync(dir).some((n) => /^adopted_(legacy|skills)\.rolledback-\d+\.json$/.test(n));
  } catch {
    rolledBack = false;
  }
  return { legacy, skills, rolledBack };
}

type NightState = "staged" | "adopted" | "rejected" | "nothing";

const BADGE: Record<NightState, { cls: string; label: string }> = {
  staged: { cls: "b-running", label: "staged" },
  adopted: { cls: "b-accepted", label: "adopted" },
  rejected: { cls: "b-rejected", label: "rejected" },
  nothing: { cls: "b-skipped", label: "nothing to adopt" },
};

/** One night (open when staged or the newest): its state badge, actions (each behind a confirmation), gate, edits with verdicts, evidence and diffs. */
export function nightHtml(project: string, dir: string, stateDir: string | Error, newest = false): string {
  const name = basename(dir);
  const rejected = existsSync(join(dir, "rejected.json"));
  let body = "";
  let dialogs = "";
  /** Targets that break the path rules: such a night is offered for rejection only. */
  const refused: string[] = [];
  let pending: Target[] = [];
  let total = 0;
  let adoptedFiles: string[] = [];
  let rolledBack = false;
  const attrs = `data-night="${esc(dir)}" data-project="${esc(project)}"`;
  const dialogId = (what: string) => `confirm-${sha256(`${dir}\n${what}`).slice(0, 12)}`;
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
    const done = adoptionState(dir);
    rolledBack = done.rolledBack;
    const targets: Target[] = [
      ...legacyRows(m).map((r) => ({
        which: r.which,
        live: r.row.live_path,
        file: r.row.proposed_file,
        pin: r.row.live_sha256,
        skill: "",
      })),
      ...(m.skills ?? []).map((s) => ({
        which: `skill '${s.skill_name}'`,
        live: s.live_skill_path,
        file: s.proposed_file,
        pin: s.live_sha256,
        skill: s.skill_name,
      })),
    ];
    total = targets.length;
    pending = targets.filter((t) => (t.skill ? !done.skills.has(t.skill) : !done.legacy.has(t.live)));
    adoptedFiles = targets.filter((t) => !pending.includes(t)).map((t) => t.live);
    const diffs = new Map(targets.map((t) => [t.live, targetHtml(scope, dir, t, refused)]));
    const r = readReport(dir);
    const report =
      typeof r === "string"
        ? `<div class="warn">${esc(r)}</div>`
        : `${gateTable(r)}${editsTable("Proposed edits", r.edits, r)}${editsTable("Edits the gate dropped", r.rejected_edits, r)}${
            nightCards(r).length ? `<h3>Evidence</h3>${cardsHtml(nightCards(r))}` : ""
          }`;
    body = `${report}${total ? [...diffs.values()].join("") : '<p class="muted nothing">Nothing staged to adopt: this night only reports what it found.</p>'}`;
    if (!rejected && refused.length === 0) {
      const legacy = pending.filter((t) => !t.skill);
      if (legacy.length) dialogs += adoptDialog(dialogId("legacy"), name, legacy, diffs, r, attrs);
      for (const t of pending.filter((x) => x.skill))
        dialogs += adoptDialog(
          dialogId(`skill:${t.skill}`),
          name,
          [t],
          diffs,
          r,
          `${attrs} data-skill="${esc(t.skill)}"`,
        );
      if (adoptedFiles.length) {
        const list = adoptedFiles.map((p) => `<li><code>${esc(p)}</code></li>`).join("");
        dialogs += confirmDialog(
          dialogId("rollback"),
          `Roll back night ${name}?`,
          `<p>Each file below goes back to the exact bytes it had before adoption (a file the adoption created is removed). A file edited since \
adoption is not overwritten: the rollback is refused.</p><ul>${list}</ul>`,
          { verb: "rollback", label: `Roll back ${adoptedFiles.length} file(s)`, attrs },
        );
      }
    }
  } catch (err) {
    body = `<div class="warn">${esc(errorMessage(err))}</div>`;
  }
  const state: NightState = rejected
    ? "rejected"
    : total === 0 && refused.length === 0
      ? "nothing"
      : pending.length === 0 && adoptedFiles.length > 0
        ? "adopted"
        : "staged";
  const open = (label: string, what: string, cls: string) =>
    `<button type="button" class="${cls}" data-dialog="${dialogId(what)}" ${attrs}>${esc(label)}</button>`;
  let buttons = "";
  if (state === "staged" && refused.length > 0)
    buttons = `<button type="button" class="reject-btn" ${attrs}>Reject</button> <span class="muted">not adoptable: see why below</span>`;
  else if (state === "staged" || state === "adopted") {
    const legacy = pending.filter((t) => !t.skill);
    buttons = [
      legacy.length ? open("Adopt…", "legacy", "adopt-btn") : "",
      ...pending.filter((t) => t.skill).map((t) => open(`Adopt skill ${t.skill}…`, `skill:${t.skill}`, "adopt-btn")),
      adoptedFiles.length ? open("Rollback…", "rollback", "rollback-btn") : "",
      state === "staged" && adoptedFiles.length === 0
        ? `<button type="button" class="reject-btn" ${attrs}>Reject</button>`
        : "",
    ]
      .filter(Boolean)
      .join(" ");
  }
  const note =
    rolledBack && state === "staged"
      ? ' <span class="muted">(an earlier adoption of this night was rolled back)</span>'
      : "";
  const b = BADGE[state];
  return `<details class="step night" data-night-name="${esc(name)}" data-state="${state}"${state === "staged" || newest ? " open" : ""}><summary>Night \
${esc(name)} <span class="badge ${b.cls}">${b.label}</span>${note}</summary><p class="night-actions">${buttons}</p><div \
class="night-body">${body}</div>${dialogs}</details>`;
}
