/**
 * The YAML library, loaded on first use: loading it is 15-17 ms of CPU, about half of what a
 * training run's module graph costs to load, and a run on a shipped config with plain overrides
 * never needs it (its config is read by Bun's parser, written by plainYaml).
 */
export function yamlLibrary(): typeof import("yaml") {
  return require("yaml") as typeof import("yaml");
}

/**
 * A line with a space in its value longer than this is left to the library, which folds long
 * scalars at a space near column 80 (one without a space cannot be folded and is written whole).
 */
const MAX_LINE = 76;

/**
 * A string the YAML library writes as it is (a plain scalar): words of letters, digits and
 * `_ . / @ + - =` separated by single spaces, a colon only inside a word (`sim://local`, `2:1:7`),
 * starting with a letter, digit, underscore or slash (never an indicator).
 */
const WORD = "[\\w./@+=-]+(?::[\\w./@+=-]+)*";
const PLAIN = new RegExp(`^[\\w/](?:[\\w./@+=-]*(?::[\\w./@+=-]+)*)(?: ${WORD})*$`);
/**
 * What the core schema (YAML 1.2, the library's default) reads as a boolean, null or number: such
 * a string is written double-quoted (`"false"`, `"0.7"`); `off` and `yes` are plain in YAML 1.2.
 */
const TYPED = [
  /^(?:true|True|TRUE|false|False|FALSE|null|Null|NULL|~)$/,
  /^[-+]?[0-9]+$/,
  /^0o[0-7]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
/** The characters a typed-looking string may have to be written as `"<it>"` with nothing escaped. */
const QUOTABLE = /^[\w.+~-]*$/;

/** A string as the library writes it, or undefined when it would write it some other way. */
function stringScalar(s: string): string | undefined {
  if (s === "" || TYPED.some((re) => re.test(s))) return QUOTABLE.test(s) ? `"${s}"` : undefined;
  return PLAIN.test(s) ? s : undefined;
}

/** A scalar as the YAML library writes it, or undefined when it would write it otherwise (quoted, folded). */
function scalar(v: unknown): string | undefined {
  if (v === null) return "null";
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") {
    const s = String(v);
    return Number.isFinite(v) && !Object.is(v, -0) && /^-?\d+(\.\d+)?$/.test(s) ? s : undefined;
  }
  if (typeof v === "string") return stringScalar(v);
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** The block lines of a mapping at `indent`, or false when some part is not plain. */
function mapping(obj: Record<string, unknown>, indent: string, out: string[]): boolean {
  for (const [key, value] of Object.entries(obj)) {
    // As the library does (keepUndefined off): a key without a value is not written.
    if (value === undefined) continue;
    const name = stringScalar(key);
    if (name === undefined || name !== key) return false;
    const head = `${indent}${name}:`;
    if (isPlainObject(value)) {
      if (Object.values(value).every((x) => x === undefined)) {
        out.push(`${head} {}`);
        continue;
      }
      out.push(head);
      if (!mapping(value, `${indent}  `, out)) return false;
      continue;
    }
    if (Array.isArray(value)) {
      if (value.length === 0) {
        out.push(`${head} []`);
        continue;
      }
      out.push(head);
      for (const item of value) {
        const s = scalar(item);
        if (s === undefined || (s.includes(" ") && indent.length + 4 + s.length > MAX_LINE)) return false;
        out.push(`${indent}  - ${s}`);
      }
      continue;
    }
    const s = scalar(value);
    if (s === undefined || (s.includes(" ") && head.length + 1 + s.length > MAX_LINE)) return false;
    out.push(`${head} ${s}`);
  }
  return true;
}

/**
 * A mapping of plain data (nested mappings, lists of scalars, plain strings, and strings such as
 * "0.7" or "" that need only quotes) as `yaml`'s stringify writes it with its default options, or
 * undefined for anything else (a string it would escape, fold or quote otherwise, a list of
 * mappings, an empty document): then the library writes it. A run's config.resolved.yaml is
 * written this way. A test checks it against the library on every shipped config and odd values.
 */
export function plainYaml(value: unknown): string | undefined {
  if (!isPlainObject(value)) return undefined;
  const out: string[] = [];
  if (!mapping(value, "", out) || out.length === 0) return undefined;
  return `${out.join("\n")}\n`;
}
