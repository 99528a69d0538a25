import { RUN_FILES } from "../../run/index.ts";
import { warningText } from "../stage-text.ts";
import { renderSkillDiff } from "./diff-html.ts";
import { renderFrontier } from "./frontier.ts";
import { esc, fmtCost, fmtInt, fmtScore, fmtSeconds } from "./escape.ts";
import { costChartParts, scoreChartParts, scoreLegend } from "./run-charts.ts";
import type { GateView, RunView, StepView, SummaryView } from "./run-view.ts";
import { REPORT_CSS } from "./style.ts";

function card(k: string, v: string, s = ""): string {
  return `<div class="card"><div class="k">${esc(k)}</div><div class="v">${v}</div>${s ? `<div class="s">${s}</div>` : ""}</div>`;
}

function badge(word: string): string {
  return `<span class="badge b-${esc(word)}">${esc(word.replace("_", " "))}</span>`;
}

/** Run title, models and the simulator notice. */
function renderHeader(run: RunView): string {
  // A simulator run called no model: the config's model names are not what answered.
  const models = run.simulator
    ? ""
    : [run.optimizerModel && `optimizer ${run.optimizerModel}`, run.targetModel && `target ${run.targetModel}`]
        .filter(Boolean)
        .join(" · ");
  return `<header><h1>${esc(run.name)} ${badge(run.status)}</h1><p class="meta">${esc(
    [
      run.benchmark && `benchmark ${run.benchmark}`,
      models,
      run.backend && `backend ${run.backend}`,
      run.startedAt && `started ${run.startedAt}`,
    ]
      .filter(Boolean)
      .join(" · "),
  )}</p>${
    run.simulator
      ? `<div class="banner">Offline simulator: these scores come from SkillOpt's built-in <b>sim</b> backend, not from a real model.</div>`
      : ""
  }${run.waiting ? `<div class="waiting"><b>running:</b> ${esc(run.waiting)}</div>` : ""}${
    run.status === "failed"
      ? `<div class="failed-reason">\
<b>failed:</b> \
${esc(run.failure ?? "stopped on an error")}</div>`
      : ""
  }${run.errors.map((e) => `<div class="warn"><b>error:</b> ${esc(e)}</div>`).join("")}${run.warnings
    .map((w) => `<div class="warn">${esc(w)}</div>`)
    .join("")}</header>`;
}

function totalsFromSteps(run: RunView): { calls: number; tokens: number; cost: number | null; seconds: number } {
  let calls = 0;
  let tokens = 0;
  let cost: number | null = null;
  let seconds = 0;
  for (const s of run.steps) {
    calls += s.calls;
    tokens += s.tokens;
    if (s.costUsd !== null) cost = (cost ?? 0) + s.costUsd;
    seconds += s.seconds ?? 0;
  }
  return { calls, tokens, cost, seconds };
}

/** Headline figures: baseline / best / final scores, decisions, calls, tokens, cost. */
function renderCards(run: RunView): string {
  const s: SummaryView | null = run.summary;
  const t = totalsFromSteps(run);
  const accepted = run.steps.filter((x) => x.action === "accepted").length;
  const rejected = run.steps.filter((x) => x.action === "rejected" || x.action === "rejected_early").length;
  const early = run.steps.filter((x) => x.action === "rejected_early").length;
  const undecided = run.steps.filter((x) => x.action === "undecided").length;
  const last = run.steps[run.steps.length - 1];
  const cards = [
    card(
      "baseline",
      `sel ${fmtScore(s?.baseline.selection ?? run.baselineSelection)}`,
      `test ${fmtScore(s?.baseline.test)}`,
    ),
    card(
      "best",
      `sel ${fmtScore(s?.best.selection ?? last?.bestScore)}`,
      `test ${fmtScore(s?.best.test)}${(s?.best.step ?? null) !== null ? ` · step ${s?.best.step}` : ""}`,
    ),
    card("final", `sel ${fmtScore(s?.final.selection ?? last?.currentScore)}`, `test ${fmtScore(s?.final.test)}`),
    card(
      "steps",
      `${run.steps.length}${run.plannedSteps ? `<span class="muted">/${run.plannedSteps}</span>` : ""}`,
      `${accepted} accepted · ${rejected} rejected${early ? ` (${early} early)` : ""}${undecided ? ` · ${undecided} undecided` : ""}`,
    ),
    card("model calls", fmtInt(s?.calls ?? t.calls), s ? `${fmtInt(s.cachedCalls)} cached` : ""),
    card("tokens", fmtInt(s?.tokens ?? t.tokens)),
    card("cost", fmtCost(s?.costUsd ?? t.cost)),
    card("wall time", fmtSeconds(s?.wallSeconds ?? t.seconds)),
  ];
  if (s?.skillTokens)
    cards.push(
      card(
        "deployed skill",
        `${fmtInt(s.skillTokens.best)} tokens`,
        `best · baseline ${fmtInt(s.skillTokens.baseline)} · final ${fmtInt(s.skillTokens.final)} (≈4 chars/token, paid on every task)`,
      ),
    );
  if (s?.selectionCallsSaved !== null && s?.selectionCallsSaved !== undefined)
    cards.push(card("selection calls saved", fmtInt(s.selectionCallsSaved), "by early rejection"));
  const nf = s?.noiseFloor;
  if (nf) {
    cards.push(
      card(
        "noise floor",
        `${(nf.flipRate * 100).toFixed(1)} % flips`,
        `${nf.flips}/${nf.items} items re-sampled · smallest detectable gain ≈ ${(nf.detectableGain * 100).toFixed(1)} pts on ${nf.selectionItems} \
