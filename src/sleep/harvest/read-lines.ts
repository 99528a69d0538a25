import { closeSync, openSync, readSync } from "node:fs";

/** Lines longer than this are skipped unparsed (bounded memory whatever the file). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK = 1024 * 1024;
let shared = Buffer.allocUnsafe(CHUNK * 2);

/** Bytes of a file's head that identify it (a rewrite changes them; an append does not). */
export const HEAD_BYTES = 4096;

interface ReadResult {
  /** Offset just past the last line consumed (a trailing partial line is left for next time). */
  consumed: number;
  bytesRead: number;
  /** A read from offset 0: a copy of the file's first HEAD_BYTES bytes (fewer in a shorter file). */
  head?: Buffer;
}

/**
 * Stream the complete lines of path[from, size) to onLine without holding the file in memory.
 * Only `size` bytes are read (a snapshot: a live writer cannot extend the scan). The final line
 * without a newline is offered with `last = true` and consumed only if onLine returns true.
 */
export function readLines(
  path: string,
  from: number,
  size: number,
  onLine: (buf: Buffer, start: number, end: number, last: boolean) => boolean | undefined,
): ReadResult {
  const fd = openSync(path, "r");
  let pos = from;
  let filled = 0;
  let consumed = from;
  let bytesRead = 0;
  let skipping = false;
  let head: Buffer | undefined;
  try {
    while (pos < size) {
      if (filled === shared.length) {
        if (shared.length >= MAX_LINE_BYTES) {
          // An over-long line: drop what we have and discard up to its newline.
          skipping = true;
          filled = 0;
        } else {
          const bigger = Buffer.allocUnsafe(Math.min(MAX_LINE_BYTES, shared.length * 2));
          shared.copy(bigger, 0, 0, filled);
          shared = bigger;
        }
      }
      const want = Math.min(shared.length - filled, size - pos);
      const n = readSync(fd, shared, filled, want, pos);
      if (n <= 0) break;
      if (pos === 0) head = Buffer.from(shared.subarray(filled, filled + Math.min(n, HEAD_BYTES)));
      bytesRead += n;
      const base = pos - filled;
      pos += n;
      const end = filled + n;
      let lineStart = 0;
      let nl = shared.indexOf(10, filled);
      while (nl !== -1 && nl < end) {
        if (skipping) skipping = false;
        else if (nl > lineStart) onLine(shared, lineStart, trimCr(shared, lineStart, nl), false);
        lineStart = nl + 1;
        consumed = base + lineStart;
        nl = shared.indexOf(10, lineStart);
      }
      if (lineStart > 0) shared.copy(shared, 0, lineStart, end);
      filled = end - lineStart;
    }
    if (filled > 0 && !skipping && pos >= size && onLine(shared, 0, filled, true) === true) consumed = size;
  } finally {
    closeSync(fd);
  }
  return { consumed, bytesRead, head };
}

function trimCr(buf: Buffer, start: number, end: number): number {
  return end > start && buf[end - 1] === 13 ? end - 1 : end;
}

/** Release the shared read buffer if one line made it grow (keeps RSS low between runs). */
export function shrinkReadBuffer(): void {
  if (shared.length > CHUNK * 2) shared = Buffer.allocUnsafe(CHUNK * 2);
}
