import { ConfigError } from "./errors.ts";

/** Key names that reach an object's prototype when used as a property name. Never valid in a config. */
const RESERVED_KEY_NAMES: readonly string[] = ["__proto__", "constructor", "prototype"];

const RESERVED = new Set(RESERVED_KEY_NAMES);

/** True when `name` is one of the prototype-reaching key names. */
export function isReservedKey(name: string): boolean {
  return RESERVED.has(name);
}

/** The first reserved segment of a key path, or undefined. */
function reservedSegment(path: readonly string[]): string | undefined {
  return path.find((seg) => RESERVED.has(seg));
}

/**
 * Refuse a key path with a prototype-reaching segment: one config error (exit 2) that names where it
 * was written and the whole key path.
 */
export function assertSafeKeyPath(path: readonly string[], where: string): void {
  const bad = reservedSegment(path);
  if (bad === undefined) return;
  throw new ConfigError(
    `${where}: ${path.join(".")}: "${bad}" is not allowed as a key (reserved: ${RESERVED_KEY_NAMES.join(", ")})`,
    {
      issues: [{ path: path.join("."), message: "reserved key name" }],
    },
  );
}

/**
 * Walk parsed data (own keys only, at every depth, inside lists too) and refuse the first reserved key.
 * `whereOf` turns a key path into a location (`file:line:col`) for the message.
 */
export function assertSafeTree(
  value: unknown,
  whereOf: (path: readonly string[]) => string,
  prefix: readonly string[] = [],
): void {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      assertSafeTree(item, whereOf, [...prefix, String(i)]);
    });
    return;
  }
  if (!value || typeof value !== "object") return;
  if (value instanceof Map) {
    for (const [k, v] of value) {
      const path = [...prefix, String(k)];
      assertSafeKeyPath(path, whereOf(path));
      assertSafeTree(v, whereOf, path);
    }
    return;
  }
  for (const k of Object.keys(value)) {
    const path = [...prefix, k];
    assertSafeKeyPath(path, whereOf(path));
    assertSafeTree((value as Record<string, unknown>)[k], whereOf, path);
  }
}

/** An empty object with no prototype: assigning any key, `__proto__` included, makes an own property. */
export function nullProtoRecord<T = unknown>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
