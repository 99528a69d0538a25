import { noFTL } from "bun:jsc";

type Hash = Bun.CryptoHasher;

/**
 * Bun's native hasher, not node:crypto's: the same digests (strings as UTF-8, a lone surrogate as
 * U+FFFD; a test checks them against node:crypto), a third less time per hash, and no node:crypto
 * module to load (3-4 ms with the stream classes it brings, in a run that needs nothing else of it).
 */
function createHash(algorithm: "sha256"): Hash {
  return new Bun.CryptoHasher(algorithm);
}

/** Hex sha256 of a string or bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Hex sha256 of the concatenation of `parts`, without building it (a simulator request key joins
 * a whole prompt). The same digest as `sha256(parts.join(""))`: where a part ending in a high
 * surrogate meets one starting with a low surrogate (a pair split across parts), they are joined.
 */
export function sha256Parts(parts: readonly string[]): string {
  const h = createHash("sha256");
  let carry = "";
  for (const part of parts) {
    let p = carry ? carry + part : part;
    carry = "";
    const last = p.charCodeAt(p.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      carry = p.slice(-1);
      p = p.slice(0, -1);
    }
    if (p) h.update(p);
  }
  if (carry) h.update(carry);
  return h.digest("hex");
}

/** A random name of `bytes` random bytes, URL-safe base64 (a token, a ledger's or a session's name). */
export function randomName(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64url");
}

/** JSON with object keys sorted recursively, so equal values hash equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/**
 * sha256 of the canonical JSON of a value, the same digest as `sha256(canonicalJson(value))`
 * without building that text: the JSON is fed to the hash as it is produced, and long strings
 * (a request's messages, up to hundreds of kilobytes) are escaped into a reused byte buffer. A
 * call's cache key is computed on every call; materializing the whole document made it the
 * largest allocation of a long run's step.
 */
export function hashJson(value: unknown): string {
  if (!isPlainContainer(value)) return sha256(canonicalJson(value));
  const feed = new CanonicalFeed(createHash("sha256"));
  feed.value(value);
  return feed.digest();
}

/** Arrays and plain objects are walked; anything else is serialized as canonicalJson would. */
function isPlainContainer(v: unknown): v is unknown[] | Record<string, unknown> {
  if (Array.isArray(v)) return true;
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== "function";
}

/** Strings at least this long are escaped into bytes instead of through JSON.stringify. */
const LONG_STRING = 1024;
/** Code units encoded per chunk of a long string (its UTF-8 takes at most 3 bytes per unit). */
const CHUNK_UNITS = 8192;
const utf8 = new TextEncoder();
// Reused across calls, made on first use: a chunk's UTF-8 and its JSON-escaped form (an escape is at most 6 bytes).
let raw: Uint8Array | undefined;
let escaped: Uint8Array | undefined;
const HEX = "0123456789abcdef";
const SHORT_ESCAPE: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 }; // \b \t \n \f \r

class CanonicalFeed {
  private pending = "";

  constructor(private readonly hash: Hash) {}

  digest(): string {
    this.flush();
    return this.hash.digest("hex");
  }

  private text(s: string): void {
    this.pending += s;
    if (this.pending.length >= 16_384) this.flush();
  }

  private flush(): void {
    if (this.pending) this.hash.update(this.pending);
    this.pending = "";
  }

  value(v: unknown): void {
    if (typeof v === "string") {
      this.string(v);
      return;
    }
    if (Array.isArray(v)) {
      this.text("[");
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.text(",");
        const item = v[i];
        // As JSON.stringify writes an array slot holding undefined, a function or a symbol.
        if (item === undefined || typeof item === "function" || typeof item === "symbol") this.text("null");
        else this.value(item);
      }
      this.text("]");
      return;
    }
    if (isPlainContainer(v)) {
      this.text("{");
      let first = true;
      const obj = v as Record<string, unknown>;
      for (const key of Object.keys(obj).sort()) {
        const item = obj[key];
        if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
        this.text(first ? `${JSON.stringify(key)}:` : `,${JSON.stringify(key)}:`);
        first = false;
        this.value(item);
      }
      this.text("}");
      return;
    }
    this.text(canonicalJson(v));
  }

  /** A string as JSON.stringify writes it: long ones escaped chunk by chunk into bytes. */
  private string(s: string): void {
    // A lone surrogate is written as a \u escape by JSON.stringify but replaced by TextEncoder.
    if (s.length < LONG_STRING || !s.isWellFormed()) {
      this.text(JSON.stringify(s));
      return;
    }
    raw ??= new Uint8Array(CHUNK_UNITS * 3);
    escaped ??= new Uint8Array(CHUNK_UNITS * 3 * 6);
    this.text('"');
    this.flush();
    for (let at = 0; at < s.length; ) {
      let end = Math.min(s.length, at + CHUNK_UNITS);
      // A chunk never ends between the two halves of a surrogate pair (each would be encoded alone).
      const last = s.charCodeAt(end - 1);
      if (end < s.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
      const { written } = utf8.encodeInto(at === 0 && end === s.length ? s : s.slice(at, end), raw);
      this.hash.update(escaped.subarray(0, escapeJson(raw, written, escaped)));
      at = end;
    }
    this.text('"');
  }
}

/**
 * The walk stays out of JavaScriptCore's optimising FTL tier: a training run hashes every call's
 * request with it from its first steps, and in a ×16 quickstart (1.3 s) compiling `string` and
 * `value` with FTL (twice each: the first code was thrown away) was the largest cost on the JIT's
 * thread, more than the faster code gave back before the run ended.
 */
noFTL(CanonicalFeed.prototype.value);
noFTL((CanonicalFeed.prototype as unknown as { string: () => void }).string);

/** JSON-escape `n` bytes of UTF-8 from `src` into `escaped` (as JSON.stringify escapes); returns the length. */
function escapeJson(src: Uint8Array, n: number, escaped: Uint8Array): number {
  let o = 0;
  for (let i = 0; i < n; i++) {
    const b = src[i]!;
    if (b >= 0x20 && b !== 0x22 && b !== 0x5c) {
      escaped[o++] = b;
      continue;
    }
    escaped[o++] = 0x5c;
    if (b === 0x22 || b === 0x5c) escaped[o++] = b;
    else if (SHORT_ESCAPE[b] !== undefined) escaped[o++] = SHORT_ESCAPE[b]!;
    else {
      escaped[o++] = 0x75; // u00XX
      escaped[o++] = 0x30;
      escaped[o++] = 0x30;
      escaped[o++] = HEX.charCodeAt(b >> 4);
      escaped[o++] = HEX.charCodeAt(b & 15);
    }
  }
  return o;
}
