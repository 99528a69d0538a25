import { esc } from "./escape.ts";

export interface ChartPoint {
  x: number;
  y: number;
  title?: string;
  /** Extra attributes for the point's element (data-step, data-action, …). */
  attrs?: Record<string, string | number>;
  marker?: "circle" | "cross" | "triangle" | "square" | "diamond";
  cls?: string;
  color?: string;
  /** Wrap the marker in a link (to the step's details). */
  href?: string;
}

export interface ChartSeries {
  id: string;
  name: string;
  color: string;
  /**
   * The points, or a function making them each time it is called: a long run's series are
   * thousands of points with their titles, made as they are drawn instead of all held at once.
   */
  points: ChartPoint[] | (() => Iterable<ChartPoint>);
  line?: "solid" | "dashed" | "step" | "none";
  markers?: boolean;
  width?: number;
}

export interface HLine {
  y: number;
  label: string;
  color: string;
  dash?: string;
  id: string;
}

export interface VLine {
  x: number;
  label: string;
}

interface Bar {
  x: number;
  v: number;
  title?: string;
}

interface Bars {
  name: string;
  color: string;
  /** The bars, or a function making them each time it is called (see ChartSeries.points). */
  values: Bar[] | (() => Iterable<Bar>);
}

/** The finite points of a series, made when asked (ChartSeries.points may be a function). */
function* finitePoints(s: ChartSeries): Generator<ChartPoint> {
  for (const p of typeof s.points === "function" ? s.points() : s.points) if (Number.isFinite(p.y)) yield p;
}

interface LineChartSpec {
  id: string;
  xMin: number;
  xMax: number;
  yMin?: number;
  yMax?: number;
  yLabel: string;
  xLabel: string;
  series: ChartSeries[];
  hlines?: HLine[];
  vlines?: VLine[];
  /** A strip under the plot (the learning-rate budget per step). */
  strip?: Bars;
}

const W = 920;
const PLOT_H = 260;
const STRIP_H = 54;
const M = { l: 48, r: 150, t: 14, b: 34 };

function fmt(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

/**
 * Axis ticks a reader can read: a step of 1, 2, 2.5 or 5 times a power of ten, at most `intervals`
 * of them up to a top at or above `max` (so 10k, not 11k; 0.025, not $0.03).
 */
function niceTicks(max: number, intervals = 4): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / intervals;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s * intervals >= max * (1 - 1e-9))!;
  const n = Math.ceil(max / step - 1e-9);
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

/** Decimals that show every tick of a nice scale exactly (0.025 needs 3). */
function tickDecimals(ticks: readonly number[]): number {
  let d = 0;
  for (const t of ticks) while (d < 6 && Math.abs(Number(t.toFixed(d)) - t) > 1e-12) d++;
  return d;
}

/** A count on an axis: 2,500 as 2.5k, 10,000 as 10k (never rounded past what the tick is). */
function fmtCount(v: number): string {
  if (v < 1000) return String(Math.round(v));
  const k = v / 1000;
  return `${Number.isInteger(k) ? k : Number(k.toFixed(2))}k`;
}

/** The y of each label beside the plot, pushed apart so that none overlaps the next (`gap` pixels). */
function spreadLabels(ys: readonly number[], gap = 13): number[] {
  const order = ys.map((y, i) => ({ y, i })).sort((a, b) => a.y - b.y);
  const out = [...ys];
  let prev = Number.NEGATIVE_INFINITY;
  for (const o of order) {
    const y = Math.max(o.y, prev + gap);
    out[o.i] = y;
    prev = y;
  }
  return out;
}

function attrs(a: Record<string, string | number> | undefined): string {
  if (!a) return "";
  return Object.entries(a)
    .map(([k, v]) => ` ${k}="${esc(v)}"`)
    .join("");
}

function marker(p: ChartPoint, cx: number, cy: number, seriesColor: string, seriesId: string): string {
  const m = markerShape(p, cx, cy, p.color ?? seriesColor, seriesId);
  return p.href ? `<a href="${esc(p.href)}">${m}</a>` : m;
}