items${nf.detectableGain > nf.minEffect ? ` (above the ${(nf.minEffect * 100).toFixed(1)}-pt minimum effect: the split is too small)` : ""}${
          s?.gateRule
            ? ` · \
${esc(s.gateRule)} gate${s.gateWhy ? ` (auto: ${esc(s.gateWhy)})` : ""}`
            : ""
        }`,
      ),
    );
  }
  if (s?.lowEvidenceAccepts)
    cards.push(
      card(
        "low-evidence accepts",
        fmtInt(s.lowEvidenceAccepts),
        "accepted steps the paired test would not have accepted on the same items (summary.json: accepted_evidence)",
      ),
    );
  return `<div class="cards" id="cards">${cards.join("")}</div>`;
}

function testTable(s: SummaryView | null): string {
  if (!s || s.testByType.length === 0) return "";
  const rows = s.testByType
    .map(
      (r) =>
        `<tr${r.type === "overall" ? ' class="total"' : ""}><td>${esc(r.type)}</td><td class="n">${fmtInt(r.total)}</td><td \
class="n">${fmtScore(r.baseline)}</td><td class="n">${fmtScore(r.best)}</td><td class="n">${fmtScore(r.final)}</td></tr>`,
    )
    .join("");
  return `<h3>Test accuracy by task type</h3><table id="test-table"><thead><tr><th>type</th><th class="n">items</th><th class="n">baseline</th><th \
