import { applyRuleEdits } from "../engine/index.ts";
import type { EditRecord } from "./types.ts";

/** Exact marker lines of the protected learned block (spec §6.1; kept for compatibility). */
export const LEARNED_START = "<!-- SKILLOPT-SLEEP:LEARNED START -->";
export const LEARNED_END = "<!-- SKILLOPT-SLEEP:LEARNED END -->";
const HEADING = "## Learned preferences & procedures";
// spec §6.1 has the banner say the rules were validated; a lesson learned with no model is not,
// so the banner says what holds for every rule (the evidence card says which were replay-checked).
const BANNER =
  "_Maintained by SkillOpt-Sleep: these rules were proposed offline from your past sessions, each with its evidence (replay-checked on held-out " +
  "tasks when a model was available, otherwise marked unverified), and added only after you adopted them. Text outside this block is never changed._";

/** The rules (bullets) of the first learned block, in order. */
export function getRules(doc: string): string[] {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trim() === LEARNED_START);
  if (start < 0) return [];
  const rules: string[] = [];
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.trim() === LEARNED_END) break;
    if (l.startsWith("- ")) rules.push(l.slice(2).trim());
  }
  return rules;
}

/**
 * Render `doc` with its learned block replaced by `rules`. Unlike upstream (§12.1 #14) the block
 * stays where it was when one exists, and a rule's leading dashes are kept (only the bullet is added).
 */
export function setLearned(doc: string, rules: readonly string[]): string {
  const block = renderBlock(rules);
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trim() === LEARNED_START);
  if (start >= 0) {
    let end = lines.findIndex((l, i) => i > start && l.trim() === LEARNED_END);
    if (end < 0) end = lines.length - 1;
    const before = lines.slice(0, start).join("\n");
    const after = lines.slice(end + 1).join("\n");
    if (rules.length === 0) return joinParts(before, after);
    return joinParts(before, block, after);
  }
  if (rules.length === 0) return doc;
  return joinParts(doc, block);
}

function joinParts(...parts: string[]): string {
  const body = parts
    .map((p) => p.replace(/\s+$/, ""))
    .filter((p) => p !== "")
    .join("\n\n");
  return body === "" ? "" : `${body}\n`;
}

function renderBlock(rules: readonly string[]): string {
  const bullets = rules.map((r) => `- ${r.replace(/\s+/g, " ").trim()}`);
  return [LEARNED_START, HEADING, "", BANNER, "", ...bullets, LEARNED_END].join("\n");
}

/** Apply edits to the learned block (spec §6.1) with the engine's edit applier on its rules: the new document, applied and unmatched edits. */
export function applyEdits(
  doc: string,
  edits: readonly EditRecord[],
): { doc: string; applied: EditRecord[]; unmatched: EditRecord[] } {
  const r = applyRuleEdits(
    getRules(doc),
    edits.map((e) => ({ op: e.op, content: e.content, target: e.anchor })),
  );
  const applied = edits.filter((_, i) => r.report[i]?.status.startsWith("applied"));
  const unmatched = edits.filter((_, i) => !r.report[i]?.status.startsWith("applied"));
  return { doc: applied.length ? setLearned(doc, r.rules) : doc, applied, unmatched };
}

/** Frontmatter + heading for a missing or empty managed skill (spec §6.1). */
export function skillScaffold(name: string): string {
  return [
    "---",
    `name: ${name}`,
    "description: Preferences and procedures learned from your past coding-agent sessions by SkillOpt-Sleep.",
    "---",
    "",
    `# ${name}`,
    "",
    "Rules learned offline from recurring tasks and corrections in your sessions.",
    "",
  ].join("\n");
}

/** Line range [start, end] (0-based, inclusive) of the learned block, or undefined. */
export function learnedBlockRange(doc: string): { start: number; end: number } | undefined {
  const lines = doc.split("\n");
  const start = lines.findIndex((l) => l.trim() === LEARNED_START);
  if (start < 0) return undefined;
  const end = lines.findIndex((l, i) => i > start && l.trim() === LEARNED_END);
  return { start, end: end < 0 ? lines.length - 1 : end };
}
