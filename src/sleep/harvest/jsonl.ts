import { noFTL } from "bun:jsc";

/**
 * A JSON string not decoded yet: long strings (tool outputs, file bodies) are located but only
 * decoded if a reader asks for them, which is what lets harvest skip what the miner never uses.
 */
export class RawString {
  constructor(
    private readonly buf: Buffer,
    /** First byte after the opening quote. */
    readonly start: number,
    /** Index of the closing quote. */
    readonly end: number,
    /** false = known to hold no escape; true = may hold one (checked when decoding). */
    private readonly mayEscape: boolean,
  ) {}
  get byteLength(): number {
    return this.end - this.start;
  }
  toJSON(): string {
    return this.text();
  }
  text(): string {
    if (!this.mayEscape && this.end - this.start <= TOKEN_MAX) return token(this.buf, this.start, this.end);
    if (!this.mayEscape || this.buf.subarray(this.start, this.end).indexOf(92) === -1) {
      return this.buf.toString("utf8", this.start, this.end);
    }
    return JSON.parse(this.buf.toString("utf8", this.start - 1, this.end + 1)) as string;
  }
}

/**
 * Short escape-free values (record types, roles, tool names) repeat on every line: each is decoded
 * once and then found again by its bytes.
 */
const TOKEN_MAX = 22;
const TOKEN_SLOTS = 1024;
const TOKENS: (string | undefined)[] = new Array(TOKEN_SLOTS).fill(undefined);

function token(buf: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len === 0) return "";
  const slot = (len * 0x9e5 + buf[start]! * 0x3b + buf[start + (len >> 1)]! * 7 + buf[end - 1]!) & (TOKEN_SLOTS - 1);
  const hit = TOKENS[slot];
  if (hit !== undefined && hit.length === len) {
    let k = 0;
    while (k < len && buf[start + k] === hit.charCodeAt(k)) k++;
    if (k === len) return hit;
  }
  const s = buf.toString("utf8", start, end);
  // Only ASCII is kept (a string's length then equals its byte count, which the check above needs).
  if (s.length === len) TOKENS[slot] = s;
  return s;
}

export type JsonValue = null | boolean | number | string | RawString | JsonValue[] | JsonObject;
export interface JsonObject {
  [key: string]: JsonValue | undefined;
}

/**
 * Value strings stay undecoded until asked for (most values — ids, uuids, versions, tool
 * outputs — are never read); object keys are always decoded (and interned).
 */
const LAZY_MIN = 0;

class Malformed extends Error {}
const MALFORMED = new Malformed("malformed JSON line");

/**
 * Says, before a key's value is parsed, that nothing from there to the end of the line is
 * needed: parsing stops and the object so far is returned (the big trailing values — tool
 * outputs, encrypted reasoning — are then never even scanned). `depth` 0 = the record's own keys.
 */
export type StopAt = (key: string, depth: number) => boolean;

class Stop extends Error {}
const STOP = new Stop("stop");

/**
 * Parse one JSON document in buf[start, end) without decoding long strings. Returns undefined for
 * malformed input. Objects have no prototype (a `__proto__` key is plain data).
 */
export function parseLine(buf: Buffer, start: number, end: number, stopAt?: StopAt): JsonValue | undefined {
  // A UTF-8 byte-order mark (Windows editors) before the first record.
  const from = buf[start] === 0xef && buf[start + 1] === 0xbb && buf[start + 2] === 0xbf ? start + 3 : start;
  if (REFERENCE) return referenceParse(buf, from, end);
  const s = new Scanner(buf, viewsOf(buf), from, end, stopAt);
  let root: JsonValue | undefined;
  try {
    s.ws();
    if (s.b[s.p] === 123) {
      const o: JsonObject = Object.create(null);
      root = o;
      s.fillObject(o, 0);
    } else root = s.value(0);
    s.ws();
    return s.p === end ? root : undefined;
  } catch (err) {
    if (err instanceof Stop) return root;
    if (err instanceof Malformed) return undefined;
    throw err;
  }
}

// Views over the same bytes: Uint8Array for byte access, Uint32Array (of the whole backing
// buffer, hence the offset) to look for quotes four bytes at a time.
interface Views {
  u8: Uint8Array;
  w32: Uint32Array;
  off: number;
}
let lastBuf: Buffer | undefined;
let lastViews: Views | undefined;
function viewsOf(buf: Buffer): Views {
  if (buf !== lastBuf || !lastViews) {
    lastBuf = buf;
    lastViews = {
      u8: new Uint8Array(buf.buffer, buf.byteOffset, buf.length),
      w32: new Uint32Array(buf.buffer, 0, buf.buffer.byteLength >>> 2),
      off: buf.byteOffset,
    };
  }
  return lastViews;
}

const KEYS = new Map<number, string>();

/** Bytes of a string scanned in JavaScript before its end is looked for natively (closeOf). */
const SCAN_BYTES_DEFAULT = 1024;
let SCAN_BYTES = SCAN_BYTES_DEFAULT;
let REFERENCE = false;

