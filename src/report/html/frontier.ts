import { esc, fmtInt, fmtScore } from "./escape.ts";
import type { SearchView } from "./run-view.ts";

/**
 * The cost frontier: selection score against the deployed cost (the prompt + completion tokens a
 * selection task took with the skill, measured from the target's usage; or, where the target
 * reported none, the skill's estimated size), one dot per skill the
 * run kept (under search: pool, every pool member; otherwise baseline, best and final), the
 * frontier joined by a line and the chosen skill (best_skill.md) ringed and named. Then the pool,
 * when there is one.
 */
/** Dollars per task: fractions of a cent need more digits than a run's total. */
function fmtCostPerTask(x: number | null | undefined): string {
  if (x === undefined) return "";
  if (x === null) return "unknown";
  return x === 0 ? "$0" : `$${x < 0.01 ? x.toPrecision(2) : x.toFixed(4)}`;
}

export function renderFrontier(search: SearchView | undefined): string {
  if (!search?.frontier.length) return "";
  const points = [
    ...search.frontier.map((p) => ({ ...p, on: true })),
    ...(search.pool ?? [])
      .filter((p) => !search.frontier.some((f) => f.hash === p.hash))
      .map((p) => ({ ...p, on: false, chosen: false })),
  ];
  const measured = search.costBasis === "task";
  const unit = measured ? "tokens per task" : "skill tokens";
  const axis = measured
    ? "tokens per selection task (prompt + completion, the target's usage)"
    : "deployed skill tokens per task (≈4 chars/token; the target reported no usage)";
  const W = 520;
  const H = 240;
  const pad = { l: 48, r: 16, t: 14, b: 34 };
  const xs = points.map((p) => p.tokens);
  const ys = points.map((p) => p.score);
  const [x0, x1] = [Math.min(...xs) * 0.9, Math.max(...xs) * 1.1 || 1];
  const [y0, y1] = [Math.max(0, Math.min(...ys) - 0.05), Math.min(1.05, Math.max(...ys) + 0.05)];
  const X = (x: number) => pad.l + ((x - x0) / (x1 - x0 || 1)) * (W - pad.l - pad.r);
  const Y = (y: number) => H - pad.b - ((y - y0) / (y1 - y0 || 1)) * (H - pad.t - pad.b);
  const line = search.frontier.map((p) => `${X(p.tokens).toFixed(1)},${Y(p.score).toFixed(1)}`).join(" ");
  const dots = points
    .map(
      (p) =>
        `<circle class="${p.on ? "frontier-point" : "pool-point"}" data-hash="${esc(p.hash)}" cx="${X(p.tokens).toFixed(1)}" cy="${Y(p.score).toFixed(1)}" \
r="4" fill="${p.on ? "#2563eb" : "#9ca3af"}"><title>${esc(p.origin)}: score ${fmtScore(p.score)}, ${fmtInt(p.tokens)} ${unit}</title></circle>`,
    )
    .join("");
  const c = search.frontier.find((p) => p.chosen);
  const chosen = c
    ? `<circle id="frontier-chosen" data-hash="${esc(c.hash)}" cx="${X(c.tokens).toFixed(1)}" cy="${Y(c.score).toFixed(1)}" r="9" fill="none" \
stroke="#dc2626" stroke-width="2"/><text x="${(X(c.tokens) + 12).toFixed(1)}" y="${(Y(c.score) - 8).toFixed(1)}" font-size="11" fill="#dc2626">chosen: \
${esc(c.origin)}</text>`
    : "";
  const axes = `<line x1="${pad.l}" y1="${H - pad.b}" x2="${W - pad.r}" y2="${H - pad.b}" stroke="#6b7280"/><line x1="${pad.l}" y1="${pad.t}" \
x2="${pad.l}" y2="${H - pad.b}" stroke="#6b7280"/><text x="${W / 2}" y="${H - 6}" font-size="11" text-anchor="middle">${axis}</text><text \
x="12" y="${H / 2}" font-size="11" transform="rotate(-90 12 ${H / 2})" text-anchor="middle">selection score</text>\
<text x="${pad.l}" y="${H - pad.b + 14}" font-size="10">${fmtInt(x0)}</text><text x="${W - pad.r}" y="${H - pad.b + 14}" font-size="10" \
text-anchor="end">${fmtInt(x1)}</text><text x="${pad.l - 4}" y="${Y(y0) + 4}" font-size="10" text-anchor="end">${fmtScore(y0)}</text><text \
x="${pad.l - 4}" y="${Y(y1) + 4}" font-size="10" text-anchor="end">${fmtScore(y1)}</text>`;
  const svg = `<svg id="frontier-chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="score against deployed tokens">\
${axes}<polyline points="${line}" fill="none" stroke="#2563eb" stroke-width="1.5"/>${dots}${chosen}</svg>`;
  const objective =
    search.objective === "weighted"
      ? `objective: weighted (score − ${search.tokenWeight} per 1000 ${unit})`
      : "objective: score";
  const rows = search.frontier
    .map(
      (p) =>
        `<tr${p.chosen ? ' class="total"' : ""}><td>${esc(p.origin)}${p.chosen ? " (chosen)" : ""}</td><td class="n">${fmtScore(p.score)}</td><td \
class="n">${fmtInt(p.tokens)}</td>${measured ? `<td class="n">${fmtCostPerTask(p.costUsd)}</td><td class="n">${fmtInt(p.skillTokens)}</td>` : ""}<td \
class="n">${fmtScore(p.objective)}</td></tr>`,
    )
    .join("");
  const head = measured
    ? `<th class="n">tokens per task</th><th class="n">$ per task</th><th class="n">skill tokens</th>`
    : `<th class="n">skill tokens</th>`;
  const table = `<table id="frontier-table"><thead><tr><th>skill on the frontier</th><th class="n">selection</th>${head}<th \
class="n">objective</th></tr></thead><tbody>${rows}</tbody></table>`;
  const pool = search.pool?.length
    ? `<h3>Candidate pool</h3><table id="pool-table"><thead><tr><th>candidate</th><th class="n">step</th><th>status</th><th class="n">selection</th><th \
class="n">${measured ? "tokens per task" : "skill tokens"}</th><th class="n">items best on</th><th>parents</th></tr></thead><tbody>${search.pool
        .map(
          (p) =>
            `<tr><td>${esc(p.origin)}</td><td class="n">${p.step}</td><td>${esc(p.status)}</td><td class="n">${fmtScore(p.score)}</td><td \
class="n">${fmtInt(p.tokens)}</td><td class="n">${p.itemsBest}</td><td class="muted">${esc(p.parents.map((h) => h.slice(0, 8)).join(" + "))}</td></tr>`,
        )
        .join(
          "",
        )}</tbody></table>${search.merges ? `<p class="muted">merges tried ${search.merges.tried}, accepted ${search.merges.accepted}</p>` : ""}${
        search.shortened
          ? `<p class="muted">shortenings asked ${search.shortened.tried}, joined the pool ${search.shortened.accepted}</p>`
          : ""
      }`
    : "";
  return `<h2>Score and deployed cost</h2><p class="muted">search: ${esc(search.mode)} · ${esc(objective)} · the line joins the skills no other \
beats on both score and tokens; the ring marks best_skill.md</p>${svg}${table}${pool}`;
}
