import * as v from "valibot";

/** Field builders: every leaf carries its default, its documentation and a plain-words expectation. */

/** Longest string value any key accepts; a longer one is a mistake (or an attack), not a setting. */
const MAX_STRING = 100_000;

export function str(def: string, doc: string) {
  return v.optional(
    v.pipe(
      v.string("expected a string"),
      v.maxLength(MAX_STRING, `expected a string of at most ${MAX_STRING} characters`),
      v.description(doc),
    ),
    def,
  );
}

export function bool(def: boolean, doc: string) {
  return v.optional(v.pipe(v.boolean("expected true or false"), v.description(doc)), def);
}

export function nullableBool(doc: string) {
  return v.optional(v.pipe(v.nullable(v.boolean("expected true, false or null")), v.description(doc)), null);
}

/** A whole number from `min` up, each failure worded `expect`. */
function whole(min: 0 | 1, expect: string) {
  return v.pipe(v.number(expect), v.safeInteger(expect), v.minValue(min, expect));
}

export function posInt(def: number, doc: string) {
  return v.optional(v.pipe(whole(1, "expected a positive integer"), v.description(doc)), def);
}

export function nonNegInt(def: number, doc: string) {
  return v.optional(v.pipe(whole(0, "expected a non-negative integer"), v.description(doc)), def);
}

export function nullableInt(doc: string) {
  return v.optional(v.pipe(v.nullable(whole(0, "expected a non-negative integer or null")), v.description(doc)), null);
}

export function nullablePosInt(doc: string, def: number | null = null) {
  return v.optional(v.pipe(v.nullable(whole(1, "expected a positive integer or null")), v.description(doc)), def);
}

export function num(def: number, doc: string, min?: number, max?: number) {
  const expect =
    min !== undefined && max !== undefined
      ? `expected a number from ${min} to ${max}`
      : min !== undefined
        ? `expected a number ≥ ${min}`
        : "expected a number";
  return v.optional(
    v.pipe(
      v.number(expect),
      v.minValue(min ?? Number.NEGATIVE_INFINITY, expect),
      v.maxValue(max ?? Number.POSITIVE_INFINITY, expect),
      v.description(doc),
    ),
    def,
  );
}

export function nullableNum(doc: string, min = 0) {
  const expect = `expected a number ≥ ${min} or null`;
  return v.optional(v.pipe(v.nullable(v.pipe(v.number(expect), v.minValue(min, expect))), v.description(doc)), null);
}

export function pick<const T extends readonly [string, ...string[]]>(options: T, def: T[number], doc: string) {
  return v.optional(
    v.pipe(
      v.picklist(options, `expected one of ${options.map((o) => JSON.stringify(o)).join(", ")}`),
      v.description(doc),
    ),
    def,
  );
}

/** Upstream keeps some numbers as strings ("0.7"); accept either and keep what was written. */
export function strOrNum(def: string, doc: string) {
  return v.optional(
    v.pipe(v.union([v.string(), v.number()], "expected a string or a number"), v.description(doc)),
    def,
  );
}

/** A list of strings, or one comma-separated string. */
export function strList(def: string[], doc: string) {
  return v.optional(
    v.pipe(
      v.union(
        [v.array(v.string("expected a string")), v.string()],
        "expected a list of strings or a comma-separated string",
      ),
      v.transform((x) =>
        typeof x === "string"
          ? x
              .split(",")
              .map((s) => s.trim())
              .filter(Boolean)
          : x,
      ),
      v.description(doc),
    ),
    def,
  );
}

function prefixed(prefix: string, entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).map(([k, val]) => [`${prefix}${k}`, val]));
}

/**
 * A family of per-role keys, three times: for both roles (no prefix), then `optimizer_…` and
 * `target_…`. `entries` words each copy's docs for its role (`who`; `envPrefix` is "", "OPTIMIZER_"
 * or "TARGET_").
 */
export function perRole<T extends Record<string, unknown>>(
  entries: (who: string, envPrefix: string) => T,
): { [K in keyof T & string as K | `optimizer_${K}` | `target_${K}`]: T[K] } {
  return {
    ...prefixed("", entries("both roles", "")),
    ...prefixed("optimizer_", entries("the optimizer", "OPTIMIZER_")),
    ...prefixed("target_", entries("the target", "TARGET_")),
  } as never;
}