/**
 * Which way parseLine reads (for tests that compare them on the same input): "native" (the
 * default; long strings' ends found natively past `scanBytes`), "scan" (every byte looked at in
 * JavaScript), or "json" (the reference: JSON.parse of the whole line, every string decoded,
 * no stop).
 */
export function setParsePath(path: "native" | "scan" | "json", scanBytes = SCAN_BYTES_DEFAULT): void {
  SCAN_BYTES = path === "scan" ? Number.POSITIVE_INFINITY : Math.max(1, scanBytes);
  REFERENCE = path === "json";
}

function referenceParse(buf: Buffer, start: number, end: number): JsonValue | undefined {
  try {
    return JSON.parse(buf.toString("utf8", start, end)) as JsonValue;
  } catch {
    return undefined;
  }
}

const COMMA_QUOTE = Buffer.from(',"');
/** The other bytes a string opener can follow (`,` is searched first, apart). */
const OPENER_MARKS = [':"', '["', '{"', ' "', '\t"', '\r"', '\n"'].map((m) => Buffer.from(m));

/** First index of `needle` in buf[from, to), or -1. */
function indexIn(buf: Buffer, needle: Buffer, from: number, to: number): number {
  if (to - from < needle.length) return -1;
  const at = buf.subarray(from, to).indexOf(needle);
  return at === -1 ? -1 : from + at;
}

/** True when the quote at q follows an even run of backslashes (possibly none): it is not escaped. */
function evenRun(b: Uint8Array, q: number): boolean {
  let k = q - 1;
  while (b[k] === 92) k--;
  return (q - 1 - k) % 2 === 0;
}

function sameAscii(b: Uint8Array, start: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (b[start + k] !== s.charCodeAt(k)) return false;
  return true;
}

class Scanner {
  readonly b: Uint8Array;
  private readonly w32: Uint32Array;
  private readonly off: number;
  constructor(
    readonly buf: Buffer,
    views: Views,
    public p: number,
    readonly end: number,
    private readonly stopAt?: StopAt,
  ) {
    this.b = views.u8;
    this.w32 = views.w32;
    this.off = views.off;
  }

  /** Index of the next `"` in [i, end), or -1; scans a word at a time (SWAR "has byte" test). */
  private nextQuote(i: number, end: number): number {
    const b = this.b;
    const off = this.off;
    let a = i + off;
    while ((a & 3) !== 0) {
      const j = a - off;
      if (j >= end) return -1;
      if (b[j] === 34) return j;
      a++;
    }
    const w = this.w32;
    const wend = (end + off) >>> 2;
    for (let wi = a >>> 2; wi < wend; wi++) {
      const x = w[wi]! ^ 0x22222222;
      if (((x - 0x01010101) & ~x & 0x80808080) !== 0) {
        const base = (wi << 2) - off;
        for (let k = 0; k < 4; k++) if (b[base + k] === 34) return base + k;
      }
    }
    for (let j = Math.max(i, (wend << 2) - off); j < end; j++) if (b[j] === 34) return j;
    return -1;
  }

  ws(): void {
    const b = this.b;
    while (this.p < this.end) {
      const c = b[this.p]!;
      if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return;
      this.p++;
    }
  }

  value(depth: number): JsonValue {
    this.ws();
    if (this.p >= this.end) throw MALFORMED;
    const c = this.b[this.p]!;
    if (c === 123) {
      const o: JsonObject = Object.create(null);
      this.fillObject(o, depth);
      return o;
    }
    if (c === 91) return this.array(depth);
    if (c === 34) return this.string(false);
    if (c === 116) return this.literal("true", true);
    if (c === 102) return this.literal("false", false);
    if (c === 110) return this.literal("null", null);
    return this.number();
  }

