import type { LineCounter, Node } from "yaml";
import { assertSafeKeyPath, assertSafeTree, ConfigError, readInputText, yamlLibrary } from "../lib/index.ts";

export interface Position {
  line: number;
  col: number;
}

interface ParsedYaml {
  data: Record<string, unknown>;
  /** Position of every mapping key, by dot path. */
  positions: Map<string, Position>;
}

/**
 * Read a config file a user wrote (YAML, or JSON, which the YAML parser reads too) through the one
 * parser that keeps every key's line and column; `topLevel` says what the file must hold.
 */
export function readConfigFile(file: string, topLevel: string): ParsedYaml {
  const text = readInputText(file, "", (message, cause) => new ConfigError(message, { file, cause }));
  return parseYamlConfig(text, file, topLevel);
}

/** Parse one YAML config text, keeping the line and column of every key. */
export function parseYamlConfig(
  text: string,
  file: string,
  topLevel = "a mapping of sections (model:, train:, …)",
): ParsedYaml {
  const { LineCounter, parseDocument } = yamlLibrary();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
    const detail = err.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`${where}: YAML syntax error: ${detail}`, { file, line: pos?.line, col: pos?.col });
  }
  const positions = new Map<string, Position>();
  collectPositions(doc.contents as Node | null, "", positions, lineCounter, file);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    throw new ConfigError(`${file}: YAML cannot be expanded: ${detail}`, { file });
  }
  // The built value too (aliases and merge keys expand here); a reserved key anywhere is refused.
  assertSafeTree(data, (path) => {
    const pos = positions.get(path.join("."));
    return pos ? `${file}:${pos.line}:${pos.col}` : file;
  });
  if (data === null || data === undefined) return { data: {}, positions };
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ConfigError(`${file}: expected ${topLevel} at the top level`, { file });
  }
  return { data: data as Record<string, unknown>, positions };
}

/** A line that is one block-mapping key (and maybe its value), as the configs we ship write them. */
const KEY_LINE = /^( *)([A-Za-z_][\w.-]*):(?:[ \t]|$)/;

/**
 * A config shipped with SkillOpt (src/config/bundled.ts), parsed by Bun's native YAML parser, its
 * keys' lines and columns read from their lines: the same result as parseYamlConfig, checked for
 * every shipped config by a test, without running the YAML library's parser cold (17-24 ms of a
 * training run's start for the two files a quickstart reads; 0.5 ms this way). Undefined when
 * the text is not a mapping written one key a line (lists of plain values allowed), or the keys read
 * from the lines are not the keys parsed (a block scalar, a list of mappings, a repeated key): then
 * parseYamlConfig reads it.
 */
export function parseShippedYaml(text: string, file: string): ParsedYaml | undefined {
  const positions = new Map<string, Position>();
  const open: { indent: number; key: string }[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const body = line.trim();
    // A list's item names no key (a list of mappings is refused below: its items are objects).
    if (body === "" || body.startsWith("#") || body === "-" || body.startsWith("- ")) continue;
    const m = KEY_LINE.exec(line);
    if (!m) return undefined;
    const indent = m[1]!.length;
    while (open.length && open[open.length - 1]!.indent >= indent) open.pop();
    const path = [...open.map((o) => o.key), m[2]!].join(".");
    if (positions.has(path)) return undefined;
    positions.set(path, { line: i + 1, col: indent + 1 });
    open.push({ indent, key: m[2]! });
  }
  let data: unknown;
  try {
    data = Bun.YAML.parse(text);
  } catch {
    return undefined;
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined;
  const parsed = new Set<string>();
  const walk = (v: unknown, prefix: string): boolean => {
    if (Array.isArray(v)) return v.every((item) => item === null || typeof item !== "object");
    if (v === null || typeof v !== "object") return true;
    return Object.entries(v).every(([k, item]) => {
      const path = prefix ? `${prefix}.${k}` : k;
      parsed.add(path);
      return walk(item, path);
    });
  };
  if (!walk(data, "") || parsed.size !== positions.size || [...parsed].some((p) => !positions.has(p))) return undefined;
  for (const [path, p] of positions) assertSafeKeyPath(path.split("."), `${file}:${p.line}:${p.col}`);
  return { data: data as Record<string, unknown>, positions };
}

function collectPositions(
  node: Node | null,
  prefix: string,
  out: Map<string, Position>,
  lc: LineCounter,
  file: string,
): void {
  if (!node) return;
  const { isMap, isScalar, isSeq } = yamlLibrary();
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const path = prefix ? `${prefix}.${key}` : key;
      const range = (pair.key as Node | null)?.range;
      const p = range ? lc.linePos(range[0]) : undefined;
      if (p) out.set(path, { line: p.line, col: p.col });
      // Every mapping key in the document, merge sources and anchors included, before anything builds objects.
      assertSafeKeyPath(path.split("."), p ? `${file}:${p.line}:${p.col}` : file);
      collectPositions(pair.value as Node | null, path, out, lc, file);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => {
      collectPositions(item as Node | null, `${prefix}.${i}`, out, lc, file);
    });
  }
}
