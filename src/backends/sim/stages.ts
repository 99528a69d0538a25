import { type Convention, conventionOfLine, family, type FamilyId, scopeOfLine } from "./conventions.ts";
import { propose, type SimKnobs } from "./analyst.ts";
import { type Evidence, readTrajectory } from "./infer.ts";
import { familyOfLine, quotedSkill, setRule } from "./skill-text.ts";

type Item = Record<string, unknown>;

function itemText(it: Item): string {
  return String(it.content ?? it.instruction ?? "");
}

function keyOf(mode: string): string {
  return mode === "rewrite_from_suggestions"
    ? "revise_suggestions"
    : mode === "full_rewrite_minibatch"
      ? "skill_candidates"
      : "edits";
}

function itemsOf(p: unknown, key: string): Item[] {
  const o = (p ?? {}) as Record<string, unknown>;
  return Array.isArray(o[key]) ? (o[key] as Item[]) : [];
}

/**
 * Merge items: one per family, the convention with the most support wins (ties: first seen);
 * a specific rule beats vague advice; in the final merge failure items beat success items.
 */
function mergeItems(items: Item[]): Item[] {
  const byFam = new Map<string, { best: Item; support: number; votes: Map<string, { item: Item; n: number }> }>();
  const order: string[] = [];
  for (const it of items) {
    const text = itemText(it);
    // One group per family, and per office for rules scoped to one (a scoped rule is not the family's general rule).
    const fam = familyOfLine(text);
    const scope = fam ? scopeOfLine(text) : undefined;
    const fid = fam ? (scope === undefined ? fam : `${fam}@${scope}`) : `other:${text}`;
    const conv = conventionOfLine(text)?.id ?? "vague";
    if (!byFam.has(fid)) {
      byFam.set(fid, { best: it, support: 0, votes: new Map() });
      order.push(fid);
    }
    const g = byFam.get(fid)!;
    const n = Number(it.support_count ?? 1) || 1;
    g.support += n;
    const v = g.votes.get(conv) ?? { item: it, n: 0 };
    v.n += n + (conv === "vague" ? 0 : 1000) + (it.source_type === "success" ? 0 : 100000);
    g.votes.set(conv, v);
  }
  return order
    .map((fid) => {
      const g = byFam.get(fid)!;
      const win = [...g.votes.values()].sort((a, b) => b.n - a.n)[0]!;
      return { ...win.item, support_count: g.support };
    })
    .sort((a, b) => Number(b.support_count) - Number(a.support_count));
}

function mergeCandidates(cands: Item[]): Item[] {
  if (!cands.length) return [];
  const score = (c: Item) =>
    String(c.new_skill ?? "")
      .split("\n")
      .filter((l) => conventionOfLine(l)).length;
  const best = [...cands].sort((a, b) => score(b) - score(a))[0]!;
  return [
    {
      ...best,
      support_count: cands.reduce((s, c) => s + (Number(c.support_count ?? 1) || 1), 0),
      source_type: best.source_type ?? "mixed",
    },
  ];
}

export function simMerge(data: Record<string, unknown>): Record<string, unknown> {
  const mode = String(data.update_mode ?? "patch");
  const key = keyOf(mode);
  const patches = (
    Array.isArray(data.patches) ? data.patches : Array.isArray(data.groups) ? data.groups : []
  ) as unknown[];
  const items = patches.flatMap((p) => itemsOf(p, key));
  const merged = mode === "full_rewrite_minibatch" ? mergeCandidates(items) : mergeItems(items);
  return { reasoning: `Merged ${items.length} items into ${merged.length}, one per convention family.`, [key]: merged };
}

