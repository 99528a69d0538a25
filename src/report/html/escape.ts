/**
 * Escape text for HTML element content and attribute values: & < > " ' as &amp; &lt; &gt; &quot;
 * &#39;. One native pass (Bun.escapeHTML writes ' as &#x27;, changed back; a literal "&#x27;" in
 * the text has become "&amp;#x27;" by then) instead of five regular-expression passes.
 */
export function esc(s: string | number | null | undefined): string {
  if (s === null || s === undefined) return "";
  const out = Bun.escapeHTML(String(s));
  return out.includes("&#x27;") ? out.replaceAll("&#x27;", "&#39;") : out;
}

/** A score in [0,1] as text with three decimals, or an em dash. */
export function fmtScore(v: number | null | undefined): string {
  return v === null || v === undefined ? "—" : v.toFixed(3);
}

export function fmtInt(v: number | null | undefined): string {
  return v === null || v === undefined ? "—" : Math.round(v).toLocaleString("en-US");
}

export function fmtCost(v: number | null | undefined): string {
  if (v === null || v === undefined) return "—";
  return v < 0.01 && v > 0 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`;
}

export function fmtSeconds(v: number | null | undefined): string {
  if (v === null || v === undefined) return "—";
  if (v < 60) return `${v.toFixed(1)} s`;
  const m = Math.floor(v / 60);
  return `${m} min ${Math.round(v - m * 60)} s`;
}
