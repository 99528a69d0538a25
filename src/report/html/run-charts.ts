import {
  type ChartPoint,
  type ChartSeries,
  type HLine,
  lineChartParts,
  renderLineChart,
  stackedBarParts,
  type VLine,
} from "./chart.ts";
import type { RunView, StepAction, StepView } from "./run-view.ts";

const ACTION_COLOR: Record<StepAction, string> = {
  accepted: "#16a34a",
  rejected: "#dc2626",
  rejected_early: "#f59e0b",
  undecided: "#6366f1",
  skipped: "#9ca3af",
};

const ACTION_MARKER: Record<StepAction, ChartPoint["marker"]> = {
  accepted: "circle",
  rejected: "cross",
  rejected_early: "triangle",
  undecided: "square",
  skipped: "square",
};

const STAGE_COLORS = [
  "#2563eb",
  "#f97316",
  "#06b6d4",
  "#db2777",
  "#16a34a",
  "#dc2626",
  "#7c3aed",
  "#ca8a04",
  "#0f766e",
  "#64748b",
];

function epochBoundaries(steps: StepView[]): VLine[] {
  const out: VLine[] = [];
  steps.forEach((s, i) => {
    const prev = steps[i - 1];
    if (prev && prev.epoch !== s.epoch) out.push({ x: (prev.step + s.step) / 2, label: `epoch ${s.epoch}` });
  });
  return out;
}

/** Whether a rejected candidate was stopped before the whole selection split: its score is a partial mean. */
function partlyScored(s: StepView): boolean {
  if (s.action !== "rejected" && s.action !== "rejected_early") return false;
  return s.earlyAt !== "" || (s.gate?.nUsed != null && s.gate.nTotal != null && s.gate.nUsed < s.gate.nTotal);
}

/**
 * Where a step's decision marker goes: the candidate's selection score; a candidate rejected after a
 * few items has no such score (the mean of one item is 0 or 1), so its marker sits on the current
 * line rather than at 0 like a crash; a step with no score at all draws no marker.
 */
function decisionY(s: StepView): number {
  if (partlyScored(s)) return s.currentScore ?? Number.NaN;
  return s.candidateScore ?? s.currentScore ?? Number.NaN;
}

function usedItems(s: StepView): string {
  return s.earlyAt || (s.gate?.nUsed != null && s.gate.nTotal != null ? `${s.gate.nUsed}/${s.gate.nTotal}` : "");
}

/** A step's decision marker on the score chart. */
function decisionPoint(s: StepView): ChartPoint {
  return {
    x: s.step,
    y: decisionY(s),
    marker: ACTION_MARKER[s.action],
    color: ACTION_COLOR[s.action],
    href: `#step-${s.step}`,
    attrs: { "data-step": s.step, "data-action": s.action },
    ...(partlyScored(s) ? { cls: "partial" } : {}),
    title: partlyScored(s)
      ? `step ${s.step} (epoch ${s.epoch}): ${s.action.replace("_", " ")} after ${usedItems(s)} items (no full selection score; \
drawn on the current line), current ${s.currentScore === null ? "—" : s.currentScore.toFixed(3)}`
      : `step ${s.step} (epoch ${s.epoch}): ${s.action.replace("_", " ")}${s.earlyAt ? ` at ${s.earlyAt}` : ""}; candidate \
${s.candidateScore === null ? "—" : s.candidateScore.toFixed(3)}, current ${s.currentScore === null ? "—" : s.currentScore.toFixed(3)}`,
  };
}

/**
 * The score chart: rollout, current and candidate selection scores, decisions, lr budget, epochs,
 * test lines; in parts (a report writes a long run's chart as it is made: lineChartParts).
 */
