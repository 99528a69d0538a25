import { existsSync, readFileSync } from "node:fs";
import { isCredentialShaped, maskCredentials, maskCredentialsDeep, writeFileAtomic } from "../lib/index.ts";
import { getRules, setLearned } from "./learned-block.ts";
import type { LessonCard } from "./lessons.ts";
import type { Proposal, SkillProposal } from "./stage.ts";

/**
 * The last scan before a night is staged (issue 29 §5): nothing credential-shaped reaches a staged
 * file, the report or the evidence log, and the night's notes say what was refused.
 */

/** Lines a proposal adds to its live file (what the night would write that the user did not). */
function addedLines(text: string, live: string): string[] {
  const have = new Set(live.split("\n"));
  return text.split("\n").filter((l) => !have.has(l));
}

/**
 * Refuse credential-shaped text in tonight's proposals: a rule holding one leaves the learned
 * block (and its card goes), and a proposal that would still add one is not staged at all.
 * Mutates `proposals`, `skills` and `cards`; returns the notes.
 */
export function guardProposals(proposals: Proposal[], skills: SkillProposal[], cards: LessonCard[]): string[] {
  const notes: string[] = [];
  const badRules = new Set<string>();
  for (let i = cards.length - 1; i >= 0; i--) {
    const c = cards[i]!;
    if (c.op !== "retire" && isCredentialShaped(c.rule)) {
      badRules.add(c.rule.replace(/\s+/g, " ").trim());
      cards.splice(i, 1);
    }
  }
  if (badRules.size)
    notes.push(`secret-guard: ${badRules.size} lesson(s) holding something credential-shaped were not staged`);
  for (let i = proposals.length - 1; i >= 0; i--) {
    const p = proposals[i]!;
    let text = p.text;
    const rules = getRules(text);
    const kept = rules.filter((r) => !badRules.has(r) && !isCredentialShaped(r));
    if (kept.length !== rules.length) text = setLearned(text, kept);
    if (addedLines(text, p.baseline.text).some(isCredentialShaped) || text === p.baseline.text) {
      if (text !== p.baseline.text)
        notes.push(`secret-guard: refused to stage ${p.baseline.path}: the proposal adds something credential-shaped`);
      proposals.splice(i, 1);
      continue;
    }
    p.text = text;
  }
  for (let i = skills.length - 1; i >= 0; i--) {
    const s = skills[i]!;
    if (addedLines(s.text, s.baseline.text).some(isCredentialShaped)) {
      notes.push(`secret-guard: refused to stage the skill ${s.name}: the proposal adds something credential-shaped`);
      skills.splice(i, 1);
    }
  }
  return notes;
}

/** The report with every credential-shaped string masked, and whether anything was. */
export function guardReport<T>(report: T): { report: T; masked: boolean } {
  const before = JSON.stringify(report);
  const out = maskCredentialsDeep(report);
  return { report: out, masked: JSON.stringify(out) !== before };
}

/** Mask credential-shaped text left in a written evidence log; returns how many lines changed. */
export function guardEvidenceFile(path: string): number {
  if (!path || !existsSync(path)) return 0;
  const lines = readFileSync(path, "utf8").split("\n");
  let changed = 0;
  const out = lines.map((l) => {
    if (!l || !isCredentialShaped(l)) return l;
    const m = maskCredentials(l);
    if (m !== l) changed++;
    return m;
  });
  if (changed) writeFileAtomic(path, out.join("\n"));
  return changed;
}
