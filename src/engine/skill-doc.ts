import { frontmatterEnd } from "../lib/index.ts";
import { fileSpans, onSkillMd } from "./package.ts";
export const SLOW_START = "<!-- SLOW_UPDATE_START -->";
export const SLOW_END = "<!-- SLOW_UPDATE_END -->";
export const APPENDIX_START = "<!-- APPENDIX_START -->";
export const APPENDIX_END = "<!-- APPENDIX_END -->";
const MARKERS = [
  SLOW_START,
  SLOW_END,
  APPENDIX_START,
  APPENDIX_END,
  "<!-- SKILLOPT_FILE_END -->",
  "<!-- SKILLOPT_FILE ",
];

interface Span {
  start: number;
  end: number;
}

/** Where the YAML frontmatter of a SKILL.md lies (from the opening `---` to after the closing one). */
export function frontmatterSpan(skill: string): Span | undefined {
  const end = frontmatterEnd(skill);
  return end === undefined ? undefined : { start: 0, end };
}

/** Spans of the protected regions (slow update, appendix), the frontmatter and a package's other files. */
export function protectedSpans(skill: string): Span[] {
  const out: Span[] = fileSpans(skill);
  const fm = frontmatterSpan(skill);
  if (fm) out.push(fm);
  for (const [s, e] of [
    [SLOW_START, SLOW_END],
    [APPENDIX_START, APPENDIX_END],
  ] as const) {
    let from = 0;
    for (;;) {
      const i = skill.indexOf(s, from);
      if (i < 0) break;
      const j = skill.indexOf(e, i + s.length);
      const end = j < 0 ? skill.length : j + e.length;
      out.push({ start: i, end });
      from = end;
    }
  }
  return out;
}

function inside(spans: Span[], pos: number): boolean {
  return spans.some((s) => pos >= s.start && pos < s.end);
}

/** Index of the earliest protected region marker (slow update, appendix, a package's first file), or -1. */
export function firstRegionStart(skill: string): number {
  const files = fileSpans(skill).map((s) => s.start);
  const idx = [...[SLOW_START, APPENDIX_START].map((m) => skill.indexOf(m)), ...files].filter((i) => i >= 0);
  return idx.length ? Math.min(...idx) : -1;
}

/** Inner text of a region, or "" when absent. */
export function regionContent(skill: string, start: string, end: string): string {
  const i = skill.indexOf(start);
  if (i < 0) return "";
  const j = skill.indexOf(end, i);
  return (j < 0 ? skill.slice(i + start.length) : skill.slice(i + start.length, j)).trim();
}

function removeRegions(skill: string, start: string, end: string): string {
  let out = skill;
  for (;;) {
    const i = out.indexOf(start);
    if (i < 0) break;
    const j = out.indexOf(end, i);
    out = j < 0 ? out.slice(0, i) + out.slice(i + start.length) : out.slice(0, i) + out.slice(j + end.length);
  }
  return out
    .split(end)
    .join("")
    .replace(/\n{3,}/g, "\n\n");
}

/**
 * Replace the slow-update region with `content` (one region, placed before the appendix so both
 * protected blocks stay at the tail in a fixed order; spec §10.12).
 */
export function setSlowUpdate(pkg: string, content: string): string {
  return onSkillMd(pkg, (skill) => setSlowUpdateIn(skill, content));
}

function setSlowUpdateIn(skill: string, content: string): string {
  const body = removeRegions(skill, SLOW_START, SLOW_END).trimEnd();
  const block = `${SLOW_START}\n${content.trim() ? `${content.trim()}\n` : ""}${SLOW_END}`;
  const a = body.indexOf(APPENDIX_START);
  if (a < 0) return `${body}\n\n${block}\n`;
  return `${body.slice(0, a).trimEnd()}\n\n${block}\n\n${body.slice(a).trimEnd()}\n`;
}

/** Add an empty slow-update region if there is none (idempotent). */
export function ensureSlowUpdatePlaceholder(skill: string): string {
  return skill.includes(SLOW_START) ? skill : setSlowUpdate(skill, "");
}

function noteKey(note: string): string {
  return note
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[ .;:,_-]+$/, "")
    .toLowerCase();
}

/** Notes of the appendix region (its bullet lines). */
export function appendixNotes(skill: string): string[] {
  return regionContent(skill, APPENDIX_START, APPENDIX_END)
    .split("\n")
    .filter((l) => l.startsWith("- "))
    .map((l) => l.slice(2).trim());
}

/** Merge notes into the appendix with case/whitespace-insensitive dedup; returns the new skill and counts. */
export function mergeAppendix(skill: string, notes: string[]): { skill: string; added: number; total: number } {
  const existing = appendixNotes(skill);
  const seen = new Set(existing.map(noteKey));
  const merged = [...existing];
  for (const n of notes.map((x) => x.trim()).filter(Boolean)) {
    const k = noteKey(n);
    if (seen.has(k)) continue;
    seen.add(k);
    merged.push(n);
  }
  return { skill: setAppendix(skill, merged), added: merged.length - existing.length, total: merged.length };
}

/** Rebuild the appendix region with exactly these notes, at the very end. */
export function setAppendix(pkg: string, notes: string[]): string {
  return onSkillMd(pkg, (skill) => setAppendixIn(skill, notes));
}

function setAppendixIn(skill: string, notes: string[]): string {
  const base = removeRegions(skill, APPENDIX_START, APPENDIX_END).trimEnd();
  const lines = [APPENDIX_START, "## Execution Notes Appendix", ...notes.map((n) => `- ${n}`), APPENDIX_END];
  return `${base}\n\n${lines.join("\n")}\n`;
}

/** The skill without its protected regions (for density and token limits). */
export function stripRegions(skill: string): string {
  return removeRegions(removeRegions(skill, SLOW_START, SLOW_END), APPENDIX_START, APPENDIX_END);
}

/** Remove every protected marker from text an edit wants to insert. */
export function stripMarkers(text: string): string {
  return MARKERS.reduce((t, m) => t.split(m).join(""), text);
}

export { inside as insideSpans };
