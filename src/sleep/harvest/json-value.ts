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
  /**
   * The value's first `max` bytes as they stand in the line (escapes not decoded), one character
   * per byte: cheap to keep and to decode later (decodeHead), when it is read at all. A Write's
   * content may be a megabyte; what it changed is in its first lines.
   */
  rawHead(max: number): string {
    return this.buf.toString("latin1", this.start, Math.min(this.end, this.start + max));
  }
}

/**
 * Short escape-free values (record types, roles, tool names) repeat on every line: each is decoded
 * once and then found again by its bytes.
 */
const TOKEN_MAX = 64;
const TOKEN_SLOTS = 1024;
const TOKENS: (string | undefined)[] = new Array(TOKEN_SLOTS).fill(undefined);

export function token(buf: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len === 0) return "";
  if (len > TOKEN_MAX) return buf.toString("utf8", start, end);
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
 * A JSON string's body cut after some byte (RawString.rawHead, one character per byte), decoded: a
 * cut inside an escape is moved back before it, one inside a character decodes to U+FFFD.
 */
export function decodeHead(rawHead: string): string {
  const raw = Buffer.from(rawHead, "latin1");
  if (raw.indexOf(92) === -1) return raw.toString("utf8");
  // The longest escape is `\uXXXX` (6 bytes): one of the last cuts parses.
  for (let cut = raw.length; cut >= 0 && cut > raw.length - 8; cut--) {
    try {
      return JSON.parse(`"${raw.toString("utf8", 0, cut)}"`) as string;
    } catch {
      // cut inside an escape: one byte earlier
    }
  }
  return "";
}