export function* scoreChartParts(run: RunView, id = "score-chart"): Generator<string> {
  const steps = run.steps;
  const n = steps.length === 0 ? 1 : Math.max(...steps.map((s) => s.step));
  const sum = run.summary;
  const baselineSel = sum?.baseline.selection ?? run.baselineSelection;
  const slowAccepted = new Map(
    run.boundaries.filter((b) => b.slowScore !== null && b.slowAction.includes("accept")).map((b) => [b.step, b]),
  );
  // The per-step series are made as they are drawn (a long run's are thousands of points with titles).
  function* currentPts(): Generator<ChartPoint> {
    if (baselineSel !== null) yield { x: 0, y: baselineSel, title: `baseline selection ${baselineSel.toFixed(3)}` };
    for (const s of steps) {
      if (s.currentScore !== null)
        yield { x: s.step, y: s.currentScore, title: `step ${s.step}: current ${s.currentScore.toFixed(3)}` };
      const b = slowAccepted.get(s.step);
      if (b && s.step < n) yield { x: s.step + 0.5, y: b.slowScore as number };
    }
  }
  function* rolloutPts(): Generator<ChartPoint> {
    for (const s of steps)
      if (s.rolloutScore !== null)
        yield { x: s.step, y: s.rolloutScore, title: `step ${s.step}: rollout ${s.rolloutScore.toFixed(3)}` };
  }
  function* decisionPts(): Generator<ChartPoint> {
    for (const s of steps) yield decisionPoint(s);
  }
  const series: ChartSeries[] = [
    {
      id: "rollout",
      name: "training rollout",
      color: "#60a5fa",
      line: "dashed",
      width: 1.5,
      points: rolloutPts,
    },
    { id: "current", name: "current selection", color: "#111827", line: "step", markers: false, points: currentPts },
    {
      id: "decision",
      name: "candidate selection",
      color: "#111827",
      line: "none",
      points: decisionPts,
    },
  ];
  series.push({
    id: "boundary",
    name: "slow update",
    color: "#7c3aed",
    line: "none",
    points: run.boundaries
      .filter((b) => b.slowScore !== null)
      .map((b) => ({
        x: b.step + 0.5,
        y: b.slowScore as number,
        marker: "diamond" as const,
        href: `#epoch-${b.epoch}`,
        attrs: { "data-epoch": b.epoch, "data-action": b.slowAction },
        title: `end of epoch ${b.epoch}: slow update ${b.slowAction.replace(/_/g, " ")}, selection ${(b.slowScore as number).toFixed(3)}`,
      })),
  });
  const hlines: HLine[] = [];
  if (sum?.baseline.test !== null && sum?.baseline.test !== undefined)
    hlines.push({
      id: "baseline-test",
      y: sum.baseline.test,
      label: `baseline test ${sum.baseline.test.toFixed(3)}`,
      color: "#6b7280",
    });
  if (sum?.best.test !== null && sum?.best.test !== undefined)
    hlines.push({
      id: "best-test",
      y: sum.best.test,
      label: `best test ${sum.best.test.toFixed(3)}`,
      color: "#16a34a",
      dash: "6 3",
    });
  if (sum?.final.test !== null && sum?.final.test !== undefined && sum.final.test !== sum.best.test)
    hlines.push({
      id: "final-test",
      y: sum.final.test,
      label: `final test ${sum.final.test.toFixed(3)}`,
      color: "#7c3aed",
      dash: "2 3",
    });
  const hasLr = steps.some((s) => s.lr !== null);
  function* lrValues(): Generator<{ x: number; v: number; title: string }> {
    for (const s of steps)
      if (s.lr !== null) yield { x: s.step, v: s.lr, title: `step ${s.step}: budget ${s.lr} edits` };
  }
  yield* lineChartParts({
    id,
    xMin: baselineSel !== null ? 0 : 0.5,
    xMax: n + 0.5,
    yLabel: "score",
    xLabel: "step",
    series,
    hlines,
    vlines: epochBoundaries(steps),
    ...(hasLr ? { strip: { name: "lr", color: "#c4b5fd", values: lrValues } } : {}),
  });
}

