import { noFTL } from "bun:jsc";
import { NESTED, type ShapeNode, type Slot, STOP_HERE, WHOLE } from "./json-shape.ts";
import { type JsonObject, type JsonValue, RawString, token } from "./json-value.ts";

export class Malformed extends Error {}
export const MALFORMED = new Malformed("malformed JSON line");

// Views over the same bytes: Uint8Array for byte access, Uint32Array (of the whole backing
// buffer, hence the offset) to look for quotes four bytes at a time.
let lastBuf: Buffer | undefined;
let u8: Uint8Array = new Uint8Array(0);
let w32: Uint32Array = new Uint32Array(0);
let off = 0;
function setViews(buf: Buffer): void {
  if (buf === lastBuf) return;
  lastBuf = buf;
  u8 = new Uint8Array(buf.buffer, buf.byteOffset, buf.length);
  w32 = new Uint32Array(buf.buffer, 0, buf.buffer.byteLength >>> 2);
  off = buf.byteOffset;
}

noFTL(setViews);

/** Drop the views of the last buffer read, so a read buffer grown for one huge line can be freed. */
export function releaseViews(s: Scanner): void {
  lastBuf = undefined;
  u8 = new Uint8Array(0);
  w32 = new Uint32Array(0);
  off = 0;
  s.buf = Buffer.alloc(0);
  s.b = u8;
}

const KEYS = new Map<number, string>();
/** Declared strings up to this many bytes, escape-free, are decoded as they are read. */
const WANTED_EAGER = 64;

/** Bytes of a string scanned in JavaScript before its end is looked for natively (closeOf). */
export const SCAN_BYTES_DEFAULT = 1024;
let SCAN_BYTES = SCAN_BYTES_DEFAULT;
/** The same for a string that is skipped: its end is looked for natively sooner (no escape to note). */
const SKIP_SCAN = 64;
export function setScanBytes(n: number): void {
  SCAN_BYTES = n;
}

const COMMA_QUOTE = Buffer.from(',"');
/** The other bytes a string opener can follow (`,` is searched first, apart). */
const OPENER_MARKS = [':"', '["', '{"', ' "', '\t"', '\r"', '\n"'].map((m) => Buffer.from(m));

/** True when the quote at q follows an even run of backslashes (possibly none): it is not escaped. */
export function evenRun(b: Uint8Array, q: number): boolean {
  let k = q - 1;
  while (b[k] === 92) k--;
  return (q - 1 - k) % 2 === 0;
}

export function sameAscii(b: Uint8Array, start: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (b[start + k] !== s.charCodeAt(k)) return false;
  return true;
}

/**
 * One JSON document's reader. A single instance is reused for every line (parseLine is not
 * re-entrant: nothing calls back into it while it runs).
 */
export class Scanner {
  buf: Buffer = Buffer.alloc(0);
  b: Uint8Array = u8;
  p = 0;
  end = 0;
  /**
   * A "stop" member was reached: every shaped read returns at once, leaving what was attached so
   * far (a flag, not an exception: unwinding through optimised frames on one line in three cost
   * more than the rest of the line).
   */
  stopped = false;

  reset(buf: Buffer, p: number, end: number): void {
    setViews(buf);
    this.buf = buf;
    this.b = u8;
    this.p = p;
    this.end = end;
    this.stopped = false;
  }

  /** Index of the next `"` in [i, end), or -1; scans a word at a time (SWAR "has byte" test). */
  nextQuote(i: number, end: number): number {
    const b = this.b;
    let a = i + off;
    while ((a & 3) !== 0) {
      const j = a - off;
      if (j >= end) return -1;
      if (b[j] === 34) return j;
      a++;
    }
    const w = w32;
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

  value(): JsonValue {
    this.ws();
    if (this.p >= this.end) throw MALFORMED;
    const c = this.b[this.p]!;
    if (c === 123) {
      const o: JsonObject = Object.create(null);
      this.fillObject(o);
      return o;
    }
    if (c === 91) return this.array();
    if (c === 34) return this.string(false);
    if (c === 116) return this.literal("true", true);
    if (c === 102) return this.literal("false", false);
    if (c === 110) return this.literal("null", null);
    return this.number();
  }

  fillObject(out: JsonObject): void {
    this.p++;
    this.ws();
    if (this.b[this.p] === 125) {
      this.p++;
      return;
    }
    for (;;) {
      this.ws();
      if (this.b[this.p] !== 34) throw MALFORMED;
      const key = this.key();
      this.ws();
      if (this.b[this.p] !== 58) throw MALFORMED;
      this.p++;
      out[key] = this.value();
      this.ws();
      const c = this.b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 125) return;
      throw MALFORMED;
    }
  }

