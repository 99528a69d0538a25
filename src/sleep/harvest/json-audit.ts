import type { ShapeSpec } from "./json-shape.ts";
import type { JsonValue } from "./json-value.ts";

const misses = new Set<string>();
/** Each audited record's whole value and shape, for materialize (see auditedRecord). */
const AUDITED = new WeakMap<object, { whole: JsonValue; spec: ShapeSpec }>();

/** The whole value and shape behind an audited record (undefined for anything else). */
export function auditedRecord(v: unknown): { whole: JsonValue; spec: ShapeSpec } | undefined {
  return v !== null && typeof v === "object" ? AUDITED.get(v) : undefined;
}

/** The reads of undeclared members seen since the last call (paths like `message.content[].name`). */
export function takeAuditMisses(): string[] {
  const out = [...misses].sort();
  misses.clear();
  return out;
}

/**
 * A whole record seen through its shape: reading, testing (`in`) or listing a member the shape
 * does not declare (or a `"stop"` member) is noted as a miss, and the real value is returned so
 * the reader carries on. Tests run every reader this way to prove its shape is complete.
 */
export function auditRecord(v: JsonValue | undefined, shape: ShapeSpec): JsonValue | undefined {
  const watched = watch(v, shape, "");
  if (v !== undefined && watched !== null && typeof watched === "object")
    AUDITED.set(watched, { whole: v, spec: shape });
  return watched;
}

function watch(v: JsonValue | undefined, shape: ShapeSpec | "keys", path: string): JsonValue | undefined {
  if (v === null || typeof v !== "object" || !(Array.isArray(v) || Object.getPrototypeOf(v) === null)) return v;
  if (Array.isArray(v)) {
    return new Proxy(v, {
      get(target, key, receiver) {
        const got = Reflect.get(target, key, receiver) as JsonValue | undefined;
        return typeof key === "string" && /^\d+$/.test(key) ? watch(got, shape, `${path}[]`) : got;
      },
    });
  }
  const at = (key: string) => (path ? `${path}.${key}` : key);
  const declared = (key: string | symbol): ShapeSpec[string] | undefined => {
    if (typeof key !== "string") return undefined;
    const m = shape === "keys" ? undefined : Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (m === undefined || m === "stop") misses.add(at(key));
    return m;
  };
  return new Proxy(v, {
    get(target, key, receiver) {
      const got = Reflect.get(target, key, receiver) as JsonValue | undefined;
      const m = declared(key);
      return m === undefined || m === true || m === "stop" ? got : watch(got, m, at(key as string));
    },
    has(target, key) {
      declared(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      if (shape !== "keys") misses.add(`${path}.*`);
      return Reflect.ownKeys(target);
    },
  });
}
