import { extractJson } from "../../lib/index.ts";

/** The rules of a rules answer (a JSON array of {rule, quote}); items of another shape are left out. */
export function parseRules(raw: string): Array<{ rule: string; quote: string }> {
  const arr = extractJson(raw, "array") ?? [];
  const out: Array<{ rule: string; quote: string }> = [];
  for (const x of arr) {
    if (!x || typeof x !== "object") continue;
    const r = x as Record<string, unknown>;
    if (typeof r.rule !== "string" || typeof r.quote !== "string") continue;
    const rule = r.rule.replace(/\s+/g, " ").trim();
    const quote = r.quote.replace(/\s+/g, " ").trim();
    if (rule && quote && rule.length <= 240) out.push({ rule, quote });
  }
  return out;
}

/** The verdict of a standing-rule answer ({"standing": bool}); undefined when it says neither. */
export function parseStanding(raw: string): boolean | undefined {
  const v = extractJson(raw);
  if (v && typeof v === "object" && "standing" in v && typeof (v as { standing: unknown }).standing === "boolean")
    return (v as { standing: boolean }).standing;
  return undefined;
}
