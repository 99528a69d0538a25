import {
  esc,
  fmtCost,
  fmtScore,
  renderCompareChart,
  renderDiff,
  renderSkillDiff,
  renderRunBodyParts,
  type RunView,
  type StepDetails,
} from "../report/index.ts";
import { RUN_FILES } from "../run/index.ts";
import { LAUNCH_FIELDS } from "./launch-form.ts";
import type { LaunchInfo } from "./launcher.ts";
import type { RunRow } from "./run-index.ts";

type Tab = "runs" | "compare" | "launch" | "sleep";

/**
 * The page shell: nav, the stylesheet and script. It carries no secret: requests are
 * authenticated by the HttpOnly session cookie, which no script can read.
 */
export function page(opts: { title: string; tab: Tab; body: string; pageId: string }): string {
  return `${pageHead(opts)}${opts.body}${PAGE_TAIL}`;
}

/** The page shell around a body given in parts (a long run's page is written as it is rendered). */
export function* pageParts(
  opts: { title: string; tab: Tab; pageId: string },
  body: Iterable<string>,
): Generator<string> {
  yield pageHead(opts);
  yield* body;
  yield PAGE_TAIL;
}

const PAGE_TAIL = "</main></body></html>";

function pageHead(opts: { title: string; tab: Tab; pageId: string }): string {
  const nav = (["runs", "compare", "launch", "sleep"] as const)
    .map(
      (t) =>
        `<a href="/${t === "runs" ? "" : t}"${t === opts.tab ? ' class="on"' : ""}>${t[0]!.toUpperCase()}${t.slice(1)}</a>`,
    )
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(opts.title)} · SkillOpt</title>
<link rel="icon" href="data:,"><link rel="stylesheet" href="/assets/style.css"><script src="/assets/app.js" defer></script></head>
<body data-page="${esc(opts.pageId)}"><input class="dm" type="radio" name="diffmode" id="dm-unified" checked><input class="dm" type="radio" \
name="diffmode" id="dm-split">
<nav class="top"><b>SkillOpt</b>${nav}<span class="modes-inline">diff: <label for="dm-unified">unified</label> <label for="dm-split">side by \
side</label></span></nav>
<main>`;
}

function rowHtml(r: RunRow): string {
  const id = encodeURIComponent(r.id);
  const cells = [
    `<td><input type="checkbox" class="pick" value="${esc(r.id)}" aria-label="select ${esc(r.name)} for compare"></td>`,
    `<td data-v="${esc(r.name)}"><a href="/runs/${id}">${esc(r.name)}</a>${r.simulator ? ' <span class="muted">(sim)</span>' : ""}${
      r.error
        ? `<div \
class="row-error">${esc(r.error)}</div>`
        : ""
    }</td>`,
    `<td data-v="${esc(r.status)}"><span class="badge b-${esc(r.status)}">${esc(r.status)}</span>${
      r.status === "failed" && r.reason
        ? `<div class="row-error \
run-failure">${esc(r.reason)}</div>`
        : ""
    }${r.waiting ? `<div class="run-waiting">${esc(r.waiting)}</div>` : ""}</td>`,
    `<td data-v="${esc(r.benchmark)}">${esc(r.benchmark)}</td>`,
    // A simulator run called no model: the config's model names would be a lie here.
    r.simulator
      ? `<td data-v="sim">sim <span class="muted">(offline simulator)</span></td>`
      : `<td data-v="${esc(`${r.optimizer} ${r.target}`)}">${esc(r.optimizer)}${r.target && r.target !== r.optimizer ? ` / ${esc(r.target)}` : ""}</td>`,
    `<td class="n" data-v="${r.best ?? -1}">${fmtScore(r.best)}</td>`,
    // An evaluation has no training steps: "—", as `skillopt runs` prints.
    r.kind === "eval"
      ? `<td class="n" data-v="-1">—</td>`
      : `<td class="n" data-v="${r.steps}">${r.steps}${r.total_steps ? `/${r.total_steps}` : ""}</td>`,
    `<td class="n" data-v="${r.cost_usd ?? -1}">${fmtCost(r.cost_usd)}</td>`,
    `<td data-v="${esc(r.started_at ?? "")}">${esc((r.started_at ?? "").replace("T", " ").replace(/\.\d+Z$/, "Z"))}</td>`,
  ];
  return `<tr data-run="${esc(r.id)}"${r.error ? ' class="has-error"' : ""}>${cells.join("")}</tr>`;
}

export function runsPage(rows: RunRow[], root: string, looked: readonly string[] = [root]): string {
  const heads = ["", "run", "status", "benchmark", "models", "best", "steps", "cost", "started"]
    .map((h, i) => (i === 0 ? "<th></th>" : `<th data-sort="${i}" class="${i >= 5 && i <= 7 ? "n" : ""}">${h}</th>`))
    .join("");
  const table =
    rows.length === 0
      ? `<div class="muted" id="no-runs"><p>No runs under <code>${esc(root)}</code> yet. Start one from <a href="/launch">Launch</a> or with \
