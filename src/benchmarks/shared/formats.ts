import { DataError, readInputText } from "../../lib/index.ts";

/** Read a data file as text, or throw DataError naming it (a FIFO or device is refused, never read). */
export function readText(path: string): string {
  return readInputText(path, "");
}

/** Parse a JSON file, or throw DataError with the file and the parser's message. */
export function readJson(path: string): unknown {
  const text = readText(path);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new DataError(`${path}: invalid JSON (${(err as Error).message})`, {
      cause: err,
      data: { path, problem: "invalid_json" },
    });
  }
}

/** Parse JSON lines; a bad line is a DataError naming the file and the 1-based line. Blank lines are skipped. */
export function readJsonl(path: string): Array<{ line: number; value: unknown }> {
  const out: Array<{ line: number; value: unknown }> = [];
  readText(path)
    .split(/\r?\n/)
    .forEach((raw, i) => {
      if (!raw.trim()) return;
      try {
        out.push({ line: i + 1, value: JSON.parse(raw) });
      } catch (err) {
        throw new DataError(`${path}:${i + 1}: invalid JSON (${(err as Error).message})`, {
          cause: err,
          data: { path, line: i + 1, problem: "invalid_json" },
        });
      }
    });
  return out;
}

/** RFC 4180 CSV (quoted fields, doubled quotes, newlines inside quotes) → rows of strings. */
export function parseCsvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && src[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += ch;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => !(r.length === 1 && r[0] === ""));
}

/** CSV with a header row → records keyed by column name. */
function parseCsv(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsvRows(text);
  if (!header) return [];
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h.trim(), r[i] ?? ""])));
}

/** Read a CSV file into records. */
export function readCsv(path: string): Array<Record<string, string>> {
  return parseCsv(readText(path));
}

/** Serialise records as CSV with the given columns. */
export function toCsv(records: ReadonlyArray<Record<string, unknown>>, columns: readonly string[]): string {
  const cell = (v: unknown): string => {
    const s = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return `${[columns.join(","), ...records.map((r) => columns.map((c) => cell(r[c])).join(","))].join("\n")}\n`;
}

/**
 * A Python-literal list of strings (`['a', "b"]`, as DocVQA CSVs store answers) → strings.
 * Anything that is not such a list is returned as a single plain-text answer.
 */
export function parseAnswerList(raw: string): string[] {
  const s = raw.trim();
  if (!s.startsWith("[") || !s.endsWith("]")) return s ? [s] : [];
  const parsed = tryJson(s);
  if (Array.isArray(parsed)) return parsed.map(String);
  const out: string[] = [];
  const re = /'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g;
  for (const m of s.slice(1, -1).matchAll(re)) {
    const body = m[1] ?? m[2] ?? "";
    out.push(body.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c)));
  }
  return out.length > 0 ? out : [s];
}

/** `x` as an array of strings: arrays as they are, strings as one item, else empty. */
export function asStringList(x: unknown): string[] {
  if (Array.isArray(x)) return x.map(String);
  if (typeof x === "string") return x ? [x] : [];
  return [];
}

/** `x` as a string ("" for null/undefined; numbers stringified). */
export function asString(x: unknown): string {
  if (x === undefined || x === null) return "";
  return typeof x === "string" ? x : String(x);
}

/** JSON.parse, or undefined when the text is not JSON. */
export function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}
