// JSON from a model's reply text: one module for every caller, which names what it expects.
//   "object" (structured stage outputs, spec §2.18): a fenced ```json block, then the first-{ to last-}
//     span, then a tolerant repair of one unambiguous top-level object. Never guesses between two objects.
//   "array" (Sleep's edit, contrast and mining lists): the first balanced `[…]` that parses, in a fenced
//     block first, then in the whole reply (not the greedy first-[ to last-] of sleep.md §12.1 #26).
//   "value" (a task's json_match answer): a fenced block, the whole reply, then the outermost object or array.

/** What the caller expects the reply to hold. */
type JsonShape = "object" | "array" | "value";

const JSON_FENCE_RE = /```json\s*([\s\S]*?)```/;
const ANY_FENCE_RE = /```(?:json)?\s*([\s\S]*?)```/;
const VALUE_FENCE_RE = /```(?:json)?\s*\n([\s\S]*?)```/i;

/** Extract a JSON value of the expected shape from model text; undefined when there is none or it is ambiguous. */
export function extractJson(text: string, shape?: "object" | "value"): unknown;
export function extractJson(text: string, shape: "array"): unknown[] | undefined;
export function extractJson(text: string, shape: JsonShape = "object"): unknown {
  if (shape === "array") return firstArray(text);
  if (shape === "value") return anyValue(text);
  return oneObject(text);
}

function oneObject(text: string): unknown {
  const fenced = JSON_FENCE_RE.exec(text)?.[1];
  if (fenced !== undefined) {
    const v = tryParse(fenced);
    if (v !== undefined) return v;
  }
  const v = outermost(text, "{", "}");
  if (v !== undefined) return v;
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
  if (repaired && typeof repaired === "object" && !Array.isArray(repaired) && Object.keys(repaired).length > 0)
    return repaired;
  return undefined;
}

function firstArray(text: string): unknown[] | undefined {
  const fenced = ANY_FENCE_RE.exec(text)?.[1];
  for (const src of fenced ? [fenced, text] : [text]) {
    for (let start = src.indexOf("["); start >= 0; start = src.indexOf("[", start + 1)) {
      const end = closeOf(src, start, "[", "]");
      if (end < 0) continue;
      const parsed = tryParse(src.slice(start, end + 1));
      if (Array.isArray(parsed)) return parsed;
    }
  }
  return undefined;
}

function anyValue(text: string): unknown {
  const fenced = VALUE_FENCE_RE.exec(text)?.[1];
  for (const candidate of [fenced, text.trim()]) {
    if (candidate === undefined) continue;
    const parsed = tryParse(candidate.trim());
    if (parsed !== undefined) return parsed;
  }
  return outermost(text, "{", "}") ?? outermost(text, "[", "]");
}

/** The first-`open` to last-`close` span, parsed. */
function outermost(text: string, open: string, close: string): unknown {
  const first = text.indexOf(open);
  const last = text.lastIndexOf(close);
  return first >= 0 && last > first ? tryParse(text.slice(first, last + 1)) : undefined;
}

function tryParse(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** Index of the double quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i;
  }
  return text.length;
}

/** Index of the bracket that closes the one at `start` (brackets inside double-quoted strings ignored); -1 when unbalanced. */
function closeOf(text: string, start: number, open: string, close: string): number {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i);
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return i;
  }
  return -1;
}

/** Balanced top-level `{…}` spans; braces inside double-quoted strings are ignored. Linear time. */
export function topLevelObjects(text: string): string[] {
  const spans: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = stringEnd(text, i);
    else if (c === "{") {
      const end = closeOf(text, i, "{", "}");
      if (end < 0) break;
      spans.push(text.slice(i, end + 1));
      i = end;
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
