import { esc } from "../report/index.ts";
import type { EditRecord, GateTrial, LessonCard, SleepReport } from "../sleep/index.ts";

/** What the evidence says about one staged edit, in the four words the dashboard uses. */
interface EditVerdict {
  verdict: "accept" | "reject" | "undecided" | "unverified";
  detail: string;
}

const pts = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)}`;
const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();
const sameEdit = (a: EditRecord, b: EditRecord) =>
  a.target === b.target && a.op === b.op && norm(a.content) === norm(b.content);

/** The gate trial that evaluated an edit (the last one naming it). */
function trialOf(e: EditRecord, r: SleepReport): GateTrial | undefined {
  return [...(r.gate_trials ?? [])].reverse().find((t) => t.edits?.some((x) => sameEdit(x, e)));
}

/**
 * The verdict of one consolidation edit, as the night's records state it: unverified when no gate
 * ran on it or the held-out tasks overlap its source tasks; otherwise the gate's own verdict with
 * its rule, Δ, bounds and n, and under the strict rule what the paired test said on the same tasks.
 */
export function editVerdict(e: EditRecord, r: SleepReport): EditVerdict {
  if (r.holdout_leaked)
    return { verdict: "unverified", detail: "the held-out tasks overlap the tasks this edit came from" };
  const t = trialOf(e, r);
  if (!t)
    return {
      verdict: "unverified",
      detail: r.gate_trials?.length
        ? "no gate trial recorded for this edit"
        : `no gate ran (${r.gate_action || "none"})`,
    };
  if (t.blocked_by_regression) return { verdict: "reject", detail: "vetoed: a held-out task regressed" };
  const g = t.gate;
  if (!g)
    return {
      verdict: t.accepted ? "accept" : "reject",
      detail: `held-out score ${t.baseline_score.toFixed(3)} → ${t.candidate_score.toFixed(3)}`,
    };
  return measured(g, `${g.rule} rule, `, `${g.n_used}/${g.n_total}`);
}

/** The verdict of an evidence card. */
export function cardVerdict(c: LessonCard): EditVerdict {
  if (c.verification === "unverified") return { verdict: "unverified", detail: "no replay was run" };
  const v = c.verification;
  return measured(v, v.rule ? `${v.rule} rule, ` : "replay, ", String(v.n));
}

/** A measured verdict: Δ, its bounds and n, and the paired test's verdict on the same tasks where it differs. */
function measured(
  v: { verdict: EditVerdict["verdict"]; delta: number; ci: readonly number[]; paired_verdict?: string },
  lead: string,
  n: string,
): EditVerdict {
  const paired =
    v.paired_verdict && v.paired_verdict !== v.verdict
      ? `; the paired test on the same tasks: ${v.paired_verdict}`
      : "";
  return {
    verdict: v.verdict,
    detail: `${lead}Δ ${pts(v.delta)} pts [${pts(v.ci[0]!)}, ${pts(v.ci[1]!)}], n=${n}${paired}`,
  };
}

const BADGE: Record<EditVerdict["verdict"], string> = {
  accept: "b-accepted",
  reject: "b-rejected",
  undecided: "b-undecided",
  unverified: "b-skipped",
};

/** A verdict as a badge with its detail beside it. */
function verdictHtml(v: EditVerdict): string {
  return `<span class="badge verdict ${BADGE[v.verdict]}" data-verdict="${v.verdict}">${v.verdict}</span> <span class="muted">${esc(v.detail)}</span>`;
}

/** The edits of a night with each one's verdict. */
export function editsTable(title: string, edits: readonly EditRecord[] | undefined, r: SleepReport): string {
  if (!edits || edits.length === 0) return "";
  const rows = edits
    .map(
      (e) =>
        `<tr><td>${esc(e.target)}</td><td>${esc(e.op)}</td><td>${esc(e.anchor)}</td><td><div class="edit-text">${esc(e.content)}</div></td>\
<td>${esc(e.rationale)}</td><td class="edit-verdict">${verdictHtml(editVerdict(e, r))}</td></tr>`,
    )
    .join("");
  return `<h3>${esc(title)}</h3><table \
class="edits"><thead><tr><th>file</th><th>op</th><th>anchor</th><th>text</th><th>rationale</th><th>verdict</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** Every evidence card of a night (gated edits first, then memory lessons). */
export function nightCards(r: SleepReport): LessonCard[] {
  return [...(r.edit_evidence ?? []), ...(r.lessons ?? [])];
}

/** The cards that concern one of `paths`. */
export function cardsFor(cards: readonly LessonCard[], paths: readonly string[]): LessonCard[] {
  return cards.filter((c) => [c.target, ...(c.targets ?? [])].some((t) => paths.includes(t)));
}

/** Evidence cards as HTML: operation, rule, targets, verdict, recurrence, sources, cost. */
export function cardsHtml(cards: readonly LessonCard[]): string {
  return cards
    .map((c) => {
      const targets = c.targets && c.targets.length > 1 ? c.targets : [c.target];
      const sources = c.sources
        .map(
          (s) =>
            `<li>${esc(s.date.slice(0, 10) || "unknown date")} · ${esc(s.source || "?")} · <code>${esc(s.session_id)}</code>: “${esc(s.quote)}”</li>`,
        )
        .join("");
      const regressions =
        c.verification !== "unverified" && c.verification.regressions.length
          ? esc(c.verification.regressions.join(", "))
          : "none measured";
      return `<div class="evidence-card" data-card="${esc(c.id)}"><h4>[${esc(c.op)}] ${esc(c.rule)}</h4>\
<ul>${
        c.previous_rule && c.op !== "add"
          ? `<li>${c.op === "retire" ? "removes" : "replaces"}: \
${esc(c.previous_rule)}</li>`
          : ""
      }<li>${targets.length > 1 ? "targets" : "target"}: ${targets.map((t) => `<code>${esc(t)}</code>`).join(", ")}</li><li \
class="card-verdict">verification: ${verdictHtml(cardVerdict(c))}</li><li>per-task regressions: ${regressions}</li>${
        c.op !== "retire"
          ? `<li>recurred \
${c.recurrences} time(s) in ${c.n_sessions} session(s)${
              c.first_seen
                ? `, ${esc(c.first_seen.slice(0, 10))} – \
${esc(c.last_seen.slice(0, 10))}`
                : ""
            }</li>`
          : ""
      }${c.note ? `<li>note: ${esc(c.note)}</li>` : ""}<li>night cost: ${c.cost.tokens} tokens, \
$${c.cost.cost_usd.toFixed(4)}</li></ul>${
        sources
          ? `<details><summary>${c.sources.length} source session(s)</summary><ul class="sources">${sources}</ul>\
</details>`
          : ""
      }</div>`;
    })
    .join("");
}
