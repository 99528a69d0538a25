/** Tolerant readers for JSON records whose exact key names vary (ours, upstream's). */

export type Rec = Record<string, unknown>;

export function isRec(v: unknown): v is Rec {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function num(v: unknown): number | null {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v))) return Number(v);
  return null;
}

export function first(rec: Rec, keys: readonly string[]): unknown {
  for (const k of keys) {
    const path = k.split(".");
    let cur: unknown = rec;
    for (const p of path) cur = isRec(cur) ? cur[p] : undefined;
    if (cur !== undefined && cur !== null) return cur;
  }
  return undefined;
}

export function firstNum(rec: Rec, keys: readonly string[]): number | null {
  for (const k of keys) {
    const n = num(first(rec, [k]));
    if (n !== null) return n;
  }
  return null;
}

export function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}
