/**
 * A skill package in one text (the engine's trained artifact for a skill folder): SKILL.md, then
 * each text file of the folder between markers. Read by the engine, the CLI and the report.
 *
 *   <SKILL.md>
 *   <!-- SKILLOPT_FILE references/formats.md -->
 *   <the file's text>
 *   <!-- SKILLOPT_FILE_END -->
 */

const OPEN = "<!-- SKILLOPT_FILE ";
const CLOSE = "<!-- SKILLOPT_FILE_END -->";
const FIXED = " (fixed)";

export interface PackageFile {
  path: string;
  text: string;
  fixed: boolean;
}

interface PackageSection extends PackageFile {
  /** From the newline before the opening marker to after the newline that follows the closing one. */
  start: number;
  end: number;
  /** Where the file's text lies. */
  textStart: number;
  textEnd: number;
}

/** Every file section of a package, in order. A section whose closing marker is missing runs to the end. */
export function packageSections(pkg: string): PackageSection[] {
  const out: PackageSection[] = [];
  let from = 0;
  for (;;) {
    const i = pkg.indexOf(`\n${OPEN}`, from);
    if (i < 0) return out;
    const headEnd = pkg.indexOf(" -->\n", i + 1 + OPEN.length);
    if (headEnd < 0) return out;
    let path = pkg.slice(i + 1 + OPEN.length, headEnd);
    const fixed = path.endsWith(FIXED);
    if (fixed) path = path.slice(0, -FIXED.length);
    const textStart = headEnd + 5;
    const close = pkg.indexOf(`\n${CLOSE}`, textStart);
    const textEnd = close < 0 ? pkg.length : close;
    let end = close < 0 ? pkg.length : close + 1 + CLOSE.length;
    if (pkg[end] === "\n") end += 1;
    out.push({ path, text: pkg.slice(textStart, textEnd), fixed, start: i, end, textStart, textEnd });
    from = end > i ? end - 1 : i + 1;
  }
}

/** One file's section, as packed. */
export function sectionText(f: PackageFile): string {
  return `\n${OPEN}${f.path}${f.fixed ? FIXED : ""} -->\n${f.text}\n${CLOSE}\n`;
}

/** Pack SKILL.md and the folder's text files into one package text (SKILL.md alone when there are none). */
export function packPackage(skillMd: string, files: readonly PackageFile[]): string {
  return skillMd + files.map(sectionText).join("");
}

/** SKILL.md of a package (everything outside the file sections) and its files. */
export function unpackPackage(pkg: string): { skillMd: string; files: PackageFile[] } {
  const secs = packageSections(pkg);
  let skillMd = "";
  let at = 0;
  for (const s of secs) {
    skillMd += pkg.slice(at, s.start);
    at = s.end;
  }
  skillMd += pkg.slice(at);
  return { skillMd, files: secs.map(({ path, text, fixed }) => ({ path, text, fixed })) };
}

/**
 * What the target reads of a package: SKILL.md, then each file it points to (its path named in
 * SKILL.md or in a file already read), as an agent that follows the body's pointers would read
 * them. Files nothing points to stay unread. A skill without files is returned unchanged.
 */
export function targetView(pkg: string): string {
  const secs = packageSections(pkg);
  if (!secs.length) return pkg;
  const { skillMd } = unpackPackage(pkg);
  const read: PackageSection[] = [];
  let seen = skillMd;
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of secs)
      if (!read.includes(s) && seen.includes(s.path)) {
        read.push(s);
        seen += `\n${s.text}`;
        grew = true;
      }
  }
  if (!read.length) return skillMd;
  const parts = read.map((s) => `<file path="${s.path}">\n${s.text.trimEnd()}\n</file>`);
  return `${skillMd.trimEnd()}\n\nFiles of this skill that it points to, as read when needed:\n\n${parts.join("\n\n")}\n`;
}
