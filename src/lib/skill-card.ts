import { yamlLibrary } from "./yaml-text.ts";

/**
 * What an agent reads of an installed skill before loading it (its front matter's name and
 * description), and the content words of a text. Shared by the trigger benchmark and the
 * simulator, which must read descriptions the same way.
 */

/** Where a SKILL.md's front matter ends (just past its closing `---` line), or undefined when it has none. */
export function frontmatterEnd(skill: string): number | undefined {
  if (!skill.startsWith("---\n") && !skill.startsWith("---\r\n")) return undefined;
  const close = /\r?\n---[ \t]*(\r?\n|$)/g;
  close.lastIndex = 3;
  const m = close.exec(skill);
  return m ? m.index + m[0].length : undefined;
}

/** The front matter of a SKILL.md as a YAML mapping, or undefined when it has none (or it does not parse). */
export function frontmatterData(skill: string): { span: { end: number }; data: Record<string, unknown> } | undefined {
  const end = frontmatterEnd(skill);
  if (end === undefined) return undefined;
  const span = { end };
  const inner = skill
    .slice(0, span.end)
    .replace(/^---\r?\n/, "")
    .replace(/\r?\n---[ \t]*(\r?\n)?$/, "");
  try {
    const data = yamlLibrary().parse(inner) as unknown;
    return data && typeof data === "object" && !Array.isArray(data)
      ? { span, data: data as Record<string, unknown> }
      : undefined;
  } catch {
    return undefined;
  }
}

/** The `name` and `description` of a SKILL.md's front matter (either undefined when missing). */
export function skillCard(skill: string): { name: string | undefined; description: string | undefined } {
  const fm = frontmatterData(skill)?.data;
  const str = (v: unknown) => (typeof v === "string" && v.trim() ? v.trim() : undefined);
  return { name: str(fm?.name), description: str(fm?.description) };
}

const STOP = new Set(
  (
    "a an the and or but if of for to in on at by with from into about as is are was were be been being it its this that these those " +
    "i me my we our you your he she they them their can could would should will shall may might must do does did done please help " +
    "need needs want wants like just also so some any all each every other more most much many few very really ok okay hey hi thanks " +
    "thank get got make made put take use used using one two three what which who whom how when where why there here then than now " +
    "up out over under again still yet not no yes new old own same such only too via per let lets going go give show tell know " +
    "something anything everything someone sure quick quickly today tomorrow yesterday week month last next first second im ive its " +
    "against handle handling involved sort check wants friday plus hey what whats"
  ).split(" "),
);

/** A crude stem, so "receipts", "reimbursed" and "reimbursement" meet their base word. */
function stem(word: string): string {
  let w = word.toLowerCase();
  for (const suf of ["ments", "ment", "ings", "ing", "ied", "ies", "ed", "es", "s"]) {
    if (w.endsWith(suf) && w.length - suf.length >= 4) {
      w = w.slice(0, -suf.length) + (suf === "ied" || suf === "ies" ? "y" : "");
      break;
    }
  }
  if (w.length > 4 && w.endsWith("e")) w = w.slice(0, -1);
  return w;
}

/** The content words of a text: lower-cased alphanumeric words, stop words dropped, with their stems. */
export function contentWords(text: string): { word: string; stem: string }[] {
  return (text.toLowerCase().match(/[a-z0-9]+/g) ?? [])
    .filter((w) => w.length > 1 && !STOP.has(w) && !/^\d+$/.test(w))
    .map((word) => ({ word, stem: stem(word) }));
}

/** Stems of a text's content words. */
export function stems(text: string): Set<string> {
  return new Set(contentWords(text).map((w) => w.stem));
}