function markerShape(p: ChartPoint, cx: number, cy: number, color: string, seriesId: string): string {
  const cls = `pt${p.cls ? ` ${p.cls}` : ""}`;
  const common = ` class="${esc(cls)}" data-series="${esc(seriesId)}"${attrs(p.attrs)}`;
  const title = p.title ? `<title>${esc(p.title)}</title>` : "";
  const x = cx.toFixed(1);
  const y = cy.toFixed(1);
  switch (p.marker ?? "circle") {
    case "cross":
      return `<g${common} transform="translate(${x},${y})"><path d="M-5,-5L5,5M-5,5L5,-5" stroke="${color}" stroke-width="2.2"/><rect x="-6" y="-6" \
width="12" height="12" fill="transparent"/>${title}</g>`;
    case "triangle":
      return `<g${common} transform="translate(${x},${y})"><path d="M0,-6L5.5,4.5L-5.5,4.5Z" fill="${color}"/>${title}</g>`;
    case "square":
      return `<g${common} transform="translate(${x},${y})"><rect x="-4" y="-4" width="8" height="8" fill="${color}"/>${title}</g>`;
    case "diamond":
      return `<g${common} transform="translate(${x},${y})"><path d="M0,-6L6,0L0,6L-6,0Z" fill="${color}"/>${title}</g>`;
    default:
      return `<g${common} transform="translate(${x},${y})"><circle r="4.2" fill="${color}" stroke="#fff" stroke-width="1"/>${title}</g>`;
  }
}

/** A self-contained SVG line chart (no script needed to display it). */
export function renderLineChart(spec: LineChartSpec): string {
  return [...lineChartParts(spec)].join("");
}

/**
 * The line chart in parts, as its elements are made: a long run's chart is megabytes of markers
 * (2.4 MB at 3 072 steps), which a report writes as they come instead of holding them all.
 */