<code>skillopt train --config quickstart</code>.</p><p>Looked in ${looked.map((d) => `<code>${esc(d)}</code>`).join(", ")}. Runs written \
elsewhere (<code>--out DIR/run</code>) are shown by <code>skillopt ui --root DIR</code>.</p></div>`
      : `<table class="sortable" id="runs"><thead><tr>${heads}</tr></thead><tbody>${rows.map(rowHtml).join("")}</tbody></table>
<p><button id="compare-btn" type="button">Compare the two selected runs</button></p>`;
  return `<h1>Runs</h1><p class="meta">Under <code>${esc(root)}</code> (another folder: <code>skillopt ui --root DIR</code>) · click a column \
to sort</p>${table}`;
}

const STAGES = ["rollout", "reflect", "aggregate", "select", "update", "evaluate", "slow update", "meta skill", "test"];

/** Stage strip and log tail of a run this dashboard launched (updated from its output). */
function launchPanel(l: LaunchInfo): string {
  return `<div id="launch-progress" data-launch="${esc(l.id)}" data-status="${esc(l.status)}"><p class="stages">${STAGES.map(
    (s) => `<span class="stage" \
data-stage="${s}">${s}</span>`,
  ).join("")} <span id="launch-where" class="muted"></span> <span id="launch-status" class="badge \
b-${esc(l.status)}">${esc(l.status)}</span>${
    l.status === "running"
      ? ` <button type="button" class="stop-btn" \
data-launch="${esc(l.id)}">Stop</button>`
      : ""
  }</p><pre class="log" id="launch-log">${esc(l.log.slice(-15).join("\n"))}</pre></div>`;
}

/**
 * The part of a run's page the live view re-renders when the run changes, in parts: with
 * `details`, each page of steps has its details read when its part is reached (a long run's body
 * is megabytes, never held whole); without, the view's steps carry them already.
 */
export function* runBodyParts(run: RunView, id: string, details?: StepDetails): Generator<string> {
  yield `<div id="run-body" data-run="${esc(id)}" data-steps="${run.steps.length}" data-status="${esc(run.status)}">`;
  yield* renderRunBodyParts(run, details);
  yield "</div>";
}

/** A run's page (inside the shell), in parts: see runBodyParts. */
export function* runPageParts(run: RunView, id: string, launch?: LaunchInfo, details?: StepDetails): Generator<string> {
  const eid = encodeURIComponent(id);
  yield `${launch ? launchPanel(launch) : ""}<p class="meta"><a href="/">← runs</a> · <a href="/runs/${eid}/${RUN_FILES.report}">${RUN_FILES.report}</a> · <a \
href="/runs/${eid}/files/${RUN_FILES.bestSkill}">${RUN_FILES.bestSkill}</a> · <a href="/runs/${eid}/files/${RUN_FILES.history}">${RUN_FILES.history}</a> · \
<span id="live" class="live">${run.status === "running" ? "live" : ""}</span></p>
`;
  yield* runBodyParts(run, id, details);
}

function runOptions(rows: RunRow[], selected: string | undefined): string {
  return rows
    .map((r) => `<option value="${esc(r.id)}"${r.id === selected ? " selected" : ""}>${esc(r.name)}</option>`)
    .join("");
}

export function comparePage(rows: RunRow[], a: RunView | null, b: RunView | null, aId?: string, bId?: string): string {
  const picker = `<form method="get" action="/compare" class="inline"><label>A <select name="a">${runOptions(rows, aId)}</select></label> <label>B \
<select name="b">${runOptions(rows, bId)}</select></label> <button type="submit">Compare</button></form>`;
  if (!a || !b) return `<h1>Compare runs</h1>${picker}<p class="muted">Pick two runs.</p>`;
  const line = (r: RunView) =>
    `<tr><td>${esc(r.name)}</td><td class="n">${fmtScore(r.baselineSelection)}</td><td \
