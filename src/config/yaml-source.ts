import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { assertSafeKeyPath, assertSafeTree, ConfigError, readInputText } from "../lib/index.ts";

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

function collectPositions(
  node: Node | null,
  prefix: string,
  out: Map<string, Position>,
  lc: LineCounter,
  file: string,
): void {
  if (!node) return;
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
