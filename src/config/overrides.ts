import type * as v from "valibot";
import { assertSafeKeyPath, ConfigError, yamlLibrary } from "../lib/index.ts";
import { CODEX_ALIASES, FLAT_TO_STRUCTURED } from "./flat-map.ts";
import { EnvSchema, SECTION_SCHEMAS, SECTIONS, type Section } from "./schema.ts";

/** One override, normalised to a structured path. */
export interface Override {
  path: string[];
  value: unknown;
  /** How the user wrote it, for error messages. */
  origin: string;
}

/** Upstream's --cfg-options casting: true|yes, false|no, int, float, else string. */
function castUpstream(raw: string): unknown {
  const lower = raw.toLowerCase();
  if (lower === "true" || lower === "yes") return true;
  if (lower === "false" || lower === "no") return false;
  if (/^[+-]?\d+$/.test(raw)) return Number.parseInt(raw, 10);
  if (/^[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?$/.test(raw) || /^[+-]?(inf|nan)$/i.test(raw)) {
    const n = Number(raw);
    if (!Number.isNaN(n)) return n;
  }
  return raw;
}

/**
 * A --set value the YAML library would read as this string or integer, read without it (a word
 * such as `sim` or `gpt-4o-mini`, a count such as `512`); undefined for anything else. Words the
 * core schema reads as booleans or null, and numbers with a sign, a dot or leading zeros, are left
 * to the library.
 */
function plainSetValue(raw: string): string | number | undefined {
  if (/^(?:0|[1-9]\d{0,14})$/.test(raw)) return Number(raw);
  if (/^[A-Za-z_][\w-]*$/.test(raw) && !/^(?:true|false|null)$/i.test(raw)) return raw;
  return undefined;
}

/** --set values read as YAML scalars/flow collections (so `[a, b]` is a list), then typed by the schema. */
function castSet(raw: string): unknown {
  const plain = plainSetValue(raw);
  if (plain !== undefined) return plain;
  try {
    return yamlLibrary().parse(raw) ?? (raw === "" ? "" : null);
  } catch {
    return raw;
  }
}

/** Map a key written without a section (`batch_size`, `env`, `edit_budget`) to its structured path. */
export function structuredPathOf(key: string): string[] | undefined {
  const mapped = Object.hasOwn(FLAT_TO_STRUCTURED, key) ? FLAT_TO_STRUCTURED[key] : undefined;
  if (mapped) return mapped.split(".");
  if (key === "backend") return ["model", "backend"];
  // Retired upstream option: routed to its old home so the loader can warn and drop it.
  if (key === "max_analyst_rounds") return ["gradient", "max_analyst_rounds"];
  if (Object.hasOwn(CODEX_ALIASES, key)) return ["model", CODEX_ALIASES[key]!];
  if (Object.hasOwn(EnvSchema.entries, key)) return ["env", key];
  return undefined;
}

function splitPath(key: string): string[] {
  const [section, ...rest] = key.split(".");
  if (!section || rest.length === 0) return [key];
  if (section === "model" && rest[0] === "pricing" && rest.length >= 3) {
    return ["model", "pricing", rest.slice(1, -1).join("."), rest[rest.length - 1]!];
  }
  const leaf = rest.join(".");
  if (section === "model" && Object.hasOwn(CODEX_ALIASES, leaf)) return ["model", CODEX_ALIASES[leaf]!];
  return [section, leaf];
}

/** Parse `--cfg-options k=v …` items. */
export function parseCfgOptions(items: readonly string[]): Override[] {
  return items.map((item) => {
    const eq = item.indexOf("=");
    if (eq <= 0)
      throw new ConfigError(`--cfg-options ${item}: expected key=value`, {
        data: { flag: "cfg-options", value: item },
      });
    const key = item.slice(0, eq);
    assertSafeKeyPath(key.split("."), "--cfg-options");
    const value = castUpstream(item.slice(eq + 1));
    const path = key.includes(".") ? splitPath(key) : (structuredPathOf(key) ?? [key]);
    return { path, value, origin: `--cfg-options ${item}` };
  });
}

/** Parse `--set section.key=value` items. */
export function parseSets(items: readonly string[]): Override[] {
  return items.map((item) => {
    const eq = item.indexOf("=");
    if (eq <= 0)
      throw new ConfigError(`--set ${item}: expected section.key=value`, { data: { flag: "set", value: item } });
    const key = item.slice(0, eq);
    assertSafeKeyPath(key.split("."), "--set");
    const path = key.includes(".") ? splitPath(key) : (structuredPathOf(key) ?? [key]);
    return { path, value: castSet(item.slice(eq + 1)), origin: `--set ${item}` };
  });
}

/** Upstream's legacy per-key flags (`--batch_size 8`): mapped keys to their section, the rest to env. */
export function parseLegacy(flags: Readonly<Record<string, string | boolean>>): Override[] {
  return Object.entries(flags).map(([flag, raw]) => {
    assertSafeKeyPath([flag], `--${flag}`);
    const path = structuredPathOf(flag) ?? ["env", flag];
    const value = typeof raw === "boolean" ? raw : castUpstream(raw);
    return { path, value, origin: `--${flag}` };
  });
}

type Kind = "string" | "number" | "boolean" | "null" | "array" | "object" | "other";

/** The value kind of each leaf schema type (wrappers and unions are walked through; anything else is "other"). */
const LEAF_KINDS = new Map<string, Kind>([
  ["string", "string"],
  ["picklist", "string"],
  ["number", "number"],
  ["boolean", "boolean"],
  ["null", "null"],
  ["array", "array"],
  ["object", "object"],
  ["strict_object", "object"],
  ["loose_object", "object"],
  ["record", "object"],
]);

function kindsOf(schema: v.GenericSchema | undefined): Set<Kind> {
  const out = new Set<Kind>();
  const visit = (s: unknown): void => {
    if (!s || typeof s !== "object") return;
    const node = s as { type?: string; wrapped?: unknown; options?: unknown[] };
    if (node.type === "optional" || node.type === "nullable" || node.type === "nullish") {
      if (node.type !== "optional") out.add("null");
      visit(node.wrapped);
    } else if (node.type === "union") {
      for (const o of node.options ?? []) visit(o);
    } else {
      out.add(LEAF_KINDS.get(node.type ?? "") ?? "other");
    }
  };
  visit(schema);
  return out;
}

/** Give an override value the type its key expects, where the text allows it ("8" → 8, 5 → "5"). */
export function coerceToSchema(path: readonly string[], value: unknown): unknown {
  const [section, key] = path;
  if (!section || !key || !SECTIONS.includes(section as Section)) return value;
  const entries = SECTION_SCHEMAS[section as Section].entries as Record<string, v.GenericSchema>;
  const kinds = kindsOf(entries[key]);
  if (kinds.size === 0 || path.length > 2) return value;
  if (value === null && !kinds.has("null") && kinds.has("string")) return "null";
  if (
    (typeof value === "number" || typeof value === "boolean") &&
    !kinds.has(typeof value as Kind) &&
    kinds.has("string")
  ) {
    return String(value);
  }
  if (typeof value === "string" && !kinds.has("string")) {
    if (kinds.has("number") && value.trim() !== "" && !Number.isNaN(Number(value))) return Number(value);
    if (kinds.has("boolean") && /^(true|yes|1|on)$/i.test(value)) return true;
    if (kinds.has("boolean") && /^(false|no|0|off)$/i.test(value)) return false;
    if (kinds.has("null") && /^(null|none|~)$/i.test(value)) return null;
  }
  if (typeof value === "string" && kinds.has("array") && !kinds.has("string")) {
    return value
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
  }
  return value;
}
