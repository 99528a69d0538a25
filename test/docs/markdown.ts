import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";

/** The documentation the tests hold to: README.md and every page of docs/. */
export function docFiles(): string[] {
  const docs = readdirSync(join(REPO_ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

export function readDoc(file: string): string {
  return readFileSync(join(REPO_ROOT, file), "utf8");
}

/**
 * How a ```sh block is tested, set by an HTML comment on the line before its fence:
 * - no marker: every line runs, in order, in the page's scratch directory (exit 0 expected);
 * - `<!-- doc-test: exit N -->`: runs, and the block's last command must exit N;
 * - `<!-- doc-test: parse-only -->`: needs what a test cannot provide (a real provider, a downloaded
 *   release, the reader's own data or agent history) or changes the machine (crontab): each
 *   `skillopt` command line is checked against the command definitions only.
 */
export interface ShellBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  mode: "run" | "parse-only";
  exit: number;
}

/** Every fenced block whose info string is `sh`. */
export function shellBlocks(file: string, text = readDoc(file)): ShellBlock[] {
  const lines = text.split("\n");
  const out: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    const end = lines.findIndex((l, j) => j > i && l.startsWith(fence) && l.trim() === fence);
    const close = end < 0 ? lines.length : end;
    if (open[2] === "sh") {
      const before =
        lines
          .slice(0, i)
          .reverse()
          .find((l) => l.trim() !== "") ?? "";
      const marker = /<!--\s*doc-test:\s*([^>]*?)\s*-->/.exec(before)?.[1] ?? "";
      const exit = /^exit\s+(\d+)$/.exec(marker);
      if (marker && marker !== "parse-only" && !exit)
        throw new Error(`${file}:${i}: unknown doc-test marker "${marker}"`);
      out.push({
        file,
        line: i + 1,
        text: lines.slice(i + 1, close).join("\n"),
        mode: marker === "parse-only" ? "parse-only" : "run",
        exit: exit ? Number(exit[1]) : 0,
      });
    }
    i = close;
  }
  return out;
}

/** The text outside fenced blocks (prose, tables, inline code). */
export function prose(text: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of text.split("\n")) {
    const m = /^(`{3,})/.exec(line);
    if (fence) {
      if (m && line.trim() === fence) fence = undefined;
      continue;
    }
    if (m) {
      fence = m[1];
      continue;
    }
    out.push(line);
  }
  return out.join("\n");
}

/** The anchors GitHub gives a page's headings (duplicates get -1, -2, …). */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text).split("\n")) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const slug = h[1]!
      .replace(/<[^>]+>/g, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

/** Markdown link and image targets in prose: `[text](target)`. */
export function linkTargets(text: string): string[] {
  const body = prose(text).replace(/`[^`\n]*`/g, "");
  return [...body.matchAll(/!?\[[^\]\n]*\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** Inline code spans in prose. */
export function codeSpans(text: string): string[] {
  return [...prose(text).matchAll(/(`+)([^`\n]+?)\1/g)].map((m) => m[2]!.trim());
}

/**
 * Split shell text into simple commands (argv arrays): quotes, backslash escapes and line
 * continuations, `#` comments, the operators && || | ; & and heredoc bodies (skipped).
 */
export function shellCommands(text: string): string[][] {
  const commands: string[][] = [];
  let argv: string[] = [];
  let word: string | undefined;
  const heredocs: string[] = [];
  const flushWord = () => {
    if (word !== undefined) argv.push(word);
    word = undefined;
  };
  const flushCommand = () => {
    flushWord();
    if (argv.length) commands.push(argv);
    argv = [];
  };
  const lines = text.split("\n");
  for (let li = 0; li < lines.length; li++) {
    const line = lines[li]!;
    let i = 0;
    while (i < line.length) {
      const c = line[i]!;
      if (c === "\\" && i === line.length - 1) {
        i++;
        continue;
      }
      if (c === "\\") {
        word = (word ?? "") + line[i + 1];
        i += 2;
      } else if (c === "'") {
        const end = line.indexOf("'", i + 1);
        word = (word ?? "") + line.slice(i + 1, end < 0 ? line.length : end);
        i = end < 0 ? line.length : end + 1;
      } else if (c === '"') {
        let j = i + 1;
        let s = "";
        while (j < line.length && line[j] !== '"') {
          if (line[j] === "\\" && j + 1 < line.length) j++;
          s += line[j];
          j++;
        }
        word = (word ?? "") + s;
        i = j + 1;
      } else if (c === "#" && word === undefined) {
        break;
      } else if (/\s/.test(c)) {
        flushWord();
        i++;
      } else if (line.startsWith("<<", i)) {
        flushWord();
        const m = /^<<-?\s*['"]?(\w+)['"]?/.exec(line.slice(i));
        if (m) heredocs.push(m[1]!);
        i += m ? m[0].length : 2;
      } else if (/[;&|]/.test(c)) {
        flushCommand();
        i += line.startsWith("&&", i) || line.startsWith("||", i) ? 2 : 1;
      } else if (/[<>]/.test(c)) {
        // Redirections: drop the operator and its target word.
        flushWord();
        i += line[i + 1] === ">" || line[i + 1] === "&" ? 2 : 1;
        while (i < line.length && /\s/.test(line[i]!)) i++;
        while (i < line.length && !/[\s;&|]/.test(line[i]!)) i++;
      } else {
        word = (word ?? "") + c;
        i++;
      }
    }
    if (line.endsWith("\\") && !line.endsWith("\\\\")) continue;
    flushCommand();
    for (const tag of heredocs.splice(0)) {
      while (li + 1 < lines.length && lines[li + 1]!.trim() !== tag) li++;
      li++;
    }
  }
  flushCommand();
  return commands;
}

/** The skillopt argv of a simple command, without `VAR=x` prefixes and the launcher (`npx skillopt`, a release binary). */
export function skilloptArgs(argv: readonly string[]): string[] | undefined {
  const start = argv.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
  const words = start < 0 ? [] : argv.slice(start);
  if (words[0] === "npx" && words[1] === "skillopt") return words.slice(2);
  if (words[0] === "skillopt" || /(^|\/)skillopt-[a-z0-9-]+(\.exe)?$/.test(words[0] ?? "")) return words.slice(1);
  if (words[0] === "bun" && words[1] === "src/main.ts") return words.slice(2);
  return undefined;
}

/**
 * Output quoted in a page, marked `<!-- doc-test: output -->` on the line before it: a plain fenced
 * block (each non-empty line is quoted output), or a paragraph or list (each inline code span in
 * it is quoted output). It quotes the output (stdout and stderr) of the page's last runnable ```sh
 * block above it. In a quote, `…` stands for any text within the line, and a run of spaces for any
 * (a table's column widths depend on the other rows).
 */
export interface OutputExcerpt {
  file: string;
  /** 1-based line of the marker. */
  line: number;
  /** 1-based line of the opening fence of the ```sh block whose output it quotes. */
  blockLine: number;
  /** A fenced quote's lines must appear in this order; a paragraph's spans each somewhere. */
  ordered: boolean;
  quotes: string[];
}

const OUTPUT_MARKER = /^\s*<!--\s*doc-test:\s*output\s*-->\s*$/;

export function outputExcerpts(file: string, text = readDoc(file)): OutputExcerpt[] {
  const runLines = shellBlocks(file, text)
    .filter((b) => b.mode === "run")
    .map((b) => b.line);
  const lines = text.split("\n");
  const out: OutputExcerpt[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!OUTPUT_MARKER.test(lines[i]!)) continue;
    const blockLine = runLines.filter((l) => l < i + 1).pop();
    if (blockLine === undefined)
      throw new Error(`${file}:${i + 1}: an output quote with no runnable sh block above it`);
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === "") j++;
    const fence = /^(`{3,})\s*(text)?\s*$/.exec(lines[j] ?? "");
    if (fence) {
      const end = lines.findIndex((l, k) => k > j && l.trim() === fence[1]);
      const body = lines.slice(j + 1, end < 0 ? lines.length : end);
      out.push({ file, line: i + 1, blockLine, ordered: true, quotes: body.filter((l) => l.trim() !== "") });
      continue;
    }
    let k = j;
    while (k < lines.length && lines[k]!.trim() !== "") k++;
    // A span may wrap onto the next line of a list item: read the paragraph as one line.
    const paragraph = lines
      .slice(j, k)
      .map((l) => l.trim())
      .join(" ");
    out.push({ file, line: i + 1, blockLine, ordered: false, quotes: codeSpans(paragraph) });
  }
  return out;
}

/** What differs between two runs of one command: how long it took, and how wide a table's columns are. */
function steady(s: string): string {
  return s
    .replace(/wall [\d.]+s/g, "wall Ns")
    .replace(/[ \t]+/g, " ")
    .trim();
}

/** Whether one output line holds the quote (`…` matching any text, pieces in order). */
function lineHolds(line: string, quote: string): boolean {
  let at = 0;
  for (const piece of steady(quote.trim())
    .split("…")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const found = steady(line).indexOf(piece, at);
    if (found < 0) return false;
    at = found + piece.length;
  }
  return true;
}

/** The quotes of an excerpt the output does not hold, each as a line for a failure message. */
export function missingQuotes(x: OutputExcerpt, output: string): string[] {
  const lines = output.split("\n");
  const missing: string[] = [];
  let from = 0;
  for (const q of x.quotes) {
    const idx = lines.findIndex((l, n) => n >= (x.ordered ? from : 0) && lineHolds(l, q));
    if (idx < 0)
      missing.push(`${x.file}:${x.line}: the output of the block at line ${x.blockLine} has no line with "${q}"`);
    else if (x.ordered) from = idx + 1;
  }
  return missing;
}
