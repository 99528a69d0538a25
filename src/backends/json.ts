// JSON from model text, spec §2.18: fenced ```json block, then the first-{ to last-} span, then a
// tolerant repair of one unambiguous top-level object. Never guesses between two objects.

const FENCE_RE = /```json\s*([\s\S]*?)```/;

/** Extract a JSON value from model text; undefined when there is none or it is ambiguous. */
export function extractJson(text: string): unknown {
  const fenced = FENCE_RE.exec(text)?.[1];
  if (fenced !== undefined) {
    const v = tryParse(fenced);
    if (v !== undefined) return v;
  }
  const first = text.indexOf("{");
  const last = text.lastIndexOf("}");
  if (first >= 0 && last > first) {
    const v = tryParse(text.slice(first, last + 1));
    if (v !== undefined) return v;
  }
  let candidate: string | undefined;
  if (fenced !== undefined) {
    const spans = topLevelObjects(fenced);
    if (spans.length === 1) candidate = spans[0];
  }
  if (candidate === undefined) {
    const spans = topLevelObjects(text);
    if (spans.length !== 1) return undefined;
    candidate = spans[0];
  }
  if (!candidate || !looksLikeJson(candidate)) return undefined;
  const repaired = tryParse(repairJson(candidate));
  if (repaired && typeof repaired === "object" && !Array.isArray(repaired) && Object.keys(repaired).length > 0) return repaired;
  return undefined;
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Balanced top-level `{…}` spans; braces inside double-quoted strings are ignored. Linear time. */
export function topLevelObjects(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") {
      if (depth === 0) start = i;
      depth++;
    } else if (c === "}" && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  return spans;
}

function looksLikeJson(candidate: string): boolean {
  const after = candidate.slice(1).trimStart();
  return after.startsWith('"') || after.startsWith("}");
}

/**
 * Repair the common ways models break JSON: comments, trailing commas, raw newlines/tabs inside
 * strings, Python literals (True/False/None), and single-quoted strings.
 */
export function repairJson(s: string): string {
  let out = "";
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"' || c === "'") {
      const [str, next] = readString(s, i, c);
      out += str;
      i = next;
      continue;
    }
    if (c === "/" && s[i + 1] === "/") {
      while (i < s.length && s[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && s[i + 1] === "*") {
      const end = s.indexOf("*/", i + 2);
      i = end < 0 ? s.length : end + 2;
      continue;
    }
    if (c === ",") {
      let j = i + 1;
      while (j < s.length && /\s/.test(s[j]!)) j++;
      if (s[j] === "}" || s[j] === "]") {
        i++;
        continue;
      }
    }
    const word = /^(True|False|None)\b/.exec(s.slice(i, i + 5));
    if (word && !/[A-Za-z0-9_]/.test(s[i - 1] ?? "")) {
      out += word[1] === "True" ? "true" : word[1] === "False" ? "false" : "null";
      i += word[1]!.length;
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

function readString(s: string, start: number, quote: string): [string, number] {
  let out = '"';
  let i = start + 1;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "\\") {
      const n = s[i + 1] ?? "";
      out += n === "'" ? "'" : `\\${n}`;
      i += 2;
      continue;
    }
    if (c === quote) return [`${out}"`, i + 1];
    if (c === '"') out += '\\"';
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else out += c;
    i++;
  }
  return [out, i];
}
