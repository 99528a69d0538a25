import { conventionOfLine, FAMILIES, type FamilyId, scopeOfLine } from "./conventions.ts";

const SLOW_START = "<!-- SLOW_UPDATE_START -->";
const APPENDIX_START = "<!-- APPENDIX_START -->";
const FILE_OPEN = "<!-- SKILLOPT_FILE ";

/** One file of a quoted skill package (the engine's package text): its path, its lines, whether it is carried fixed. */
interface QuotedFile {
  path: string;
  text: string;
  fixed: boolean;
}

/** A quoted skill package: SKILL.md's text and the files after it (none for a plain skill). */
export function packageParts(skill: string): { body: string; files: QuotedFile[] } {
  const at = skill.indexOf(`\n${FILE_OPEN}`);
  if (at < 0) return { body: skill, files: [] };
  const files: QuotedFile[] = [];
  const re = /\n<!-- SKILLOPT_FILE (.+?) -->\n([\s\S]*?)\n<!-- SKILLOPT_FILE_END -->/g;
  for (const m of skill.slice(at).matchAll(re)) {
    const fixed = m[1]!.endsWith(" (fixed)");
    files.push({ path: fixed ? m[1]!.slice(0, -8) : m[1]!, text: m[2]!, fixed });
  }
  return { body: skill.slice(0, at), files };
}

/** The files the agent reads: those SKILL.md names, and those a file it read names, in reading order. */
export function pointedFiles(skill: string): QuotedFile[] {
  const { body, files } = packageParts(skill);
  const read: QuotedFile[] = [];
  let seen = body;
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of files)
      if (!read.includes(f) && seen.includes(f.path)) {
        read.push(f);
        seen += `\n${f.text}`;
        grew = true;
      }
  }
  return read;
}

/**
 * Where the general rule the agent follows for a family is stated: the last one it reads, SKILL.md
 * first and then the files it points to (a file read later overrides the body). Undefined when none.
 * Rules scoped to an office are not general rules (`ruleLine` with a scope finds them).
 */
export function effectiveRule(skill: string, fid: FamilyId): { line: string; file?: string } | undefined {
  let found: { line: string; file?: string } | undefined;
  const body = ruleLine(skill, fid);
  if (body) found = { line: body };
  for (const f of pointedFiles(skill))
    for (const l of f.text.split("\n"))
      if (conventionOfLine(l)?.family === fid && scopeOfLine(l) === undefined) found = { line: l, file: f.path };
  return found;
}

/** The skill quoted in an optimizer prompt (between <current_skill> tags), or "". */
export function quotedSkill(text: string, nth = 0): string {
  const re = /<current_skill>\n([\s\S]*?)\n<\/current_skill>/g;
  let i = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (i === nth) return m[1]!;
    i++;
  }
  return "";
}

/** Index of the line where protected regions begin (lines at or after it are not body). */
function bodyEnd(lines: string[]): number {
  const i = lines.findIndex((l) => l.includes(SLOW_START) || l.includes(APPENDIX_START) || l.startsWith(FILE_OPEN));
  return i < 0 ? lines.length : i;
}

/** The body line stating the general rule for this family (the last one), or with `scope` the rule scoped to that office. */
export function ruleLine(skill: string, fid: FamilyId, scope?: string): string | undefined {
  const lines = skill.split("\n");
  const end = bodyEnd(lines);
  let found: string | undefined;
  lines.slice(0, end).forEach((l) => {
    if (conventionOfLine(l)?.family === fid && scopeOfLine(l) === scope) found = l;
  });
  return found;
}

/** The family a line of advice is about: a stated rule, or one of a family's vague phrasings. */
export function familyOfLine(line: string): FamilyId | undefined {
  const cv = conventionOfLine(line);
  if (cv) return cv.family;
  return FAMILIES.find((f) => f.vague.some((v) => line.includes(v)))?.id;
}

/**
 * Put `line` into the skill body as the family's rule: existing body lines for the family (for the
 * same office, when the line is scoped to one) are removed, the line goes under a "## Conventions"
 * heading (or at the end of the body).
 */
export function setRule(skill: string, fid: FamilyId | undefined, line: string): string {
  let lines = skill.split("\n");
  const end = bodyEnd(lines);
  let body = lines.slice(0, end);
  const tail = lines.slice(end);
  const scope = scopeOfLine(line);
  if (fid) body = body.filter((l) => familyOfLine(l) !== fid || scopeOfLine(l) !== scope);
  const h = body.findIndex((l) => /^##\s+Conventions\s*$/i.test(l.trim()));
  if (h >= 0) body.splice(h + 1, 0, line);
  else {
    while (body.length && !body[body.length - 1]!.trim()) body.pop();
    body.push("", line);
  }
  lines = tail.length ? [...body, "", ...tail] : body;
  return `${lines
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}
