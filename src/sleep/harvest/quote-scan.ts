/**
 * The end of a JSON string found 16 bytes at a time: a tiny WebAssembly module (SIMD) whose one
 * function returns the first unescaped `"` at or after a position. It reads the module's own memory,
 * so the line reader reads files into a buffer over that memory (scanBuffer); any other buffer
 * uses the scanner's portable path. Where WebAssembly SIMD is missing, scanBuffer is a plain buffer.
 *
 * close(i, end): the first q in [i, end) with byte q = `"` preceded by an even run of backslashes
 * (what the byte loop in jsonl.ts computes), or -1. The caller guarantees a non-backslash byte
 * before i (the string's opening quote), which ends every backward run.
 */

// biome-ignore format: the bytes are laid out one instruction group per line, each with its meaning
const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x07, 0x01, 0x60, 0x02, 0x7f, 0x7f, 0x01, 0x7f, // type 0: (i32, i32) -> i32
  0x03, 0x02, 0x01, 0x00, // function 0 has type 0
  0x05, 0x05, 0x01, 0x01, 0x20, 0x80, 0x08, // memory 0: 32 pages (2 MiB) up to 1024 (64 MiB)
  0x07, 0x0f, 0x02, // exports: "close" = function 0, "mem" = memory 0
  0x05, 0x63, 0x6c, 0x6f, 0x73, 0x65, 0x00, 0x00,
  0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00,
  0x0a, 0xc2, 0x01, 0x01, 0xbf, 0x01, // code: one body of 191 bytes
  0x01, 0x03, 0x7f, // locals 2 (m: quote bits), 3 (p: a quote), 4 (k: walks back over backslashes)
  0x02, 0x40, 0x03, 0x40, // block $vec_done; loop $vec
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x20, 0x01, 0x4b, 0x0d, 0x01, //   if i + 16 > end: br $vec_done
  0x20, 0x00, 0xfd, 0x00, 0x00, 0x00, //   v128.load [i]
  0x41, 0x22, 0xfd, 0x0f, 0xfd, 0x23, 0xfd, 0x64, 0x21, 0x02, //   m = bitmask(bytes == '"')
  0x02, 0x40, 0x03, 0x40, //   block $bits_done; loop $bits
  0x20, 0x02, 0x45, 0x0d, 0x01, //     if m == 0: br $bits_done
  0x20, 0x00, 0x20, 0x02, 0x68, 0x6a, 0x22, 0x03, 0x21, 0x04, //     p = k = i + ctz(m)
  0x03, 0x40, //     loop: k -= 1 while byte k is a backslash
  0x20, 0x04, 0x41, 0x01, 0x6b, 0x22, 0x04, 0x2d, 0x00, 0x00, 0x41, 0xdc, 0x00, 0x46, 0x0d, 0x00,
  0x0b,
  0x20, 0x03, 0x41, 0x01, 0x6b, 0x20, 0x04, 0x6b, 0x41, 0x01, 0x71, 0x45, //     run (p - 1 - k) even?
  0x04, 0x40, 0x20, 0x03, 0x0f, 0x0b, //     then return p
  0x20, 0x02, 0x20, 0x02, 0x41, 0x01, 0x6b, 0x71, 0x21, 0x02, //     m &= m - 1 (next quote)
  0x0c, 0x00, 0x0b, 0x0b, //   end $bits
  0x20, 0x00, 0x41, 0x10, 0x6a, 0x21, 0x00, 0x0c, 0x00, //   i += 16; br $vec
  0x0b, 0x0b,
  0x02, 0x40, 0x03, 0x40, // block $out; loop $tail (the last < 16 bytes, one at a time)
  0x20, 0x00, 0x20, 0x01, 0x4f, 0x0d, 0x01, //   if i >= end: br $out
  0x20, 0x00, 0x2d, 0x00, 0x00, 0x41, 0x22, 0x46, //   byte i == '"'?
  0x04, 0x40,
  0x20, 0x00, 0x21, 0x04, //     k = i
  0x03, 0x40,
  0x20, 0x04, 0x41, 0x01, 0x6b, 0x22, 0x04, 0x2d, 0x00, 0x00, 0x41, 0xdc, 0x00, 0x46, 0x0d, 0x00,
  0x0b,
  0x20, 0x00, 0x41, 0x01, 0x6b, 0x20, 0x04, 0x6b, 0x41, 0x01, 0x71, 0x45, //     run even?
  0x04, 0x40, 0x20, 0x00, 0x0f, 0x0b, //     then return i
  0x0b,
  0x20, 0x00, 0x41, 0x01, 0x6a, 0x21, 0x00, 0x0c, 0x00, //   i += 1; br $tail
  0x0b, 0x0b,
  0x41, 0x7f, 0x0b, // -1
]);

const PAGE = 65536;

interface Scan {
  close: (i: number, end: number) => number;
  mem: WebAssembly.Memory;
}

let scan: Scan | undefined | null;
let compiled: WebAssembly.Module | undefined | null;

function instance(): Scan | null {
  if (scan !== undefined) return scan;
  try {
    // Compiled once per process (it throws where WebAssembly SIMD is missing); each instance has its own memory.
    compiled ??= new WebAssembly.Module(MODULE);
    const ex = new WebAssembly.Instance(compiled).exports as unknown as Scan;
    scan = { close: ex.close, mem: ex.mem };
  } catch {
    compiled = null;
    scan = null;
  }
  return scan;
}

/**
 * A buffer of `size` bytes over the scanner's memory (the first `keep` bytes of the previous one
 * kept, as the memory only grows), or a plain buffer where the scanner is unavailable or the size
 * is beyond its 64 MiB.
 */
export function scanBuffer(size: number, previous?: Buffer, keep = 0): Buffer {
  const s = instance();
  if (!s || size > 1024 * PAGE) {
    const b = Buffer.allocUnsafe(size);
    previous?.copy(b, 0, 0, keep);
    return b;
  }
  if (previous && previous.buffer !== s.mem.buffer) {
    // The previous buffer was a plain one: start over in the scanner's memory.
    const b = scanBuffer(size);
    previous.copy(b, 0, 0, keep);
    return b;
  }
  const have = s.mem.buffer.byteLength;
  if (size > have) s.mem.grow(Math.ceil((size - have) / PAGE));
  return Buffer.from(s.mem.buffer, 0, size);
}

/**
 * Drop the scanner's memory once a long line grew it past 8 MiB (a memory cannot shrink): the next
 * scanBuffer starts a fresh, small one.
 */
export function releaseScanMemory(): void {
  if (scan && scan.mem.buffer.byteLength > 128 * PAGE) scan = undefined;
}

/** True when buf lies in the scanner's memory (closeQuote can search it). */
export function inScanMemory(buf: Buffer): boolean {
  return scan != null && buf.buffer === scan.mem.buffer;
}

/**
 * The first unescaped quote of buf[i, end), or -1; undefined when buf is not over the scanner's
 * memory (the caller then scans itself).
 */
export function closeQuote(buf: Buffer, i: number, end: number): number | undefined {
  const s = scan;
  if (!s || buf.buffer !== s.mem.buffer) return undefined;
  const off = buf.byteOffset;
  const q = s.close(off + i, off + end);
  return q === -1 ? -1 : q - off;
}
