import type { TaskRecord } from "../types.ts";

const STOP = new Set(
  (
    "about above after again agent agents all also always and any are because been before being below between both but can could does doing done " +
    "each few file files for from further had has have having her here hers how into its itself just more most must need never not now off once " +
    "only other our out over own project same should skill skills some such task tasks than that the their them then there these they this those " +
    "through too under until update use used using very was were what when where which while who why will with workflow would you your"
  ).split(" "),
);

/** Tokens of a text (spec §4.6): words, their sub-parts, ≥ 3 chars, not all digits, not stopwords. */
function targetTokens(text: string): string[] {
  const out: string[] = [];
  for (const w of text.toLowerCase().match(/[\p{L}\p{N}_][\p{L}\p{N}_.-]*/gu) ?? []) {
    for (const part of new Set([w, ...w.split(/[^\p{L}\p{N}]+|_/u)])) {
      if (part.length >= 3 && !/^\d+$/.test(part) && !STOP.has(part)) out.push(part);
    }
  }
  return out;
}

const EXPANSIONS: Record<string, string[]> = {
  mcp: ["configure", "connect", "enable", "install", "server", "servers"],
  conflict: ["cherry", "git", "merge", "rebase", "unmerged"],
  conflicts: ["cherry", "git", "merge", "rebase", "unmerged"],
};

/**
 * Prefer tasks about the target skill (spec §4.6): a task with ≥ 1 strong hit (path tokens and
 * headings) or ≥ 2 weak hits (the 180 most frequent skill tokens) is kept, best first; when nothing
 * matches the list is returned unchanged.
 */
export function filterTasksForTarget(tasks: readonly TaskRecord[], skillText: string, skillPath: string): TaskRecord[] {
  // Only the skill's own name (its folder and file) counts: tokens of the rest of an absolute
  // path (/home/alice/test-projects/…) would match unrelated tasks. Upstream uses the whole path.
  const ownName = skillPath.split(/[\\/]/).filter(Boolean).slice(-2).join(" ");
  const strong = new Set([
    ...targetTokens(ownName),
    ...targetTokens((skillText.match(/^#{1,6}\s+.*$/gm) ?? []).join(" ")),
  ]);
  const freq = new Map<string, number>();
  for (const t of targetTokens(skillText)) freq.set(t, (freq.get(t) ?? 0) + 1);
  const weak = new Set([
    ...strong,
    ...[...freq.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 180)
      .map(([t]) => t),
  ]);
  for (const set of [strong, weak]) for (const k of [...set]) for (const e of EXPANSIONS[k] ?? []) set.add(e);
  const scored = tasks.map((t, i) => {
    const toks = new Set(targetTokens(`${t.intent} ${t.context_excerpt} ${t.tags.join(" ")}`));
    let s = 0;
    let w = 0;
    for (const tok of toks) {
      if (strong.has(tok)) s++;
      if (weak.has(tok)) w++;
    }
    return { t, i, keep: s >= 1 || w >= 2, score: 3 * s + w };
  });
  const kept = scored.filter((x) => x.keep);
  if (kept.length === 0) return [...tasks];
  return kept.sort((a, b) => b.score - a.score || a.i - b.i).map((x) => x.t);
}
