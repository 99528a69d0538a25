/**
 * citty's usage text, made to fit a terminal: its tables pad every row to the longest flag and the
 * longest description (lines of ~150 columns that wrap at 80). Here each row is `  FLAG  TEXT`
 * with the text wrapped at `width` under its own column, and a nested command's usage line names
 * the whole command (`skillopt sim serve`, where citty shows `sim serve`).
 */
const HEADINGS = new Set(["ARGUMENTS", "OPTIONS", "COMMANDS"]);
/** Flags longer than this put their text on the next line rather than pushing the column right. */
const MAX_FLAG_COLUMN = 30;

export function tidyUsage(text: string, width = 80): string {
  const plain = text.replace(/\u001b\[[0-9;]*m/g, "");
  const lines = plain.split("\n").map((l) => l.trimEnd());
  const out: string[] = [];
  let rows: Array<[string, string]> | undefined;
  const flush = () => {
    if (!rows) return;
    out.push(...tableLines(rows, width));
    rows = undefined;
  };
  for (const line of lines) {
    if (HEADINGS.has(line.trim())) {
      flush();
      out.push(line.trim(), "");
      rows = [];
      continue;
    }
    if (rows) {
      if (line.trim() === "") continue;
      const m = /^\s*(\S.*?)\s{3,}(\S.*)$/.exec(line) ?? /^\s*(\S.*)$/.exec(line);
      if (m && /^\s{2,}/.test(line)) {
        rows.push([m[1]!, m[2] ?? ""]);
        continue;
      }
      flush();
      out.push("");
    }
    out.push(line);
  }
  flush();
  const joined = out
    .join("\n")
    .replace(/^USAGE (?!skillopt\b)/m, "USAGE skillopt ")
    // A command group's usage lists every subcommand with `|`; the COMMANDS table below names them.
    .replace(/^USAGE (.*?)([\w-]+(?:\|[\w-]+){3,})$/m, (line, head: string) =>
      line.length > width ? `USAGE ${head}COMMAND` : line,
    )
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd();
  // The first paragraph (what the command does) wraps like the rest.
  const [first, ...rest] = joined.split("\n");
  const title = (first ?? "").replace(/\((?!skillopt\b)([\w-]+(?: [\w-]+)*)( v[\w.-]+)?\)$/, "(skillopt $1$2)");
  return [...wrap(title, width), ...rest].join("\n");
}

function tableLines(rows: Array<[string, string]>, width: number): string[] {
  const col = Math.min(MAX_FLAG_COLUMN, Math.max(...rows.map(([f]) => f.length)));
  const indent = 2 + col + 2;
  const out: string[] = [];
  for (const [flag, desc] of rows) {
    const text = wrap(desc, Math.max(30, width - indent));
    if (flag.length > col) {
      out.push(`  ${flag}`);
      for (const t of text) out.push(`${" ".repeat(indent)}${t}`);
      continue;
    }
    out.push(`  ${flag.padEnd(col)}  ${text[0] ?? ""}`.trimEnd());
    for (const t of text.slice(1)) out.push(`${" ".repeat(indent)}${t}`);
  }
  out.push("");
  return out;
}

/** Words into lines of at most `width` characters (a longer word keeps its own line). */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let cur = "";
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (cur && cur.length + 1 + word.length > width) {
      lines.push(cur);
      cur = word;
    } else cur = cur ? `${cur} ${word}` : word;
  }
  if (cur) lines.push(cur);
  return lines;
}
