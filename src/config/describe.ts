import type * as v from "valibot";

/** What the documentation says about one leaf of a config schema, read from the schema itself. */
export interface KeyShape {
  /** Plain-words type: `integer ≥ 1`, `number in [0, 1]`, `string or null`, `one of …`. */
  type: string;
  /** The default as YAML would write it, or undefined when the key has none. */
  default: string | undefined;
  /** The accepted values of a closed set, in the schema's order. */
  allowed: readonly string[];
  /** The schema's description: the meaning, then an optional `DL: …` analogy. */
  meaning: string;
  /** The deep-learning analogy, when the description carries one. */
  analogy: string;
}

type Node = {
  type: string;
  kind?: string;
  pipe?: readonly Node[];
  wrapped?: Node;
  options?: readonly unknown[];
  item?: Node;
  value?: Node;
  requirement?: unknown;
  description?: string;
  default?: unknown;
  entries?: Record<string, Node>;
};

/** The marker that separates a key's meaning from its deep-learning analogy in a description. */
const ANALOGY_MARK = " DL: ";

/** Describe one entry of a valibot object schema. */
export function describeKey(schema: v.GenericSchema): KeyShape {
  const node = schema as unknown as Node;
  const description = findDescription(node);
  const at = description.indexOf(ANALOGY_MARK);
  const hasDefault = node.type === "optional" && node.default !== undefined;
  return {
    type: typeOf(node),
    default: hasDefault
      ? renderValue(typeof node.default === "function" ? (node.default as () => unknown)() : node.default)
      : undefined,
    allowed: allowedOf(node),
    meaning: (at >= 0 ? description.slice(0, at) : description).trim(),
    analogy: at >= 0 ? description.slice(at + ANALOGY_MARK.length).trim() : "",
  };
}

/** The entries of a nested object key (a sub-section), or undefined for a leaf. */
export function nestedEntries(schema: v.GenericSchema): Record<string, v.GenericSchema> | undefined {
  const base = baseOf(schema as unknown as Node);
  if (!["object", "strict_object", "loose_object"].includes(base.type)) return undefined;
  return base.entries as unknown as Record<string, v.GenericSchema>;
}

/** A value as it is written in a YAML config (strings quoted only when they would not read back). */
function renderValue(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string")
    return value === "" || /^[\d.+-]|^(true|false|null|yes|no|~)$|[:#,[\]{}]/i.test(value)
      ? JSON.stringify(value)
      : value;
  if (Array.isArray(value)) return `[${value.map(renderValue).join(", ")}]`;
  if (typeof value === "object") return Object.keys(value as object).length === 0 ? "{}" : JSON.stringify(value);
  return String(value);
}

function findDescription(node: Node | undefined): string {
  if (!node) return "";
  for (const p of node.pipe ?? [])
    if (p.type === "description" && typeof p.description === "string") return p.description;
  for (const p of node.pipe ?? []) {
    const inner = p.kind === "schema" && p !== node ? findDescription(p) : "";
    if (inner) return inner;
  }
  return node.wrapped ? findDescription(node.wrapped) : "";
}

function allowedOf(node: Node): readonly string[] {
  const base = baseOf(node);
  if (base.type === "picklist") return (base.options ?? []).map(String);
  if (base.type === "union") return (base.options as Node[]).flatMap((o) => allowedOf(o));
  return [];
}

/** The schema under optional/nullable wrappers and at the head of a pipe. */
function baseOf(node: Node): Node {
  if (node.type === "optional" || node.type === "nullable") return baseOf(node.wrapped!);
  if (node.pipe?.[0] && node.pipe[0] !== node) return baseOf(node.pipe[0]);
  return node;
}

function typeOf(node: Node): string {
  if (node.type === "optional") return typeOf(node.wrapped!);
  if (node.type === "nullable") return `${typeOf(node.wrapped!)} or null`;
  const head = node.pipe?.[0] && node.pipe[0] !== node ? node.pipe[0] : node;
  const checks = node.pipe && head !== node ? node.pipe.slice(1) : [];
  const inner = head !== node ? typeOf(head) : plainType(node);
  return refine(inner, checks);
}

function plainType(node: Node): string {
  switch (node.type) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "boolean";
    case "picklist":
      return "enum";
    case "array":
      return `list of ${plural(typeOf(node.item!))}`;
    case "record":
      return `map of string → ${typeOf(node.value!)}`;
    case "object":
    case "strict_object":
    case "loose_object":
      return `{${Object.keys(node.entries ?? {}).join(", ")}}`;
    case "union": {
      const parts = [...new Set((node.options as Node[]).map((o) => typeOf(o)))];
      return parts.join(" or ");
    }
    case "unknown":
      return "any value";
    default:
      return node.type;
  }
}

function plural(type: string): string {
  if (type === "string") return "strings";
  if (type === "number") return "numbers";
  if (type.startsWith("string")) return `strings (${type.slice("string".length).trim()})`;
  return type;
}

function refine(type: string, checks: readonly Node[]): string {
  let out = type;
  let min: unknown;
  let max: unknown;
  for (const c of checks) {
    if (c.type === "integer" || c.type === "safe_integer") out = out.replace(/^number/, "integer");
    else if (c.type === "min_value") min = c.requirement;
    else if (c.type === "max_value") max = c.requirement;
    else if (c.type === "max_length" && out === "string") out = "string";
    else if (c.type === "regex" && out === "string") out = `string matching ${String(c.requirement)}`;
  }
  const finite = (x: unknown) => typeof x === "number" && Number.isFinite(x);
  if (finite(min) && finite(max)) return `${out} in [${min}, ${max}]`;
  if (finite(min)) return `${out} ≥ ${min}`;
  if (finite(max)) return `${out} ≤ ${max}`;
  return out;
}
