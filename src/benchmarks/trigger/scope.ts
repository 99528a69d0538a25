import type { EditScope } from "../../engine/index.ts";
import { frontmatterData, skillCard } from "../../lib/index.ts";

/** A description as one YAML scalar: plain when that reads back the same, else double-quoted. */
function yamlScalar(text: string): string {
  const plain = /^[A-Za-z0-9(][^\n]*$/.test(text) && !/:\s|\s#|[:]$/.test(text);
  return plain ? text : JSON.stringify(text);
}

/**
 * The description in the SKILL.md front matter, the only text trigger tasks may train. Writing
 * replaces the `description:` entry (with its continuation lines) by one line, whitespace
 * collapsed; every other byte of the skill is kept.
 */
export const DESCRIPTION_SCOPE: EditScope = {
  label: "the description in the SKILL.md front matter",
  read: (skill) => skillCard(skill).description,
  write(skill, text) {
    const fm = frontmatterData(skill);
    if (!fm) return skill;
    const head = skill.slice(0, fm.span.end);
    const lines = head.split("\n");
    const at = lines.findIndex((l) => /^description:/.test(l));
    if (at < 0) return skill;
    let end = at + 1;
    while (end < lines.length - 1 && /^[ \t]+\S|^[ \t]*$/.test(lines[end]!) && !/^---/.test(lines[end]!)) end++;
    const cr = lines[at]!.endsWith("\r") ? "\r" : "";
    const value = text.replace(/\s+/g, " ").trim();
    lines.splice(at, end - at, `description: ${yamlScalar(value)}${cr}`);
    return lines.join("\n") + skill.slice(fm.span.end);
  },
};