  array(): JsonValue[] {
    const out: JsonValue[] = [];
    this.p++;
    this.ws();
    if (this.b[this.p] === 93) {
      this.p++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.ws();
      const c = this.b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 93) return out;
      throw MALFORMED;
    }
  }

  /**
   * A value read through a shape node: an object keeps only the node's members, an array applies
   * the node to each element, anything else is read as it is. After a stop the value is partial
   * and the caller drops it.
   */
  shaped(node: ShapeNode): JsonValue {
    this.ws();
    const c = this.b[this.p];
    if (c === 123) {
      const o: JsonObject = Object.create(null);
      this.fillShaped(o, node);
      return o;
    }
    if (c === 91) {
      const out: JsonValue[] = [];
      this.p++;
      this.ws();
      if (this.b[this.p] === 93) {
        this.p++;
        return out;
      }
      for (;;) {
        const v = this.shaped(node);
        if (this.stopped) return out;
        out.push(v);
        this.ws();
        const d = this.b[this.p];
        this.p++;
        if (d === 44) continue;
        if (d === 93) return out;
        throw MALFORMED;
      }
    }
    return this.value();
  }

  /** An object's declared members into `out` (attached by the caller first, so a stop keeps what was read). */
  fillShaped(out: JsonObject, node: ShapeNode): void {
    // Whitespace checks are inlined: JSONL writers leave none, so each is one byte compare.
    const b = this.b;
    this.p++;
    if (b[this.p]! <= 32) this.ws();
    if (b[this.p] === 125) {
      this.p++;
      return;
    }
    for (;;) {
      if (b[this.p]! <= 32) this.ws();
      if (b[this.p] !== 34) throw MALFORMED;
      const slot = this.member(node);
      if (b[this.p]! <= 32) this.ws();
      if (b[this.p] !== 58) throw MALFORMED;
      this.p++;
      if (b[this.p]! <= 32) this.ws();
      if (slot === undefined) {
        if (b[this.p] === 34) this.p = this.stringEnd(this.p + 1) + 1;
        else this.skip();
      } else if (slot.kind === WHOLE) out[slot.name] = b[this.p] === 34 ? this.wanted() : this.value();
      else if (slot.kind === NESTED) {
        if (b[this.p] === 123) {
          const child: JsonObject = Object.create(null);
          out[slot.name] = child;
          this.fillShaped(child, slot.child!);
        } else {
          // An array (or a scalar) is attached only once read whole.
          const v = this.shaped(slot.child!);
          if (!this.stopped) out[slot.name] = v;
        }
        if (this.stopped) return;
      } else if (slot.kind === STOP_HERE) {
        this.stopped = true;
        return;
      } else out[slot.name] = this.keysOnly(); // KEYS_ONLY
      if (b[this.p]! <= 32) this.ws();
      const c = b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 125) return;
      throw MALFORMED;
    }
  }

  /**
   * A declared string value: a short one without escapes is decoded at once (no RawString; the
   * reader asked for it), anything else is left raw.
   */
  private wanted(): string | RawString {
    const b = this.b;
    const start = this.p + 1;
    const limit = Math.min(this.end, start + WANTED_EAGER);
    for (let i = start; i < limit; i++) {
      const c = b[i]!;
      if (c === 34) {
        this.p = i + 1;
        return token(this.buf, start, i);
      }
      if (c === 92) break;
    }
    return this.string(false);
  }

  /** An object's keys, each with the value null (the values are skipped); any other value as it is. */
  private keysOnly(): JsonValue {
    if (this.b[this.p] !== 123) return this.value();
    const out: JsonObject = Object.create(null);
    this.p++;
    this.ws();
    if (this.b[this.p] === 125) {
      this.p++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.b[this.p] !== 34) throw MALFORMED;
      const key = this.key();
      this.ws();
      if (this.b[this.p] !== 58) throw MALFORMED;
      this.p++;
      this.ws();
      this.skip();
      out[key] = null;
      this.ws();
      const c = this.b[this.p];
      this.p++;
      if (c === 44) continue;
      if (c === 125) return out;
      throw MALFORMED;
    }
  }

  /**
   * The node's slot for the key at p (undefined when not declared), leaving p after the key's
   * closing quote. Plain ASCII keys are matched by their bytes; a key with an escape or a
   * non-ASCII byte is decoded first (JSON.parse reads `"t\u0079pe"` as "type").
   */
  private member(node: ShapeNode): Slot | undefined {
    const b = this.b;
    const start = this.p + 1;
    let h = 0;
    for (let i = start; i < this.end; i++) {
      const c = b[i]!;
      if (c === 34) {
        const len = i - start;
        this.p = i + 1;
        h = (h * 31 + len) | 0;
        const slot = node.table[h & node.mask];
        return slot !== undefined && slot.hash === h && slot.name.length === len && sameAscii(b, start, slot.name)
          ? slot
          : undefined;
      }
      if (c === 92 || c > 127) break;
      h = (h * 31 + c) | 0;
    }
    return node.byName.get(this.string(true) as string);
  }

  /** Step over one value, checking it is JSON, without decoding or allocating anything. */
  skip(): void {
    const b = this.b;
    const c = b[this.p];
    if (c === 34) {
      this.p = this.stringEnd(this.p + 1) + 1;
      return;
    }
    if (c === 123 || c === 91) {
      const close = c === 123 ? 125 : 93;
      this.p++;
      this.ws();
      if (b[this.p] === close) {
        this.p++;
        return;
      }
      for (;;) {
        this.ws();
        if (c === 123) {
          if (b[this.p] !== 34) throw MALFORMED;
          this.p = this.stringEnd(this.p + 1) + 1;
          this.ws();
          if (b[this.p] !== 58) throw MALFORMED;
          this.p++;
          this.ws();
        }
        this.skip();
        this.ws();
        const d = b[this.p];
        this.p++;
        if (d === 44) continue;
        if (d === close) return;
        throw MALFORMED;
      }
    }
    if (c === 116) this.literal("true", true);
    else if (c === 102) this.literal("false", false);
    else if (c === 110) this.literal("null", null);
    else this.skipNumber();
  }

  /** Step over a number as JSON writes one: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
  private skipNumber(): void {
    const b = this.b;
    const end = this.end;
    let i = this.p;
    if (i < end && b[i] === 45) i++;
    if (i < end && b[i] === 48) i++;
    else if (i < end && b[i]! >= 49 && b[i]! <= 57) i = this.digits(i + 1);
    else throw MALFORMED;
    if (i < end && b[i] === 46) {
      const from = i + 1;
      i = this.digits(from);
      if (i === from) throw MALFORMED;
    }
    if (i < end && (b[i] === 101 || b[i] === 69)) {
      i++;
      if (i < end && (b[i] === 43 || b[i] === 45)) i++;
      const from = i;
      i = this.digits(from);
      if (i === from) throw MALFORMED;
    }
    this.p = i;
  }

  private digits(i: number): number {
    const b = this.b;
    while (i < this.end && b[i]! >= 48 && b[i]! <= 57) i++;
    return i;
  }

  /** The closing quote of the string whose first byte is at `start`. */
  private stringEnd(start: number): number {
    const b = this.b;
    const scanEnd = Math.min(this.end, start + Math.min(SKIP_SCAN, SCAN_BYTES));
    let i = start;
    const byteEnd = Math.min(scanEnd, start + 64);
    while (i < byteEnd) {
      const c = b[i]!;
      if (c === 34) return i;
      i += c === 92 ? 2 : 1;
    }
    for (;;) {
      const q = this.nextQuote(i, scanEnd);
      if (q === -1) break;
      if (evenRun(b, q)) return q;
      i = q + 1;
    }
    if (scanEnd === this.end) throw MALFORMED;
    return this.closeOf(scanEnd - 1, start);
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
    return this.finishString(start, this.closeOf(scanEnd - 1, start), true, decode);
  }

  /**
   * The closing quote of a string that opened before `start` and has no closing quote before
   * `from`, found with native searches instead of a byte loop. In valid JSON every quote
   * inside a string is escaped, so it follows a backslash; a string opener always follows one of
   * `: , [ {` or whitespace. Hence the first quote after `from` that follows one of those bytes
   * (an "opener mark", at `next`) lies at or after the closing quote, and between the closing
   * quote and `next` there is no quote at all. So the closing quote is the last quote before
   * `next` when that quote is unescaped, and `next` itself otherwise (a string that ends in one
   * of those bytes, `"a,"`). With no opener mark left on the line, it is the line's last quote.
   * (A line that is not JSON, with a bare quote inside a long string, can read differently from
   * the byte loop, which rejects it at that quote; only a corrupted write leaves such a line.)
   */
  private closeOf(from: number, start: number): number {
    const buf = this.buf;
    const end = this.end;
    // `,"` first, searched without a bound (it usually follows the string closely, and some line
    // after this one has one); it bounds the other searches, made in one view of that span.
    let next = buf.indexOf(COMMA_QUOTE, from);
    if (next + 2 > end) next = -1;
    const bound = next === -1 ? end : next;
    if (bound - from >= 2) {
      const span = buf.subarray(from, bound);
      for (const mark of OPENER_MARKS) {
        const at = span.indexOf(mark);
        if (at !== -1 && (next === -1 || from + at < next)) next = from + at;
      }
    }
    // The nearest quote before the mark (or the line's end). Between the opener and `from` there
    // is no unescaped quote, so a quote found before `from` reads as escaped, as it should.
    const q = next === -1 ? end : next + 1;
    const last = buf.lastIndexOf(34, q - 1);
    if (last >= start && evenRun(this.b, last)) return last;
    if (next !== -1) return q;
    throw MALFORMED;
  }

  private finishString(start: number, close: number, maybeEscaped: boolean, decode: boolean): string | RawString {
    this.p = close + 1;
    if (!decode) return new RawString(this.buf, start, close, maybeEscaped);
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
