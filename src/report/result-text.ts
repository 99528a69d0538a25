import { join } from "node:path";
import type { Summary } from "../engine/index.ts";
import { RUN_FILES } from "../run/index.ts";

const pct = (x: number | null) => (x === null ? "—" : x.toFixed(3));

/** The human result of a training run: the three scores, counts, calls and cost. */
export function resultText(s: Summary): string {
  // A run whose best skill is still the initial one learned nothing: it says so, never a plain "finished".
  const unchanged = s.best.hash === s.baseline.hash;
  const head =
    s.status === "finished"
      ? unchanged
        ? "Training finished without improvement"
        : "Training finished"
      : `Training stopped (${s.stopped_reason})`;
  const lines = [
    `${head}${s.backend ? ` — ${s.backend}` : ""}`,
    `  selection: baseline ${pct(s.baseline.selection)} → best ${pct(s.best.selection)} (step ${s.best.step}) · final ${pct(s.final.selection)}`,
    `  test:      baseline ${pct(s.baseline.test)} → best ${pct(s.best.test)} · final ${pct(s.final.test)}`,
    `  steps ${s.steps}/${s.total_steps}: accepted ${s.accepted}, rejected ${s.rejected} (early ${s.rejected_early}), \
undecided ${s.undecided ?? 0}, skipped ${s.skipped}`,
    ...(unchanged
      ? [
          "  nothing learned: no candidate beat the initial skill on selection, so best_skill.md is the initial skill \
(each step's verdict is in history.jsonl and the report; docs/gate.md says what the gate needs)",
        ]
      : []),
    `  calls ${s.calls.total} (cached ${s.calls.cached}), selection rollouts saved by early rejection ${s.selection_calls_saved}, cost \
${s.cost_usd === null ? "unknown" : `$${s.cost_usd.toFixed(4)}`}, wall ${s.wall_s}s`,
    ...(s.skill_tokens
      ? [
          `  deployed skill: ${s.skill_tokens.best.toLocaleString("en-US")} tokens (baseline ${s.skill_tokens.baseline.toLocaleString("en-US")}, \
final ${s.skill_tokens.final.toLocaleString("en-US")})`,
        ]
      : []),
    ...taskCostLine(s.search),
    ...(s.search?.pool ? [poolLine(s.search)] : []),
    `  best skill: ${join(String(s.out), RUN_FILES.bestSkill)}`,
  ];
  return lines.join("\n");
}

/** What a task cost with the best skill, as measured on selection from the target's usage (none when it reported none). */
function taskCostLine(search: Summary["search"]): string[] {
  const c = search?.cost_basis === "task" ? search.frontier.find((p) => p.chosen) : undefined;
  if (c?.task_tokens === undefined) return [];
  const x = c.task_cost_usd;
  const cost = x === null || x === undefined ? "price unknown" : x === 0 ? "$0" : `$${x.toPrecision(2)}`;
  return [
    `  deployed per task: ${c.task_tokens.toLocaleString("en-US")} tokens, ${cost} (selection, the target's own usage)`,
  ];
}

/** The pool's closing line: members, how many are on the per-item frontier, merges, the objective. */
function poolLine(search: NonNullable<Summary["search"]>): string {
  const pool = search.pool ?? [];
  const members = pool.filter((p) => p.status === "member").length;
  const frontier = pool.filter((p) => p.items_best > 0).length;
  const merges = `${search.merges?.accepted ?? 0}/${search.merges?.tried ?? 0}`;
  const shortened = search.shortened ? `, shortened ${search.shortened.accepted}/${search.shortened.tried}` : "";
  return `  pool: ${members} members, ${frontier} on the per-item frontier, merges ${merges} accepted${shortened}; best on ${search.objective}`;
}
