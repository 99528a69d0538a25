import { type Convention, conventionOfLine, family, type FamilyId } from "./conventions.ts";
import { pickBy } from "./draw.ts";
import { byFamily, type Evidence, majorityHouse, readTrajectory } from "./infer.ts";
import { effectiveRule, packageParts, pointedFiles, quotedSkill, ruleLine, setRule } from "./skill-text.ts";

export interface SimKnobs {
  draw: (label: string) => number;
  /** Probability that a proposed rule is wrong (half) or vague (half). */
  noise: number;
}

/** The rule line the simulated optimizer writes for a family (for one office only, with `scope`). */
function ruleText(fid: FamilyId, statement: string, scope?: string): string {
  if (scope === undefined) return `- **${family(fid).title}:** ${statement}`;
  return `- **${family(fid).title}, ${scope.charAt(0).toUpperCase()}${scope.slice(1)} office only:** ${statement}`;
}

/**
 * The proposal for one family: usually the inferred house rule in one of its phrasings; at the
 * noise rate a conflicting rule of the same family or vague advice the target does not act on.
 */
export function propose(
  k: SimKnobs,
  fid: FamilyId,
  house: Convention,
  label: string,
  noise = k.noise,
  scope?: string,
): { line: string; kind: "right" | "wrong" | "vague" } {
  const f = family(fid);
  const r = k.draw(`${label}/noise`);
  if (r < noise / 2) {
    const others = f.conventions.filter((c) => c.id !== house.id);
    const wrong = pickBy(k.draw(`${label}/wrong`), others);
    return { line: ruleText(fid, pickBy(k.draw(`${label}/phr`), wrong.statements), scope), kind: "wrong" };
  }
  if (r < noise) return { line: ruleText(fid, pickBy(k.draw(`${label}/vague`), f.vague), scope), kind: "vague" };
  return { line: ruleText(fid, pickBy(k.draw(`${label}/phr`), house.statements), scope), kind: "right" };
}

/** Evidence grouped by the office its tasks name (most failures first), with each office's majority convention. */
function byScope(es: readonly Evidence[]): { scope: string | undefined; es: Evidence[]; house?: Convention }[] {
  const groups = new Map<string | undefined, Evidence[]>();
  for (const e of es) groups.set(e.scope, [...(groups.get(e.scope) ?? []), e]);
  return [...groups]
    .map(([scope, g]) => ({ scope, es: g, house: majorityHouse(g) }))
    .sort((a, b) => b.es.length - a.es.length);
}

/**
 * Failures of one family whose tasks name offices: which rules to propose, general or scoped to an
 * office, read from the failures and the skill alone. Per office (most failures first) whose
 * expected answers differ from the rule the skill gives it: an office that already has its own
 * rule gets it replaced; with no general rule, the office's convention becomes the general rule;
 * when the failures of another office expect a different convention (the batch itself shows the
 * offices disagree), the office gets a rule of its own; otherwise the optimizer cannot tell a wrong
 * general rule from an office's exception and guesses (half the time each), the gate judges.
 */
function scopedFixes(
  k: SimKnobs,
  skill: string,
  fid: FamilyId,
  fails: readonly Evidence[],
  label: string,
): { fixes: { scope: string | undefined; house: Convention; count: number }[]; lapses: string[] } {
  const offices = byScope(fails);
  let general = conventionOfLine(effectiveRule(skill, fid)?.line ?? "");
  const fixes: { scope: string | undefined; house: Convention; count: number }[] = [];
  const lapses: string[] = [];
  for (const o of offices) {
    if (!o.house) continue;
    const ownLine = o.scope === undefined ? undefined : ruleLine(skill, fid, o.scope);
    const own = ownLine ? conventionOfLine(ownLine) : undefined;
    if ((own ?? general)?.id === o.house.id) {
      // The rule is right for the office (or was just proposed for it): its failures are lapses.
      const stated = ownLine ?? effectiveRule(skill, fid)?.line;
      if (stated && conventionOfLine(stated)?.id === o.house.id) lapses.push(stated);
      continue;
    }
    const contrast = offices.some((x) => x !== o && x.house && x.house.id !== o.house!.id);
    const scoped =
      o.scope !== undefined &&
      (own !== undefined || (general !== undefined && (contrast || k.draw(`${label}@${o.scope}/scope`) < 0.5)));
    if (!scoped) general = o.house;
    fixes.push({ scope: scoped ? o.scope : undefined, house: o.house, count: o.es.length });
  }
  return { fixes, lapses };
}

