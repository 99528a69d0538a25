/** Answer extraction and the text metrics of engine.md §5.3. */

const ASCII_PUNCT = new Set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~");

/** SQuAD normalisation: lowercase, strip ASCII punctuation, drop a/an/the, collapse spaces. */
export function normalizeSquad(s: string): string {
  const lower = s.toLowerCase();
  let noPunct = "";
  for (const ch of lower) if (!ASCII_PUNCT.has(ch)) noPunct += ch;
  return noPunct
    .replace(/\b(a|an|the)\b/g, " ")
    .split(/\s+/)
    .filter(Boolean)
    .join(" ");
}

/** Token-level F1 between two already-normalised strings; empty vs empty = 1. */
export function tokenF1(prediction: string, gold: string): number {
  const p = prediction.split(/\s+/).filter(Boolean);
  const g = gold.split(/\s+/).filter(Boolean);
  if (p.length === 0 && g.length === 0) return 1;
  if (p.length === 0 || g.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same++;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / p.length;
  const recall = same / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Max of `score(pred, gold)` over the golds (0 when there are none). */
function maxOverGolds(golds: readonly string[], score: (gold: string) => number): number {
  let best = 0;
  for (const g of golds) best = Math.max(best, score(g));
  return best;
}

/** SQuAD exact match and token F1 against any gold. */
export function squadScores(prediction: string, golds: readonly string[]): { em: number; f1: number; subEm: number } {
  const p = normalizeSquad(prediction);
  const normGolds = golds.map(normalizeSquad);
  const em = normGolds.some((g) => g === p) ? 1 : 0;
  const f1 = maxOverGolds(normGolds, (g) => tokenF1(p, g));
  const subEm = normGolds.some((g) => (g.length > 0 && p.includes(g)) || (p.length > 0 && g.includes(p))) ? 1 : 0;
  return { em, f1, subEm };
}

const ANSWER_RE = /<answer>([\s\S]*?)<\/answer>/gi;

/** Text of the last `<answer>…</answer>` (case-insensitive), or undefined. */
export function lastAnswerTag(text: string): string | undefined {
  let last: string | undefined;
  for (const m of text.matchAll(ANSWER_RE)) last = m[1];
  return last?.trim();
}

/** Text of the first `<answer>…</answer>`, or undefined. */
export function firstAnswerTag(text: string): string | undefined {
  const m = /<answer>([\s\S]*?)<\/answer>/i.exec(text);
  return m?.[1]?.trim();
}

/** Text between the last `<answer>` and the last `</answer>` (DocVQA's rule), or undefined. */
export function lastOpenToLastClose(text: string): string | undefined {
  const lower = text.toLowerCase();
  const open = lower.lastIndexOf("<answer>");
  const close = lower.lastIndexOf("</answer>");
  if (open < 0 || close < 0 || close < open) return undefined;
  return text.slice(open + "<answer>".length, close).trim();
}

/** The last non-empty line, trimmed ("" when there is none). */
export function lastNonEmptyLine(text: string): string {
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines[lines.length - 1] ?? "";
}

/** SearchQA's extraction: last answer tag, else last non-empty line, else the whole text. */
export function extractAnswer(text: string): string {
  const tagged = lastAnswerTag(text);
  if (tagged !== undefined) return tagged;
  const line = lastNonEmptyLine(text);
  return line || text.trim();
}

/** Levenshtein distance over UTF-16 code units. */
function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (a.length === 0) return b.length;
  if (b.length === 0) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  let cur = new Array<number>(b.length + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

function normalizeAnls(s: string): string {
  return s.toLowerCase().split(/\s+/).filter(Boolean).join(" ");
}

/** ANLS of one prediction: max over golds of 1 − NL when NL < 0.5, else 0 (threshold τ = 0.5). */
export function anls(prediction: string, golds: readonly string[]): number {
  const p = normalizeAnls(prediction);
  return maxOverGolds(golds, (gold) => {
    const g = normalizeAnls(gold);
    if (p.length === 0 && g.length === 0) return 1;
    if (p.length === 0 || g.length === 0) return 0;
    const nl = levenshtein(p, g) / Math.max(p.length, g.length);
    return nl < 0.5 ? 1 - nl : 0;
  });
}

const OFFICEQA_DROP_WORDS = /\b(millions?|billions?|dollars?|nominal)\b/g;

/** OfficeQA normalisation: lowercase, drop commas and punctuation except `.` `-` `%`, drop unit words. */
export function normalizeOfficeQa(s: string): string {
  let out = "";
  for (const ch of s.toLowerCase().replace(/,/g, "")) {
    if (ch === "." || ch === "-" || ch === "%") out += ch;
    else if (ASCII_PUNCT.has(ch)) out += " ";
    else out += ch;
  }
  return out.replace(OFFICEQA_DROP_WORDS, " ").split(/\s+/).filter(Boolean).join(" ");
}
