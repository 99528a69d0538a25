import type { FlipRow, SkillComparison } from "../engine/index.ts";

/** The document `eval --baseline` writes (skill_check.json, `--json`) and renders as text or Markdown. */
export interface SkillCheck extends SkillComparison {
  schema: "skillopt.skill_check";
  version: 1;
  title: string;
  candidate_path: string;
  baseline_path: string;
  baseline_label: string;
  benchmark: string;
  split: string;
  backend: string | undefined;
  calls: { total: number; cached: number };
  cost_usd: number | null;
  fail_on: "regression" | "undecided";
  /** True when the check fails the job (exit 1). */
  failed: boolean;
}

const MAX_ROWS = 25;
const pts = (x: number) => `${x >= 0 ? "+" : "−"}${Math.abs(x * 100).toFixed(1)}`;
const num = (x: number) => x.toFixed(3);
const cell = (s: string | undefined) =>
  (s ?? "")
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/`/g, "'")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/[\r\n]+/g, " ");

const VERDICT_WORDS: Record<SkillComparison["verdict"], string> = {
  improved: "IMPROVED",
  regressed: "REGRESSED",
  undecided: "UNDECIDED",
};

/** One sentence on the decision: Δ, its interval, how many tasks it used, and why. */
function verdictSentence(c: SkillCheck): string {
  const d = c.decision;
  const conf = Math.round(d.confidence * 100);
  const base = `Δ ${pts(d.delta)} pts [${pts(d.ci[0])}, ${pts(d.ci[1])}] (the gate's ${conf} % always-valid interval over ${d.n_used} paired tasks)`;
  if (c.verdict === "improved")
    return d.low_evidence
      ? `${base}: the ${d.rule} rule (${c.rule.why}) finds the candidate likely better (posterior probability of a gain ${Math.round(
          (d.prob_gain ?? 0) * 100,
        )} %), on low evidence: the interval still includes no change.`
      : `${base}: the candidate is better at ${conf} % confidence.`;
  if (c.verdict === "regressed") {
    return d.reason === "regressions"
      ? `${base}: more previously-passing tasks fail than evaluation.gate_max_regressions allows.`
      : `${base}: the candidate is worse at ${conf} % confidence.`;
  }
  return `${base}: the evidence shows neither a gain nor a loss at ${conf} % confidence.`;
}

/** The one-line power statement: the smallest change this run could detect. */
function powerSentence(c: SkillCheck): string {
  const p = c.power;
  const noise = p.noise_items
    ? `${p.noise_flips} of ${p.noise_items} tasks flip between two samples of the baseline`
    : "the baseline was not re-sampled (flip rate taken as 0)";
  return `With ${c.n_items} tasks (${noise}), this run could detect a change of about ${(p.detectable_gain * 100).toFixed(1)} points (80 % power, \
${Math.round(p.confidence * 100)} % confidence); a smaller real change can read as undecided.`;
}

function flipTable(rows: readonly FlipRow[]): string[] {
  const shown = rows.slice(0, MAX_ROWS);
  const out = [
    "| task | type | baseline | candidate | baseline answer | candidate answer |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of shown)
    out.push(
      `| ${cell(r.id)} | ${cell(r.task_type)} | ${num(r.baseline)} | ${num(r.candidate)} | ${cell(r.baseline_answer)} | ${cell(r.candidate_answer)} |`,
    );
  if (rows.length > shown.length)
    out.push("", `…and ${rows.length - shown.length} more (all of them are in skill_check.json).`);
  return out;
}

function costText(c: SkillCheck): string {
  const cost = c.cost_usd === null ? "cost unknown" : `$${c.cost_usd.toFixed(4)}`;
  return `${c.calls.total} model calls (${c.calls.cached} from the cache), ${cost}`;
}

/** A comment-ready Markdown report: the table, the verdict, the power statement, the flips. */
export function skillCheckMarkdown(c: SkillCheck): string {
  const worse = c.flips.regressed.length;
  const better = c.flips.improved.length;
  const lines = [
    `### SkillOpt check: \`${cell(c.title)}\` — ${VERDICT_WORDS[c.verdict]}`,
    "",
    `| | baseline (${cell(c.baseline_label)}) | candidate | Δ |`,
    "|---|---|---|---|",
    `| hard score | ${num(c.baseline.hard)} | ${num(c.candidate.hard)} | ${pts(c.candidate.hard - c.baseline.hard)} pts |`,
    `| soft score | ${num(c.baseline.soft)} | ${num(c.candidate.soft)} | ${pts(c.candidate.soft - c.baseline.soft)} pts |`,
    `| tasks better / worse | | | +${better} / −${worse} of ${c.n_items} |`,
    "",
    `**Verdict: ${c.verdict}.** ${verdictSentence(c)}${c.failed ? " This fails the check." : ""}`,
    "",
    `**Power:** ${powerSentence(c)}`,
    "",
  ];
  if (worse)
    lines.push(
      `<details${c.verdict === "regressed" ? " open" : ""}><summary>Regressed tasks (${worse})</summary>`,
      "",
      ...flipTable(c.flips.regressed),
      "",
      "</details>",
      "",
    );
  if (better)
    lines.push(
      `<details><summary>Improved tasks (${better})</summary>`,
      "",
      ...flipTable(c.flips.improved),
      "",
      "</details>",
      "",
    );
  lines.push(
    `<sub>${cell(c.benchmark)} · split ${cell(c.split)} · ${cell(c.backend ?? "")} · gate metric ${c.metric} · ${costText(c)}</sub>`,
    "",
  );
  return lines.join("\n");
}

/** The terminal summary of a check. */
export function skillCheckText(c: SkillCheck): string {
  return [
    `Check ${c.title}: ${c.verdict}${c.failed ? " (fails the check)" : ""}`,
    `  baseline (${c.baseline_label}) hard=${num(c.baseline.hard)} soft=${num(c.baseline.soft)} → candidate hard=${num(c.candidate.hard)} \
soft=${num(c.candidate.soft)}`,
    `  ${verdictSentence(c)}`,
    `  tasks better +${c.flips.improved.length}, worse −${c.flips.regressed.length}${
      c.flips.regressed.length
        ? `: ${c.flips.regressed
            .slice(0, 8)
            .map((r) => r.id)
            .join(", ")}${c.flips.regressed.length > 8 ? ", …" : ""}`
        : ""
    }`,
    `  ${powerSentence(c)}`,
    `  ${costText(c)}`,
  ].join("\n");
}