/**
 * In a skill package: a file nothing points to that already states the house rule for the family
 * (the agent never reads it), so the fix is a pointer in SKILL.md rather than a second copy.
 */
function unreadFileWith(skill: string, fid: FamilyId, house: Convention): string | undefined {
  const read = pointedFiles(skill);
  return packageParts(skill).files.find(
    (f) =>
      !f.fixed &&
      !read.some((r) => r.path === f.path) &&
      f.text.split("\n").some((l) => conventionOfLine(l)?.id === house.id && conventionOfLine(l)?.family === fid),
  )?.path;
}

function editFor(
  k: SimKnobs,
  skill: string,
  fid: FamilyId,
  line: string,
  label: string,
  house?: Convention,
  scope?: string,
): Record<string, unknown> {
  if (scope !== undefined) {
    const own = ruleLine(skill, fid, scope);
    if (own) return { op: "replace", target: own, content: line };
    return /^##\s+Conventions\s*$/im.test(skill)
      ? { op: "insert_after", target: "## Conventions", content: line }
      : { op: "append", content: line };
  }
  // A package: the rule the agent follows may sit in a file SKILL.md points to; fix it there.
  const eff = effectiveRule(skill, fid);
  if (eff?.file) return { op: "replace", file: eff.file, target: eff.line, content: line };
  const unread = house && !eff ? unreadFileWith(skill, fid, house) : undefined;
  if (unread) {
    const pointer = `- For the house formats of dates, numbers and the rest, read ${unread}.`;
    return /^##\s+Conventions\s*$/im.test(skill)
      ? { op: "insert_after", target: "## Conventions", content: pointer }
      : { op: "append", content: pointer };
  }
  const existing = ruleLine(skill, fid);
  if (existing) return { op: "replace", target: existing, content: line };
  if (k.draw(`${label}/stale`) < 0.12) return { op: "insert_after", target: "## Formatting rules", content: line };
  if (/^##\s+Conventions\s*$/im.test(skill)) return { op: "insert_after", target: "## Conventions", content: line };
  return { op: "append", content: line };
}

interface AnalystInput {
  side: "failure" | "success";
  update_mode: string;
  budget: number | null;
  skill_aware: boolean;
  has_meta_skill: boolean;
  trajectories: unknown[];
}

/** The simulated analyst: infers conventions from expected answers and proposes edits (spec §2.3). */
export function simAnalyst(k: SimKnobs, user: string, data: AnalystInput, reqKey: string): Record<string, unknown> {
  const skill = quotedSkill(user);
  const ev = data.trajectories.map(readTrajectory).filter((e): e is Evidence => e !== undefined);
  const L = data.budget ?? 99;
  const noise = data.has_meta_skill ? k.noise * 0.6 : k.noise;
  const groups = [...byFamily(ev)].map(([fid, es]) => ({ fid, es, house: majorityHouse(es) }));
  const proposals: { fid: FamilyId; line: string; count: number; house: Convention; scope?: string }[] = [];
  const notes: string[] = [];
  const summary: Record<string, unknown>[] = [];
  for (const g of groups) {
    if (!g.house) continue;
    const stated = effectiveRule(skill, g.fid)?.line;
    const statedConv = stated ? conventionOfLine(stated) : undefined;
    if (data.side === "failure" && g.es.some((e) => e.scope !== undefined)) {
      // The tasks name offices: a rule may be general or for one office (scopedFixes).
      const fails = g.es.filter((e) => !e.passed);
      if (!fails.length) continue;
      const { fixes, lapses } = scopedFixes(k, skill, g.fid, fails, `${reqKey}/${g.fid}`);
      for (const line of lapses)
        notes.push(
          `Apply the stated ${family(g.fid).title.toLowerCase()} rule every time: ${line.replace(/^[-*\s]+/, "")}`,
        );
      for (const f of fixes) {
        summary.push({
          failure_type: `${g.fid} convention${f.scope ? ` (${f.scope} office)` : ""}`,
          count: f.count,
          description: `answers used the wrong ${g.fid} convention; the expected answers${f.scope ? ` of the ${f.scope} office` : ""} follow ${f.house.id}`,
        });
        const label = f.scope === undefined ? `${reqKey}/${g.fid}` : `${reqKey}/${g.fid}@${f.scope}`;
        proposals.push({
          fid: g.fid,
          count: f.count,
          house: f.house,
          ...(f.scope === undefined ? {} : { scope: f.scope }),
          ...propose(k, g.fid, f.house, label, noise, f.scope),
        });
      }
    } else if (data.side === "failure") {
      const fails = g.es.filter((e) => !e.passed);
      if (!fails.length) continue;
      if (statedConv?.id === g.house.id) {
        notes.push(
          `Apply the stated ${family(g.fid).title.toLowerCase()} rule every time: ${stated!.replace(/^[-*\s]+/, "")}`,
        );
        summary.push({
          failure_type: `${g.fid}: execution lapse`,
          count: fails.length,
          description: `the skill states the right ${g.fid} rule but it was not followed`,
        });
        continue;
      }
      summary.push({
        failure_type: `${g.fid} convention`,
        count: fails.length,
        description: `answers used the wrong ${g.fid} convention; the expected answers follow ${g.house.id}`,
      });
      proposals.push({
        fid: g.fid,
        count: fails.length,
        house: g.house,
        ...propose(k, g.fid, g.house, `${reqKey}/${g.fid}`, noise),
      });
    } else if (!stated && g.es.some((e) => e.passed)) {
      // A success that relied on a default: state the convention explicitly.
      proposals.push({
        fid: g.fid,
        count: g.es.length,
        house: g.house,
        ...propose(k, g.fid, g.house, `${reqKey}/${g.fid}/succ`, noise),
      });
    } else if (statedConv?.id === g.house.id && k.draw(`${reqKey}/${g.fid}/rephrase`) < 0.5) {
      // Over-editing, as real optimizers do: "clarify" a rule that already works. At the noise
      // rate the rewording is wrong or vague and breaks the rule; the gate has to catch it.
      const p = propose(k, g.fid, g.house, `${reqKey}/${g.fid}/rephrase`, noise);
      if (p.line.trim() !== stated!.trim()) proposals.push({ fid: g.fid, count: 1, house: g.house, ...p });
    }
  }
  proposals.sort((a, b) => b.count - a.count);
  const chosen = proposals.slice(0, data.side === "success" ? Math.min(L, 2) : L);
  const edits = chosen.map((p) =>
    p.scope === undefined
      ? editFor(k, skill, p.fid, p.line, `${reqKey}/${p.fid}`, p.house)
      : editFor(k, skill, p.fid, p.line, `${reqKey}/${p.fid}@${p.scope}`, p.house, p.scope),
  );
  const reasoning = chosen.length
    ? `Stated ${chosen.length} house convention(s) the trajectories point to.`
    : "No convention to add from these trajectories.";
  let patch: Record<string, unknown>;
  if (data.update_mode === "rewrite_from_suggestions") {
    patch = {
      reasoning,
      revise_suggestions: chosen.map((p) => ({
        type: ruleLine(skill, p.fid, p.scope) ? "clarify" : "add_rule",
        title: `${family(p.fid).title} convention`,
        motivation: `${p.count} trajectories`,
        instruction: p.line,
        priority_hint: data.side === "failure" ? "high" : "medium",
      })),
    };
  } else if (data.update_mode === "full_rewrite_minibatch") {
    const next = chosen.reduce((s, p) => setRule(s, p.fid, p.line), skill);
    patch = {
      reasoning,
      skill_candidates: chosen.length
        ? [{ title: "State the house conventions", change_summary: chosen.map((p) => p.line), new_skill: next }]
        : [],
    };
  } else patch = { reasoning, edits };
  return {
    batch_size: ev.length,
    ...(data.side === "failure" ? { failure_summary: summary } : { success_patterns: chosen.map((p) => p.line) }),
    patch,
    ...(data.skill_aware ? { appendix_notes: notes } : {}),
  };
}