export function simRanking(data: Record<string, unknown>): Record<string, unknown> {
  const items = (Array.isArray(data.items) ? data.items : []) as Item[];
  const budget = Number(data.budget ?? items.length);
  const rank = items
    .map((it, i) => ({
      i,
      s:
        (Number(it.support_count ?? 1) || 1) +
        (conventionOfLine(itemText(it)) ? 50 : 0) +
        // A pointer to a file of the package that already holds the rules reaches several at once.
        (/\bread \S+\.(md|txt)\b/.test(itemText(it)) ? 60 : 0) +
        (it.source_type === "success" ? 0 : 20),
    }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .slice(0, budget)
    .map((x) => x.i);
  return { reasoning: "Specific, well-supported failure fixes first.", selected_indices: rank };
}

export function simRewrite(user: string, data: Record<string, unknown>): Record<string, unknown> {
  const skill = quotedSkill(user);
  const sugg = (Array.isArray(data.suggestions) ? data.suggestions : []) as Item[];
  let next = skill;
  const changes: string[] = [];
  for (const s of sugg) {
    const line = String(s.instruction ?? "").trim();
    if (!line) continue;
    next = setRule(next, familyOfLine(line), line.startsWith("-") ? line : `- ${line}`);
    changes.push(String(s.title ?? line));
  }
  return { reasoning: "Integrated the selected suggestions.", change_summary: changes, new_skill: next };
}

export function simLr(data: Record<string, unknown>): Record<string, unknown> {
  const items = (Array.isArray(data.items) ? data.items : []) as Item[];
  const specific = items.filter((it) => conventionOfLine(itemText(it)) || it.new_skill).length;
  return {
    learning_rate: Math.max(1, specific),
    reasoning: `${specific} of ${items.length} items state a concrete rule.`,
    confidence: "medium",
    risk_notes: [],
  };
}

interface PairSide {
  hard: number;
}

/**
 * Slow update: restate the rules behind regressions and persistent failures (spec §2.11). When the
 * tasks name offices and the comparison shows another office of the same family expecting a
 * different convention (in any pair, passing or not), the rule is restated for the failing office
 * only; otherwise as the family's rule.
 */
export function simSlowUpdate(k: SimKnobs, data: Record<string, unknown>, reqKey: string): Record<string, unknown> {
  const pairs = (Array.isArray(data.pairs) ? data.pairs : []) as Record<string, unknown>[];
  const lines = new Map<string, string>();
  for (const l of String(data.existing_guidance ?? "").split("\n")) {
    const fid = familyOfLine(l);
    const scope = scopeOfLine(l);
    if (fid && conventionOfLine(l)) lines.set(scope === undefined ? fid : `${fid}@${scope}`, l);
  }
  const seen = pairs.map((p) => readTrajectory(p.curr_trajectory)).filter((e): e is Evidence => e !== undefined);
  const differs = (e: Evidence, house: Convention) =>
    seen.some((x) => x.family === e.family && x.scope !== e.scope && x.house && x.house.id !== house.id);
  let added = 0;
  for (const p of pairs) {
    if (p.category !== "regressed" && p.category !== "persistent_fail") continue;
    if ((p.curr as PairSide | undefined)?.hard) continue;
    const e = readTrajectory(p.curr_trajectory);
    if (!e?.house) continue;
    if (e.scope !== undefined && differs(e, e.house)) {
      const key = `${e.family}@${e.scope}`;
      lines.set(key, propose(k, e.family, e.house, `${reqKey}/${key}`, k.noise / 2, e.scope).line);
    } else lines.set(e.family, propose(k, e.family, e.house, `${reqKey}/${e.family}`, k.noise / 2).line);
    added++;
  }
  if (!lines.size) return { reasoning: "No regressions or persistent failures to address.", slow_update_content: "" };
  const body = ["Guidance from the longitudinal comparison (these rules take precedence):", ...lines.values()].join(
    "\n",
  );
  return {
    reasoning: `Restated ${added} rule(s) behind regressions and persistent failures.`,
    slow_update_content: body,
  };
}

export function simMetaSkill(data: Record<string, unknown>): Record<string, unknown> {
  const c = (data.counts ?? {}) as Record<string, number>;
  const pairs = (Array.isArray(data.pairs) ? data.pairs : []) as Record<string, unknown>[];
  const failing = [
    ...new Set(
      pairs
        .filter((p) => !(p.curr as PairSide | undefined)?.hard)
        .map((p) => readTrajectory(p.curr_trajectory)?.family)
        .filter(Boolean),
    ),
  ] as FamilyId[];
  const content = [
    "- Edits that state a convention with its exact pattern (for example YYYY-MM-DD) change the agent's answers; vague advice does not.",
    "- Prefer replacing a wrong rule over adding a second rule for the same family: the later rule wins.",
    `- Last epoch: improved=${c.improved ?? 0} regressed=${c.regressed ?? 0} persistent_fail=${c.persistent_fail ?? 0}.`,
    ...(failing.length ? [`- Still failing: ${failing.map((f) => family(f).title).join(", ")}.`] : []),
  ].join("\n");
  return { reasoning: "Summarised which edits moved the score.", meta_skill_content: content };
}

export function simAppendix(data: Record<string, unknown>): Record<string, unknown> {
  const notes = (Array.isArray(data.notes) ? data.notes : []).map(String);
  const seen = new Map<string, string>();
  for (const n of notes) seen.set(familyOfLine(n) ?? n.toLowerCase(), n);
  if (seen.size <= 2) return { appendix_notes: [...seen.values()] };
  const families = [...seen.keys()]
    .filter((k) => !k.includes(" "))
    .map((f) => family(f as FamilyId).title.toLowerCase());
  return {
    appendix_notes: [
      `Apply every stated house rule exactly, on every answer${families.length ? ` (${families.join(", ")})` : ""}.`,
    ],
  };
}

/**
 * A kept rule said in fewer words: its statement replaced by the shortest sentence the target reads
 * as the same rule (a model dropping idle words: "Identifiers are lowercase words joined by hyphens
 * (kebab-case)." becomes "Name identifiers in kebab-case."). The line's label and scope stay.
 */
function terse(line: string): string {
  const cv = conventionOfLine(line);
  const at = line.indexOf(":** ");
  if (!cv || at < 0) return line;
  const head = line.slice(0, at + 4);
  const shortest = [...cv.statements].sort((a, b) => a.length - b.length)[0]!;
  const next = `${head}${shortest}`;
  return next.length < line.length && conventionOfLine(next)?.id === cv.id && scopeOfLine(next) === scopeOfLine(line)
    ? next
    : line;
}

/**
 * The shorten request (prompts/shorten.md): per family (and office), the line the target follows
 * is kept — the last one it reads — and every earlier restatement goes, with the vague lines that
 * state no rule; each kept rule is said in the fewest words the target reads as the same rule (terse);
 * everything else stays. The target reads the result as it read the skill. With
 * probability noise/3 it also cuts one rule the target followed (an over-eager shortening, which
 * the pool's comparison must catch).
 */
export function simShorten(k: SimKnobs, user: string, reqKey: string): Record<string, unknown> {
  const lines = quotedSkill(user).split("\n");
  const last = new Map<string, number>();
  lines.forEach((l, i) => {
    const cv = conventionOfLine(l);
    if (cv) last.set(`${cv.family}@${scopeOfLine(l) ?? ""}`, i);
  });
  const cut = new Set<number>();
  lines.forEach((l, i) => {
    const cv = conventionOfLine(l);
    if (cv ? last.get(`${cv.family}@${scopeOfLine(l) ?? ""}`) !== i : familyOfLine(l) !== undefined) cut.add(i);
  });
  const kept = [...last.values()];
  if (kept.length > 1 && k.draw(`shorten/${reqKey}`) < k.noise / 3)
    cut.add(kept[Math.floor(k.draw(`shorten-which/${reqKey}`) * kept.length)]!);
  const skill = lines
    .map((l, i) => (kept.includes(i) ? terse(l) : l))
    .filter((_, i) => !cut.has(i))
    .join("\n")
    .replace(/\n{3,}/g, "\n\n");
  return { reasoning: `Removed ${cut.size} line(s) that restate or state no rule.`, skill };
}