export function* lineChartParts(spec: LineChartSpec): Generator<string> {
  const out: string[] = [];
  const yMin = spec.yMin ?? 0;
  const yMax = spec.yMax ?? 1;
  const stripH = spec.strip ? STRIP_H : 0;
  const H = M.t + PLOT_H + M.b + stripH;
  const pw = W - M.l - M.r;
  const span = spec.xMax - spec.xMin || 1;
  const sx = (x: number) => M.l + ((x - spec.xMin) / span) * pw;
  const sy = (y: number) => M.t + PLOT_H - ((y - yMin) / (yMax - yMin || 1)) * PLOT_H;
  out.push(
    `<svg class="chart" id="${esc(spec.id)}" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(spec.yLabel)} by ${esc(spec.xLabel)}" \
xmlns="http://www.w3.org/2000/svg">`,
  );
  for (let i = 0; i <= 4; i++) {
    const v = yMin + ((yMax - yMin) * i) / 4;
    const y = sy(v);
    out.push(`<line class="grid" x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}"/>`);
    out.push(`<text class="tick" x="${M.l - 6}" y="${y + 4}" text-anchor="end">${fmt(v)}</text>`);
  }
  const ticks = Math.min(12, Math.max(1, Math.round(span)));
  const tickStep = Math.max(1, Math.ceil(span / ticks));
  for (let x = Math.ceil(spec.xMin); x <= spec.xMax; x += tickStep) {
    out.push(`<text class="tick" x="${sx(x)}" y="${M.t + PLOT_H + 16}" text-anchor="middle">${x}</text>`);
  }
  out.push(
    `<text class="axis" x="${M.l + pw / 2}" y="${M.t + PLOT_H + 30}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text class="axis" transform="translate(12,${M.t + PLOT_H / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
  );
  for (const v of spec.vlines ?? []) {
    const x = sx(v.x);
    out.push(
      `<line class="epoch" x1="${x}" x2="${x}" y1="${M.t}" y2="${M.t + PLOT_H + stripH}"/><text class="epoch-label" x="${x + 4}" \
y="${M.t + PLOT_H - 5}">${esc(v.label)}</text>`,
    );
  }
  // Two test lines at (nearly) the same score: their labels are pushed apart, never drawn on each other.
  const hlines = spec.hlines ?? [];
  const labelYs = spreadLabels(hlines.map((h) => sy(h.y) + 4));
  for (const [i, h] of hlines.entries()) {
    const y = sy(h.y);
    out.push(
      `<g class="hline" data-hline="${esc(h.id)}"><line x1="${M.l}" x2="${W - M.r}" y1="${y}" y2="${y}" stroke="${h.color}" \
stroke-dasharray="${h.dash ?? "4 3"}"/><text x="${W - M.r + 6}" y="${labelYs[i]!.toFixed(1)}" fill="${h.color}">${esc(h.label)}</text></g>`,
    );
  }
  for (const s of spec.series) {
    const line = s.line ?? "solid";
    if (line !== "none") {
      let d = "";
      let i = 0;
      for (const p of finitePoints(s)) {
        const x = sx(p.x).toFixed(1);
        const y = sy(p.y).toFixed(1);
        if (i++ === 0) d += `M${x},${y}`;
        else if (line === "step") d += `H${x}V${y}`;
        else d += `L${x},${y}`;
      }
      if (i > 1)
        out.push(
          `<path class="series-line" data-series="${esc(s.id)}" d="${d}" fill="none" stroke="${s.color}" \
stroke-width="${s.width ?? 2}"${line === "dashed" ? ' stroke-dasharray="6 4"' : ""}/>`,
        );
    }
    if (s.markers !== false)
      for (const p of finitePoints(s)) {
        out.push(marker(p, sx(p.x), sy(p.y), s.color, s.id));
        if (out.length >= CHUNK) yield out.splice(0).join("");
      }
  }
  if (spec.strip) {
    const top = M.t + PLOT_H + M.b;
    const bars = spec.strip.values;
    const each = () => (typeof bars === "function" ? bars() : bars);
    let maxV = 1;
    for (const b of each()) maxV = Math.max(maxV, b.v);
    const bw = Math.max(2, Math.min(28, (pw / Math.max(1, span)) * 0.6));
    out.push(`<text class="axis" x="${M.l - 6}" y="${top + 12}" text-anchor="end">${esc(spec.strip.name)}</text>`);
    for (const b of each()) {
      const h = ((STRIP_H - 14) * b.v) / maxV;
      out.push(
        `<g class="lr-bar" data-step="${b.x}" data-lr="${b.v}"><rect x="${(sx(b.x) - bw / 2).toFixed(1)}" y="${(top + STRIP_H - h).toFixed(1)}" \
width="${bw.toFixed(1)}" height="${h.toFixed(1)}" fill="${spec.strip.color}"/><text class="tick" x="${sx(b.x).toFixed(1)}" \
y="${(top + STRIP_H - h - 2).toFixed(1)}" text-anchor="middle">${fmt(b.v)}</text>${b.title ? `<title>${esc(b.title)}</title>` : ""}</g>`,
      );
      if (out.length >= CHUNK) yield out.splice(0).join("");
    }
  }
  out.push("</svg>");
  yield out.join("");
}

/** Elements per part of a chart made in parts. */
const CHUNK = 256;

interface StackedBarSpec {
  id: string;
  xLabel: string;
  yLabel: string;
  categories: { id: string; name: string; color: string }[];
  /** One column per x: value per category id. */
  columns: { x: number; values: Record<string, number> }[];
  /** Optional cumulative line on a right axis (cost). */
  /** `format(v, decimals)`: a tick's words, with the decimals that show the scale's steps exactly. */
  line?: {
    name: string;
    color: string;
    points: { x: number; y: number }[];
    format: (v: number, decimals: number) => string;
  };
}

/**
 * Stacked bars per step (tokens by stage), with an optional cumulative line on a right axis, in
 * parts as their columns are made (see lineChartParts).
 */
export function* stackedBarParts(spec: StackedBarSpec): Generator<string> {
  const H = M.t + 200 + M.b;
  const ph = 200;
  const pw = W - M.l - M.r;
  const xs = spec.columns.map((c) => c.x);
  const xMin = Math.min(...xs, 1) - 0.5;
  const xMax = Math.max(...xs, 1) + 0.5;
  const sx = (x: number) => M.l + ((x - xMin) / (xMax - xMin)) * pw;
  const totals = spec.columns.map((c) => Object.values(c.values).reduce((a, b) => a + b, 0));
  const yTicks = niceTicks(Math.max(1, ...totals));
  const yMax = yTicks[yTicks.length - 1]!;
  const sy = (v: number) => M.t + ph - (v / yMax) * ph;
  const bw = Math.max(2, Math.min(36, (pw / Math.max(1, xMax - xMin)) * 0.7));
  const out: string[] = [
    `<svg class="chart" id="${esc(spec.id)}" viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${esc(spec.yLabel)}" \
xmlns="http://www.w3.org/2000/svg">`,
  ];
  for (const v of yTicks) {
    out.push(
      `<line class="grid" x1="${M.l}" x2="${W - M.r}" y1="${sy(v)}" y2="${sy(v)}"/><text class="tick" x="${M.l - 6}" y="${sy(v) + 4}" \
text-anchor="end">${fmtCount(v)}</text>`,
    );
  }
  for (const c of spec.columns) {
    let acc = 0;
    out.push(`<g class="bar" data-step="${c.x}">`);
    for (const cat of spec.categories) {
      const v = c.values[cat.id] ?? 0;
      if (v <= 0) continue;
      const y1 = sy(acc + v);
      const y0 = sy(acc);
      out.push(
        `<rect x="${(sx(c.x) - bw / 2).toFixed(1)}" y="${y1.toFixed(1)}" width="${bw.toFixed(1)}" height="${Math.max(0.5, y0 - y1).toFixed(1)}" \
fill="${cat.color}"><title>step ${c.x} · ${esc(cat.name)}: ${Math.round(v).toLocaleString("en-US")}</title></rect>`,
      );
      acc += v;
    }
    out.push("</g>");
    out.push(`<text class="tick" x="${sx(c.x)}" y="${M.t + ph + 16}" text-anchor="middle">${c.x}</text>`);
    if (out.length >= CHUNK) yield out.splice(0).join("");
  }
  if (spec.line && spec.line.points.length > 0) {
    const lTicks = niceTicks(Math.max(1e-9, ...spec.line.points.map((p) => p.y)), 2);
    const lMax = lTicks[lTicks.length - 1]!;
    const decimals = tickDecimals(lTicks);
    const ly = (v: number) => M.t + ph - (v / lMax) * ph;
    const d = spec.line.points
      .map((p, i) => `${i === 0 ? "M" : "L"}${sx(p.x).toFixed(1)},${ly(p.y).toFixed(1)}`)
      .join("");
    out.push(`<path d="${d}" fill="none" stroke="${spec.line.color}" stroke-width="2"/>`);
    for (const v of lTicks) {
      out.push(
        `<text class="tick" x="${W - M.r + 6}" y="${ly(v) + 4}" fill="${spec.line.color}">${esc(spec.line.format(v, decimals))}</text>`,
      );
    }
    out.push(
      `<text class="axis" x="${W - M.r + 6}" y="${M.t + ph / 2 + 20}" fill="${spec.line.color}">${esc(spec.line.name)}</text>`,
    );
  }
  out.push(
    `<text class="axis" x="${M.l + pw / 2}" y="${M.t + ph + 30}" text-anchor="middle">${esc(spec.xLabel)}</text>`,
    `<text class="axis" transform="translate(12,${M.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`,
    "</svg>",
  );
  yield out.join("");
}