export function scoreLegend(): string {
  const item = (color: string, label: string) => `<span><i style="background:${color}"></i>${label}</span>`;
  return `<div class="legend">${[
    item("#60a5fa", "training rollout"),
    item("#111827", "current selection"),
    item(ACTION_COLOR.accepted, "accepted"),
    item(ACTION_COLOR.rejected, "rejected"),
    item(ACTION_COLOR.rejected_early, "rejected early"),
    item(ACTION_COLOR.undecided, "undecided"),
    item(ACTION_COLOR.skipped, "skipped"),
    item("#7c3aed", "slow update (epoch end)"),
    item("#c4b5fd", "lr: edit budget per step"),
  ].join("")}</div>`;
}

/** Tokens per step stacked by stage, with the cumulative cost on the right axis, and its legend; in parts (see scoreChartParts). */
export function* costChartParts(run: RunView, id = "cost-chart"): Generator<string> {
  const stages = new Set<string>();
  for (const s of run.steps) for (const k of Object.keys(s.tokensByStage)) stages.add(k);
  const useStages = stages.size > 0;
  const categories = useStages
    ? [...stages].map((st, i) => ({ id: st, name: st, color: STAGE_COLORS[i % STAGE_COLORS.length]! }))
    : [{ id: "tokens", name: "tokens", color: STAGE_COLORS[0]! }];
  let cum = 0;
  const costPts: { x: number; y: number }[] = [];
  for (const s of run.steps) {
    if (s.costUsd === null) continue;
    cum += s.costUsd;
    costPts.push({ x: s.step, y: cum });
  }
  yield* stackedBarParts({
    id,
    xLabel: "step",
    yLabel: "tokens",
    categories,
    columns: run.steps.map((s) => ({ x: s.step, values: useStages ? s.tokensByStage : { tokens: s.tokens } })),
    ...(cum > 0
      ? {
          line: {
            name: "cumulative cost",
            color: "#111827",
            points: costPts,
            format: (v: number, d: number) => `$${v.toFixed(Math.max(2, d))}`,
          },
        }
      : {}),
  });
  const legend = `<div class="legend">${categories.map((c) => `<span><i style="background:${c.color}"></i>${c.name}</span>`).join("")}${
    cum > 0
      ? `<span><i \
style="background:#111827"></i>cumulative cost</span>`
      : ""
  }</div>`;
  yield legend;
}

const RUN_COLORS = ["#2563eb", "#dc2626", "#16a34a", "#7c3aed"];

/** Two or more runs' selection curves on one chart (compare view). */
export function renderCompareChart(runs: RunView[], id = "compare-chart"): string {
  const series: ChartSeries[] = [];
  let xMax = 1;
  runs.forEach((run, i) => {
    const color = RUN_COLORS[i % RUN_COLORS.length]!;
    const pts: ChartPoint[] = [];
    const b = run.baselineSelection;
    if (b !== null) pts.push({ x: 0, y: b, title: `${run.name}: baseline ${b.toFixed(3)}` });
    for (const s of run.steps) {
      xMax = Math.max(xMax, s.step);
      if (s.currentScore !== null)
        pts.push({
          x: s.step,
          y: s.currentScore,
          title: `${run.name} step ${s.step}: ${s.currentScore.toFixed(3)}`,
          attrs: { "data-step": s.step },
        });
    }
    series.push({ id: `run-${i}`, name: run.name, color, line: "step", points: pts });
    series.push({
      id: `rollout-${i}`,
      name: `${run.name} rollout`,
      color,
      line: "dashed",
      width: 1,
      markers: false,
      points: run.steps.filter((s) => s.rolloutScore !== null).map((s) => ({ x: s.step, y: s.rolloutScore as number })),
    });
  });
  const chart = renderLineChart({ id, xMin: 0, xMax: xMax + 0.5, yLabel: "selection score", xLabel: "step", series });
  const legend = `<div class="legend">${runs
    .map(
      (r, i) => `<span><i style="background:${RUN_COLORS[i % RUN_COLORS.length]}">\
</i>${r.name.replace(/[<>&"]/g, "")} (solid: current selection, dashed: rollout)</span>`,
    )
    .join("")}</div>`;
  return chart + legend;
}