class="n">${fmtScore(r.summary?.best.selection ?? r.steps.at(-1)?.bestScore)}</td><td class="n">${fmtScore(r.summary?.best.test)}</td><td \
class="n">${r.steps.length}</td><td class="n">${r.steps.filter((s) => s.action === "accepted").length}</td><td \
class="n">${fmtCost(r.summary?.costUsd ?? null)}</td></tr>`;
  const bestA = a.bestSkill ?? a.finalSkill ?? "";
  const bestB = b.bestSkill ?? b.finalSkill ?? "";
  return `<h1>Compare runs</h1>${picker}
<table id="compare-table"><thead><tr><th>run</th><th class="n">baseline sel</th><th class="n">best sel</th><th class="n">best test</th><th \
class="n">steps</th><th class="n">accepted</th><th class="n">cost</th></tr></thead><tbody>${line(a)}${line(b)}</tbody></table>
<h2>Selection curves</h2>${renderCompareChart([a, b])}
<h2>Best skills: ${esc(a.name)} → ${esc(b.name)}</h2><div id="compare-diff">${renderSkillDiff(bestA, bestB)}</div>
<h2>Configuration differences</h2><details id="compare-config"${a.configYaml !== b.configYaml ? " open" : ""}><summary>config.resolved.yaml: ${esc(a.name)} → \
${esc(b.name)}</summary>${renderDiff(a.configYaml, b.configYaml, { context: 1 })}</details>`;
}

function fieldHtml(f: (typeof LAUNCH_FIELDS)[number]): string {
  const id = `f-${f.name.replace(/\./g, "-")}`;
  let control: string;
  if (f.kind === "choice" || f.kind === "bool") {
    const choices = f.kind === "bool" ? ["true", "false"] : (f.choices ?? []);
    control = `<select id="${id}" name="${esc(f.name)}"><option value="">(config \
default)</option>${choices.map((c) => `<option>${esc(c)}</option>`).join("")}</select>`;
  } else {
    control = `<input id="${id}" name="${esc(f.name)}" type="text" inputmode="${f.kind === "int" ? "numeric" : "text"}" autocomplete="off">`;
  }
  return `<div class="field"><label for="${id}">${esc(f.label)} <code>${esc(f.name)}</code></label>${control}<span class="default" \
data-default-for="${esc(f.name)}"></span><div class="field-error" data-error-for="${esc(f.name)}" role="alert"></div></div>`;
}

export function launchPage(configs: { name: string; label: string }[], launches: LaunchInfo[], cwd: string): string {
  const options = configs.map((c) => `<option value="${esc(c.name)}">${esc(c.label)}</option>`).join("");
  const initial = configs.some((c) => c.name === "quickstart") ? "quickstart" : (configs[0]?.name ?? "");
  return `<h1>Launch a run</h1>
<form id="launch-form" autocomplete="off">
<div class="field"><label for="f-config">Config: a bundled name or a YAML path (relative to <code>${esc(cwd)}</code>)</label><input id="f-config" \
name="config" list="config-list" value="${esc(initial)}" size="50" autocomplete="off"><datalist id="config-list">${options}</datalist><div \
class="field-error" data-error-for="config" role="alert"></div></div>
<div class="grid2">${LAUNCH_FIELDS.map(fieldHtml).join("")}</div>
<div class="field"><label for="f-extra">More overrides, one <code>section.key=value</code> per line</label><textarea id="f-extra" name="extra" \
rows="3"></textarea><div class="field-error" data-error-for="extra" role="alert"></div></div>
<p><button type="submit" id="launch-btn">Launch</button> <span id="launch-msg" class="muted"></span></p>
</form>
<h2>Runs started here</h2><div id="launches">${launchesHtml(launches)}</div>`;
}

export function launchesHtml(launches: LaunchInfo[]): string {
  if (launches.length === 0) return `<p class="muted">None yet.</p>`;
  return launches
    .map(
      (l) =>
        `<div class="launch" data-launch="${esc(l.id)}" data-status="${esc(l.status)}"><p><span class="badge b-${esc(l.status)}">${esc(l.status)}</span> \
<b>${esc(l.config)}</b> ${l.sets.map((s) => `<code>${esc(s)}</code>`).join(" ")} → <a class="run-link" \
href="/runs/${encodeURIComponent(l.out.split(/[\\/]/).pop() ?? "")}">${esc(l.out)}</a>${l.exitCode !== null ? ` · exit ${l.exitCode}` : ""} \
${l.status === "running" ? `<button type="button" class="stop-btn" data-launch="${esc(l.id)}">Stop</button>` : ""}</p><pre \
class="log">${esc(l.log.slice(-40).join("\n"))}</pre></div>`,
    )
    .join("");
}

export function errorPage(message: string): string {
  return `<h1>Cannot show this</h1><div class="warn">${esc(message)}</div><p><a href="/">← runs</a></p>`;
}
