/** A user correction of the form "use X instead of Y" found in a follow-up message. */
interface Correction {
  prefer: string[];
  avoid: string[];
  /** Index of the message that carried it. */
  index: number;
}

const TERM = String.raw`(\x60[^\x60\n]{1,60}\x60|[\w.@/:+-]+(?:\s[\w.@/:+-]+)?)`;
const PATTERNS: Array<{ re: RegExp; prefer: number; avoid: number }> = [
  {
    re: new RegExp(String.raw`\buse\s+${TERM}\s*,?\s+(?:instead of|rather than|not)\s+${TERM}`, "i"),
    prefer: 1,
    avoid: 2,
  },
  { re: new RegExp(String.raw`\buse\s+${TERM}\s*,\s*not\s+${TERM}`, "i"), prefer: 1, avoid: 2 },
  {
    re: new RegExp(
      String.raw`\b(?:don't|do not|never)\s+use\s+${TERM}\s*[,;.]?\s*(?:use|prefer|always use)\s+${TERM}`,
      "i",
    ),
    prefer: 2,
    avoid: 1,
  },
  { re: /\b(?:always use|please use|prefer)\s+(\x60[^\x60\n]{1,60}\x60)/i, prefer: 1, avoid: 0 },
];
const VAGUE = new Set([
  "it",
  "that",
  "this",
  "the",
  "a",
  "an",
  "one",
  "them",
  "those",
  "these",
  "same",
  "other",
  "something",
  "what",
  "which",
]);

function clean(term: string | undefined): string {
  if (!term) return "";
  const t = term
    .trim()
    .replace(/^\x60|\x60$/g, "")
    .replace(/[.,;:!?)]+$/, "")
    .trim();
  const first = t.split(/\s+/)[0]?.toLowerCase() ?? "";
  if (t.length < 2 || VAGUE.has(first) || VAGUE.has(t.toLowerCase())) return "";
  return t;
}

/** The first "use X instead of Y" style correction in the messages, or undefined. */
export function findCorrection(messages: readonly string[]): Correction | undefined {
  for (let index = 0; index < messages.length; index++) {
    const text = messages[index]!;
    for (const p of PATTERNS) {
      const m = p.re.exec(text);
      if (!m) continue;
      const prefer = clean(m[p.prefer]);
      const avoid = p.avoid ? clean(m[p.avoid]) : "";
      if (!prefer || prefer.toLowerCase() === avoid.toLowerCase()) continue;
      // "use pnpm, not npm": a not_contains check on "npm" could never pass next to "pnpm".
      const overlap =
        avoid !== "" &&
        (prefer.toLowerCase().includes(avoid.toLowerCase()) || avoid.toLowerCase().includes(prefer.toLowerCase()));
      return { prefer: [prefer], avoid: avoid && !overlap ? [avoid] : [], index };
    }
  }
  return undefined;
}
