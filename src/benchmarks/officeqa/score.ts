import { normalizeOfficeQa, tokenF1 } from "../shared/text.ts";

const NUMBER_RE = /-?\d+(?:\.\d+)?%?/g;

function numbers(s: string): Array<{ value: number; percent: boolean }> {
  return [...s.matchAll(NUMBER_RE)].map((m) => ({ value: Number(m[0].replace("%", "")), percent: m[0].endsWith("%") }));
}

/**
 * OfficeQA scoring (engine.md §5.3): hard = exact match after normalisation, or — when the gold
 * and the prediction each hold exactly one number — the numbers agree within `tolerance`
 * (relative; 0 means equal values, so "1000.0" matches "1,000"); soft = token F1.
 */
export function scoreOfficeQa(predicted: string, gold: string, tolerance: number): { em: number; f1: number } {
  const p = normalizeOfficeQa(predicted);
  const g = normalizeOfficeQa(gold);
  const f1 = tokenF1(p, g);
  if (p === g) return { em: 1, f1 };
  const pn = numbers(p);
  const gn = numbers(g);
  if (pn.length === 1 && gn.length === 1 && pn[0]!.percent === gn[0]!.percent) {
    const a = pn[0]!.value;
    const b = gn[0]!.value;
    const ok = tolerance > 0 ? Math.abs(a - b) <= tolerance * Math.abs(b) : a === b;
    if (ok) return { em: 1, f1 };
  }
  return { em: 0, f1 };
}
