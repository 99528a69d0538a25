import { noFTL } from "bun:jsc";
import { auditedRecord, auditRecord } from "./json-audit.ts";
import {
  evenRun,
  MALFORMED,
  Malformed,
  releaseViews,
  SCAN_BYTES_DEFAULT,
  Scanner,
  sameAscii,
  setScanBytes,
} from "./json-scanner.ts";
import { recordShape, type Shape, type ShapeSpec } from "./json-shape.ts";
import { decodeHead, type JsonObject, type JsonValue, RawString, token } from "./json-value.ts";

export { RawString, recordShape, type JsonObject, type JsonValue, type Shape, type ShapeSpec };

const scanner = new Scanner();
let PATH: "native" | "json" | "audit" = "native";

/**
 * Parse one JSON document in buf[start, end) without decoding long strings. Returns undefined for
 * malformed input. Objects have no prototype (a `__proto__` key is plain data). With a `shape`,
 * only the members it declares are built (see Shape); the rest of the record is checked as JSON
 * but never decoded, and a record cut short by a `"stop"` member is returned as read so far.
 */
/** Forget the last buffer parsed (the harvest's end: a buffer grown for one huge line can be freed). */
export function releaseParser(): void {
  releaseViews(scanner);
}

export function parseLine(buf: Buffer, start: number, end: number, shape?: Shape): JsonValue | undefined {
  // A UTF-8 byte-order mark (Windows editors) before the first record.
  const from = buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf ? start + 3 : start;
  if (PATH === "json") return referenceParse(buf, from, end);
  if (PATH === "audit") {
    const whole = parseWith(buf, from, end, undefined);
    return shape ? auditRecord(whole, shape.spec) : whole;
  }
  return parseWith(buf, from, end, shape);
}

function parseWith(buf: Buffer, from: number, end: number, shape: Shape | undefined): JsonValue | undefined {
  const s = scanner;
  s.reset(buf, from, end);
  let root: JsonValue | undefined;
  try {
    s.ws();
    // A record cut short by a stop member is what was read before it (a top-level array: nothing).
    if (s.b[s.p] === 123) {
      const o: JsonObject = Object.create(null);
      root = o;
      if (shape) s.fillShaped(o, shape.root);
      else s.fillObject(o);
      if (s.stopped) return o;
    } else {
      root = shape ? s.shaped(shape.root) : s.value();
      if (s.stopped) return undefined;
    }
    s.ws();
    if (s.p !== end) throw MALFORMED;
    return root;
  } catch (err) {
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}

/**
 * Which way parseLine reads (for tests that compare them on the same input): "native" (the
 * default; long strings' ends found natively past `scanBytes`), "scan" (every byte looked at in
 * JavaScript), "json" (the reference: JSON.parse of the whole line, every string decoded, shapes
 * ignored) or "audit" (every member built, and a shaped record reports each read of a member its
 * shape does not declare: see takeAuditMisses).
 */
export function setParsePath(path: "native" | "scan" | "json" | "audit", scanBytes = SCAN_BYTES_DEFAULT): void {
  setScanBytes(path === "scan" ? Number.POSITIVE_INFINITY : Math.max(1, scanBytes));
  PATH = path === "scan" ? "native" : path;
}

function referenceParse(buf: Buffer, start: number, end: number): JsonValue | undefined {
  try {
    return JSON.parse(buf.toString("utf8", start, end)) as JsonValue;
  } catch {
    return undefined;
  }
}

/** A string value, decoding a RawString; undefined for anything else. */
export function str(v: JsonValue | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof RawString) return v.text();
  return undefined;
}

/**
 * A string value's first `max` bytes as a function decoding them when called (a RawString's bytes
 * are copied now, decoded only if asked); undefined for anything else.
 */
export function strHead(v: JsonValue | undefined, max: number): (() => string) | undefined {
  if (v instanceof RawString) {
    const raw = v.rawHead(max);
    return () => decodeHead(raw);
  }
  if (typeof v !== "string") return undefined;
  const s = v.slice(0, max);
  return () => s;
}

/** An object value (not an array); undefined for anything else. */
export function obj(v: JsonValue | undefined): JsonObject | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof RawString) ? v : undefined;
}

/** An array value; undefined for anything else. */
export function arr(v: JsonValue | undefined): JsonValue[] | undefined {
  return Array.isArray(v) ? v : undefined;
}

/**
 * A plain copy of a parsed value that outlives the read buffer: RawStrings decoded, and keys the
 * reader never uses (`drop(key, parent)`) left out without decoding them. The copy of an audited
 * record is audited in turn (the reader reads the copy).
 */
export function materialize(
  v: JsonValue | undefined,
  drop?: (key: string, parent: JsonObject) => boolean,
): JsonValue | undefined {
  const audited = auditedRecord(v);
  if (audited) return auditRecord(materialize(audited.whole, drop), audited.spec);
  if (v instanceof RawString) return v.text();
  if (Array.isArray(v)) return v.map((x) => materialize(x, drop) ?? null);
  if (v !== null && typeof v === "object") {
    const out: JsonObject = Object.create(null);
    for (const k of Object.keys(v)) {
      if (drop?.(k, v)) continue;
      out[k] = materialize(v[k], drop);
    }
    return out;
  }
  return v;
}

/**
 * The parser stays out of JavaScriptCore's optimising FTL tier. A harvest is a fresh process
 * that parses for a fraction of a second: compiling these functions with FTL cost more than it
 * saved. Measured on `bun bench/harvest.ts`'s corpora (25 fresh processes each, idle machine),
 * median: 256 MB CPU 518 → 443 ms, wall unchanged, peak RSS −11 MB; 32 MB wall 116 → 94 ms, CPU
 * 187 → 146 ms. A long-lived process that harvests again and again loses a few per cent instead.
 */
for (const name of Object.getOwnPropertyNames(Scanner.prototype)) {
  const f = (Scanner.prototype as unknown as Record<string, unknown>)[name];
  if (name !== "constructor" && typeof f === "function") noFTL(f as () => void);
}
for (const f of [parseLine, parseWith, token, evenRun, sameAscii, str, obj, arr, RawString.prototype.text]) {
  noFTL(f as () => void);
}