  /** Parse an object into `out` (attached by the caller first, so a stop keeps what was read). */
  fillObject(out: JsonObject, depth: number): void {
    this.p++;
    this.ws();
    if (this.b[this.p] === 125) {
      this.p++;
      return;
    }
    const stopAt = this.stopAt;
    for (;;) {
      this.ws();
      if (this.b[this.p] !== 34) throw MALFORMED;
      const key = this.key();
      this.ws();
      if (this.b[this.p] !== 58) throw MALFORMED;
      this.p++;
      if (stopAt?.(key, depth)) throw STOP;
      this.ws();
      if (this.b[this.p] === 123) {
        const child: JsonObject = Object.create(null);
        out[key] = child;
        this.fillObject(child, depth + 1);
      } else out[key] = this.value(depth + 1);
      this.ws();
      const c = this.b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 125) return;
      throw MALFORMED;
    }
  }

  array(depth: number): JsonValue[] {
    const out: JsonValue[] = [];
    this.p++;
    this.ws();
    if (this.b[this.p] === 93) {
      this.p++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 93) return out;
      throw MALFORMED;
    }
  }

  /** An object key: short ASCII keys are interned (no native decode or allocation per record). */
  key(): string {
    const b = this.b;
    const start = this.p + 1;
    let h = 0;
    const limit = Math.min(this.end, start + 32);
    for (let i = start; i < limit; i++) {
      const c = b[i]!;
      if (c === 34) {
        const len = i - start;
        h = (h * 31 + len) | 0;
        const hit = KEYS.get(h);
        if (hit !== undefined && hit.length === len && sameAscii(b, start, hit)) {
          this.p = i + 1;
          return hit;
        }
        const k = this.string(true) as string;
        if (KEYS.size < 4096) KEYS.set(h, k);
        return k;
      }
      if (c === 92 || c > 127) break;
      h = (h * 31 + c) | 0;
    }
    return this.string(true) as string;
  }

  string(decode: boolean): string | RawString {
    const b = this.b;
    const start = this.p + 1;
    let i = start;
    let escaped = false;
    // Short strings: a byte loop is cheaper than a native search per string.
    const fastEnd = Math.min(this.end, start + 64);
    while (i < fastEnd) {
      const c = b[i]!;
      if (c === 34) return this.finishString(start, i, escaped, decode);
      if (c === 92) {
        escaped = true;
        i += 2;
        continue;
      }
      i++;
    }
    // Longer strings: jump from quote to quote a word at a time; a quote preceded by an odd run of
    // backslashes is escaped. Past SCAN_BYTES (tool outputs, file bodies) the end is found natively.
    const scanEnd = Math.min(this.end, start + SCAN_BYTES);
    for (;;) {
      const q = this.nextQuote(i, scanEnd);
      if (q === -1) break;
      if (evenRun(b, q)) return this.finishString(start, q, true, decode);
      i = q + 1;
    }
    if (scanEnd === this.end) throw MALFORMED;
    return this.finishString(start, this.closeOf(scanEnd - 1), true, decode);
  }

  /**
   * The closing quote of a string known to have no closing quote before `from` (the opener is
   * before it), found with native searches instead of a byte loop. In valid JSON every quote
   * inside a string is escaped, so it follows a backslash; a string opener always follows one of
   * `: , [ {` or whitespace. Hence the first quote after `from` that follows one of those bytes
   * (an "opener mark", at `next`) lies at or after the closing quote, and between the closing
   * quote and `next` there is no quote at all. So the closing quote is the last quote before
   * `next` when that quote is unescaped, and `next` itself otherwise (a string that ends in one
   * of those bytes, `"a,"`). With no opener mark left on the line, it is the line's last quote.
   * (A line that is not JSON, with a bare quote inside a long string, can read differently from
   * the byte loop, which rejects it at that quote; only a corrupted write leaves such a line.)
   */
  private closeOf(from: number): number {
    const buf = this.buf;
    const end = this.end;
    // `,"` first: it usually follows the string closely, and bounds the other searches.
    let next = indexIn(buf, COMMA_QUOTE, from, end);
    const bound = next === -1 ? end : next;
    for (const mark of OPENER_MARKS) {
      const at = indexIn(buf, mark, from, bound);
      if (at !== -1 && (next === -1 || at < next)) next = at;
    }
    if (next !== -1) {
      const q = next + 1;
      const last = buf.subarray(from, q).lastIndexOf(34);
      if (last !== -1 && from + last > this.p && evenRun(this.b, from + last)) return from + last;
      return q;
    }
    const last = buf.subarray(from, end).lastIndexOf(34);
    if (last !== -1 && from + last > this.p && evenRun(this.b, from + last)) return from + last;
    throw MALFORMED;
  }

  private finishString(start: number, close: number, maybeEscaped: boolean, decode: boolean): string | RawString {
    this.p = close + 1;
    if (!decode && close - start >= LAZY_MIN) return new RawString(this.buf, start, close, maybeEscaped);
    if (!maybeEscaped) return this.buf.toString("utf8", start, close);
    try {
      return JSON.parse(this.buf.toString("utf8", start - 1, close + 1)) as string;
    } catch {
      throw MALFORMED;
    }
  }

  literal<T>(word: string, v: T): T {
    for (let k = 0; k < word.length; k++) if (this.b[this.p + k] !== word.charCodeAt(k)) throw MALFORMED;
    this.p += word.length;
    return v;
  }

  number(): number {
    const b = this.b;
    const from = this.p;
    while (this.p < this.end) {
      const c = b[this.p]!;
      if ((c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69) this.p++;
      else break;
    }
    if (this.p === from) throw MALFORMED;
    const n = Number(this.buf.toString("latin1", from, this.p));
    if (Number.isNaN(n)) throw MALFORMED;
    return n;
  }
}

/** A string value, decoding a RawString; undefined for anything else. */
export function str(v: JsonValue | undefined): string | undefined {
  if (typeof v === "string") return v;
  if (v instanceof RawString) return v.text();
  return undefined;
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
 * reader never uses (`drop(key, parent)`) left out without decoding them.
 */
export function materialize(
  v: JsonValue | undefined,
  drop?: (key: string, parent: JsonObject) => boolean,
): JsonValue | undefined {
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
for (const f of [parseLine, token, evenRun, indexIn, sameAscii, str, obj, arr, RawString.prototype.text]) {
  noFTL(f as () => void);
}