class="n">best</th><th class="n">final</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function boundarySection(run: RunView): string {
  if (run.boundaries.length === 0) return "";
  const rows = run.boundaries
    .map(
      (b) =>
        `<tr id="epoch-${b.epoch}"><td class="n">${b.epoch}</td><td class="n">${b.step}</td><td>${esc(b.slowAction.replace(/_/g, " "))}</td><td \
class="n">${fmtScore(b.slowScore)}</td><td>${esc(b.slowReasoning)}${
          b.slowContent
            ? `<details><summary>slow-update text</summary>\
<pre>${esc(b.slowContent)}</pre></details>`
            : ""
        }</td><td>${esc(b.metaAction.replace(/_/g, " "))}${
          b.metaContent
            ? `<details><summary>meta skill</summary>\
<pre>${esc(b.metaContent)}</pre></details>`
            : ""
        }</td></tr>`,
    )
    .join("");
  return `<h2>Epoch boundaries</h2><table id="boundary-table"><thead><tr><th class="n">epoch</th><th class="n">after step</th><th>slow update</th><th \
class="n">selection</th><th>reasoning</th><th>meta skill</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function stageTable(s: SummaryView | null): string {
  if (!s || s.byStage.length === 0) return "";
  const rows = s.byStage
    .map(
      (r) =>
        `<tr><td>${esc(r.stage)}</td><td class="n">${fmtInt(r.calls)}</td><td class="n">${fmtInt(r.cached)}</td><td class="n">${fmtInt(r.tokens)}</td><td \
class="n">${fmtCost(r.costUsd)}</td></tr>`,
    )
    .join("");
  return `<h3>By stage</h3><table id="stage-table"><thead><tr><th>stage</th><th class="n">calls</th><th class="n">cached</th><th \
class="n">tokens</th><th class="n">cost</th></tr></thead><tbody>${rows}</tbody></table>`;
}

const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;

/** Δ with its bounds and items used, e.g. "+4.2 [−1.0, +9.5] 96/200". */
function gateText(g: GateView): string {
  return `${pts(g.delta)} [${pts(g.lo)}, ${pts(g.hi)}] ${g.nUsed ?? "?"}/${g.nTotal ?? "?"}`;
}

/** One sentence for a step's decision: never two bare scores and a verdict. */
function gateSummary(g: GateView): string {
  const conf = g.confidence === null ? "" : ` ${Math.round(g.confidence * 100)} %`;
  const flips = g.gained === null || g.lost === null ? "" : `, items +${g.gained}/−${g.lost}`;
  return `${g.rule} gate: ${g.verdict} — Δ ${pts(g.delta)} pts,${conf} bounds [${pts(g.lo)}, ${pts(g.hi)}] on ${g.nUsed ?? "?"}/${g.nTotal ?? "?"} \
items${flips}${g.reason ? ` (${g.reason.replace(/_/g, " ")})` : ""}${
    g.lowEvidence ? " · low evidence: the paired test would not accept on these items" : ""
  }`;
}

function stepRow(s: StepView): string {
  return `<tr data-step="${s.step}" data-action="${s.action}"><td><a href="#step-${s.step}">${s.step}</a></td><td class="n">${s.epoch}</td><td \
class="n">${s.lr ?? "—"}</td><td class="n">${fmtScore(s.rolloutScore)}</td><td class="n">${fmtScore(s.candidateScore)}</td><td \
class="n">${fmtScore(s.currentScore)}</td><td class="n gate">${s.gate ? esc(gateText(s.gate)) : "—"}</td><td>${badge(s.action)}${
    s.earlyAt
      ? ` <span \
class="muted">at ${esc(s.earlyAt)}</span>`
      : ""
  }</td><td class="n">${s.editsApplied}</td><td class="n">${s.editsFailed}</td><td \
class="n">${fmtInt(s.calls)}</td><td class="n">${fmtInt(s.tokens)}</td><td class="n">${fmtCost(s.costUsd)}</td><td class="n">${fmtSeconds(s.seconds)}</td>\
</tr>`;
}

/** The table of every step's record, row by row. */
function* stepTableParts(run: RunView): Generator<string> {
  if (run.steps.length === 0) {
    yield `<p class="muted" id="step-table">No step recorded yet.</p>`;
    return;
  }
  yield `<div style="overflow:auto"><table id="step-table"><thead><tr><th>step</th><th class="n">epoch</th><th class="n">lr</th><th \
class="n">rollout</th><th class="n">candidate</th><th class="n">current</th><th class="n" title="candidate − current per item, with the gate's \
always-valid bounds; items used / split">Δ pts [bounds] n</th><th>action</th><th class="n">applied</th><th class="n">failed</th><th \
class="n">calls</th><th class="n">tokens</th><th class="n">cost</th><th class="n">time</th></tr></thead><tbody>`;
  for (const s of run.steps) yield stepRow(s);
  yield "</tbody></table></div>";
}

function longText(text: string, limit = 600): string {
  if (text.length <= limit) return esc(text);
  return `${esc(text.slice(0, limit))}… <details><summary>all ${text.length} characters</summary>${esc(text)}</details>`;
}

function editTable(s: StepView): string {
  if (s.edits.length === 0)
    return `<p class="muted">No edit details recorded for this step (${s.editsApplied} applied, ${s.editsFailed} failed).</p>`;
  const rows = s.edits
    .map(
      (e) =>
        `<tr><td>${esc(e.op)}</td><td>${esc(e.section)}</td><td><div class="edit-text">${longText(e.text)}</div></td><td>${esc(e.rationale)}</td>\
<td>${badge(e.status)}${e.error ? `<div class="muted">${esc(e.error)}</div>` : ""}</td></tr>`,
    )
    .join("");
  return `<table class="edits"><thead><tr><th>op</th><th>section</th><th>text</th><th>rationale</th><th>status</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function stepDetails(s: StepView): string {
  const diff =
    s.skillBefore !== null && s.candidate !== null
      ? `<h3>Skill diff (${s.action === "accepted" ? "before → after" : "current → rejected candidate"})</h3>${renderSkillDiff(s.skillBefore, s.candidate)}`
      : `<p class="muted">The candidate text of this step was not kept.</p>`;
  return `<details class="step" id="step-${s.step}" data-step="${s.step}"><summary>Step ${s.step} · epoch ${s.epoch} · ${badge(s.action)} · \
${s.gate ? esc(gateSummary(s.gate)) : `candidate ${fmtScore(s.candidateScore)} vs current ${fmtScore(s.currentScore)}`}</summary>\
<h3>Edits</h3>${s.reasoning.map((r) => `<p class="reasoning"><b>optimizer:</b> ${esc(r)}</p>`).join("")}${editTable(s)}${diff}</details>`;
}

function evaluationSection(run: RunView): string {
  const e = run.evaluation;
  if (!e) return "";
  const fields = e.fields.map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(v)}</td></tr>`).join("");
  const groups = e.groups
    .map(
      (g) =>
        `<tr${g.name === "overall" ? ' class="total"' : ""}><td>${esc(g.name)}</td><td class="n">${fmtInt(g.total)}</td><td class="n">${fmtScore(g.score)}</td>\
</tr>`,
    )
    .join("");
  return `<h2>Evaluation</h2>${
    groups
      ? `<table id="eval-groups"><thead><tr><th>group</th><th class="n">items</th><th \
class="n">score</th></tr></thead><tbody>${groups}</tbody></table>`
      : ""
  }${fields ? `<table id="eval-fields"><tbody>${fields}</tbody></table>` : ""}`;
}

/** Sections joined by newlines; a section is a string, a function rendering it when reached, or a sequence of parts. */
function* lines(sections: readonly (string | (() => string) | Iterable<string>)[]): Generator<string> {
  let first = true;
  for (const section of sections) {
    if (!first) yield "\n";
    first = false;
    if (typeof section === "string") yield section;
    else if (typeof section === "function") yield section();
    else yield* section;
  }
}

/** The faults the run survived and its stops (warnings.jsonl), in the console's words, oldest first. */
function warningsSection(run: RunView): string {
  if (!run.runWarnings.length) return "";
  // A stop the run was resumed from is history once the run went on: said so, not "stopping: …".
  const resumedPast = (w: RunView["runWarnings"][number], i: number) =>
    w.code === "budget_stop" &&
    (run.status !== "stopped" || run.runWarnings.slice(i + 1).some((x) => x.code === "budget_stop"));
  const items = run.runWarnings.map((w, i) => {
    const text = resumedPast(w, i)
      ? warningText(w).replace(
          /^stopping: (.*?)(?: \(resume later with --resume\))?$/,
          "an earlier attempt stopped ($1); the run was resumed",
        )
      : warningText(w);
    return `<li data-code="${esc(w.code)}"><span class="muted">${esc(w.time.replace("T", " ").slice(0, 19))}</span> ${esc(text)}</li>`;
  });
  return `<h2>Warnings</h2><ul id="run-warnings">${items.join("")}</ul>`;
}

function configSection(run: RunView): string {
  return run.configYaml
    ? `<h2>Configuration</h2><details><summary>config.resolved.yaml</summary><pre>${esc(run.configYaml)}</pre></details>`
    : "";
}

/** Reads the per-step details (edits, diffs' inputs) of a few steps at a time, for a view whose steps lack them. */
export type StepDetails = (steps: readonly StepView[]) => StepView[];

/** Steps whose details are read at once when the page is written in parts. */
const DETAIL_PAGE = 32;

function* stepDetailParts(run: RunView, details: StepDetails | undefined, warningsShown: number): Generator<string> {
  if (run.steps.length === 0) {
    yield `<p class="muted">No step yet.</p>`;
    return;
  }
  yield `<div id="step-details">`;
  if (!details) for (const s of run.steps) yield stepDetails(s);
  else
    for (let i = 0; i < run.steps.length; i += DETAIL_PAGE)
      for (const s of details(run.steps.slice(i, i + DETAIL_PAGE))) yield stepDetails(s);
  yield "</div>";
  // Problems met while reading the details come after the header was written: they are shown here.
  for (const w of run.warnings.slice(warningsShown)) yield `<div class="warn">${esc(w)}</div>`;
}

/**
 * Everything about a run except the page shell, in parts (a long run's page is megabytes: it is
 * written piece by piece, never held whole). Used by report.html and the dashboard.
 */
export function renderRunBodyParts(run: RunView, details?: StepDetails): Generator<string> {
  if (run.evaluation && run.steps.length === 0)
    return lines([renderHeader(run), warningsSection(run), evaluationSection(run), configSection(run)]);
  const initial = run.initialSkill;
  const best = run.bestSkill ?? run.finalSkill;
  const bestSection =
    best === null
      ? `<p class="muted">No best skill yet.</p>`
      : `${initial !== null ? `<h3>Initial → best</h3>${renderSkillDiff(initial, best)}` : ""}<h3>${RUN_FILES.bestSkill}</h3><pre \
id="best-skill">${esc(best)}</pre>`;
  const warningsShown = run.warnings.length;
  return lines([
    renderHeader(run),
    warningsSection(run),
    () => renderCards(run),
    `<h2>Scores</h2>`,
    scoreChartParts(run),
    scoreLegend(),
    testTable(run.summary),
    renderFrontier(run.summary?.search),
    `<h2>Cost and tokens</h2>`,
    costChartParts(run),
    stageTable(run.summary),
    `<h2>Steps</h2>`,
    stepTableParts(run),
    boundarySection(run),
    `<h2>Edits and diffs per step</h2>`,
    stepDetailParts(run, details, warningsShown),
    `<h2>Best skill</h2>`,
    bestSection,
    configSection(run),
  ]);
}

/** The diff-mode switch (pure CSS: radio inputs before <main>). */
const DIFF_MODE_SWITCH = `<input class="dm" type="radio" name="diffmode" id="dm-unified" checked><input class="dm" type="radio" name="diffmode" \
id="dm-split"><div class="modes">diff: <label for="dm-unified">unified</label><label for="dm-split">side by side</label></div>`;

/** A complete, self-contained report page in parts: inline CSS and SVG, no script, no network. */
export function* renderReportParts(
  run: RunView,
  opts: { generatedAt?: string; details?: StepDetails } = {},
): Generator<string> {
  const generated = opts.generatedAt ?? new Date().toISOString();
  yield `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<link rel="icon" href="data:,"><title>SkillOpt report · ${esc(run.name)}</title><style>${REPORT_CSS}</style></head>
<body>${DIFF_MODE_SWITCH}<main>
`;
  yield* renderRunBodyParts(run, opts.details);
  yield `
<p class="muted" style="margin-top:30px">Generated by SkillOpt at ${esc(generated)}.</p>
</main></body></html>
`;
}

/** A complete, self-contained report page as one string. */
export function renderReportHtml(run: RunView, opts: { generatedAt?: string } = {}): string {
  return [...renderReportParts(run, opts)].join("");
}
