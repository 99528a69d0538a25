import { closeSync, openSync, readSync } from "node:fs";
import { activePrefetch } from "./prefetch.ts";

/** Lines longer than this are skipped unparsed (bounded memory whatever the file). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK = 1024 * 1024;
/** The read buffer: chunks read here, and lines carried across the prefetch ring's slots. */
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

type OnLine = (buf: Buffer, start: number, end: number, last: boolean) => boolean | undefined;

/**
 * A read in progress: the next file offset, the start of a line not yet complete (its bytes so far
 * in shared[0, filled)), whether that line is over-long (skipped up to its newline).
 */
interface Progress {
  pos: number;
  filled: number;
  consumed: number;
  bytesRead: number;
  skipping: boolean;
  /** A read from offset 0: the file's first headLength bytes so far. */
  head: Buffer | undefined;
  headLength: number;
}

/**
 * Stream the complete lines of path[from, size) to onLine without holding the file in memory.
 * Only `size` bytes are read (a snapshot: a live writer cannot extend the scan). The final line
 * without a newline is offered with `last = true` and consumed only if onLine returns true.
 * The bytes come from the prefetch thread when it read them ahead (prefetch.ts), else from here;
 * the lines are the same either way.
 */
export function readLines(path: string, from: number, size: number, onLine: OnLine): ReadResult {
  const at: Progress = {
    pos: from,
    filled: 0,
    consumed: from,
    bytesRead: 0,
    skipping: false,
    head: from === 0 ? Buffer.allocUnsafe(HEAD_BYTES) : undefined,
    headLength: 0,
  };
  if (!(from < size && readAhead(path, from, size, onLine, at))) readHere(path, size, onLine, at);
  if (at.filled > 0 && !at.skipping && at.pos >= size && onLine(shared, 0, at.filled, true) === true) {
    at.consumed = size;
  }
  const head = at.head && at.headLength > 0 ? at.head.subarray(0, at.headLength) : undefined;
  return { consumed: at.consumed, bytesRead: at.bytesRead, head };
}

/** Keep the file's first HEAD_BYTES bytes from bytes just read: buf[start, start + n) at file offset pos. */
function keepHead(at: Progress, buf: Buffer, start: number, n: number, pos: number): void {
  if (!at.head || at.headLength >= HEAD_BYTES || pos > at.headLength) return;
  const upTo = Math.min(n, HEAD_BYTES - pos);
  const skip = at.headLength - pos;
  if (upTo <= skip) return;
  buf.copy(at.head, at.headLength, start + skip, start + upTo);
  at.headLength = pos + upTo;
}

/** Take the read from the prefetch ring; false when the rest is to be read here (from at.pos). */
function readAhead(path: string, from: number, size: number, onLine: OnLine, at: Progress): boolean {
  const prefetch = activePrefetch();
  const i = prefetch ? prefetch.claim(path, from, size) : -1;
  if (i < 0) return false;
  for (let first = true; ; first = false) {
    const slot = prefetch!.slot(i, first);
    if (!slot) return false;
    if (slot.error) {
      prefetch!.release();
      return false;
    }
    keepHead(at, slot.buf, 0, slot.got, slot.pos);
    // A view of the slot's own bytes: no search runs on into what an earlier read left there.
    if (slot.len > 0) lines(slot.buf.subarray(0, slot.len), slot.pos, size, onLine, at);
    at.bytesRead += slot.len;
    at.pos += slot.len;
    prefetch!.release();
    if (slot.end) return true;
  }
}

/** Feed buf (file offset `base` at buf[0]) to onLine; a trailing partial line is carried. */
function lines(buf: Buffer, base: number, size: number, onLine: OnLine, at: Progress): void {
  const end = buf.length;
  const final = base + end >= size;
  let lineStart = 0;
  if (at.filled > 0 || at.skipping) {
    // The line carried from the previous slot continues here.
    const nl = buf.indexOf(10);
    const to = nl === -1 ? end : nl;
    carry(buf, 0, to, at, nl === -1 && final);
    if (to === end) return;
    if (at.skipping) at.skipping = false;
    else onLine(shared, 0, trimCr(shared, 0, at.filled), false);
    at.filled = 0;
    lineStart = to + 1;
    at.consumed = base + lineStart;
  }
  let nl = buf.indexOf(10, lineStart);
  while (nl !== -1) {
    if (nl > lineStart) onLine(buf, lineStart, trimCr(buf, lineStart, nl), false);
    lineStart = nl + 1;
    at.consumed = base + lineStart;
    nl = buf.indexOf(10, lineStart);
  }
  carry(buf, lineStart, end, at, final);
}

/**
 * Append buf[start, end) to the line in shared. A line is skipped once it reaches MAX_LINE_BYTES
 * with more of it to come, as readHere does when its buffer is full of one line; `final` = the
 * read ends with these bytes (a last line of exactly MAX_LINE_BYTES is then still offered).
 */
function carry(buf: Buffer, start: number, end: number, at: Progress, final: boolean): void {
  if (at.skipping || end <= start) return;
  const need = at.filled + (end - start);
  if (need > MAX_LINE_BYTES || (need === MAX_LINE_BYTES && !final)) {
    at.skipping = true;
    at.filled = 0;
    return;
  }
  if (need > shared.length) growShared(need, at.filled);
  buf.copy(shared, at.filled, start, end);
  at.filled = need;
}

/** Grow the shared buffer to at least `need` bytes (doubling, up to MAX_LINE_BYTES), keeping its first `filled`. */
function growShared(need: number, filled: number): void {
  const bigger = Buffer.allocUnsafe(Math.min(MAX_LINE_BYTES, Math.max(need, shared.length * 2)));
  shared.copy(bigger, 0, 0, filled);
  shared = bigger;
}

/** Read path[at.pos, size) on this thread, into the shared buffer after the carried partial line. */
function readHere(path: string, size: number, onLine: OnLine, at: Progress): void {
  const fd = openSync(path, "r");
  try {
    while (at.pos < size) {
      if (at.filled === shared.length) {
        if (shared.length >= MAX_LINE_BYTES) {
          // An over-long line: drop what we have and discard up to its newline.
          at.skipping = true;
          at.filled = 0;
        } else growShared(0, at.filled);
      }
      const filled = at.filled;
      const want = Math.min(shared.length - filled, size - at.pos);
      const n = readSync(fd, shared, filled, want, at.pos);
      if (n <= 0) break;
      keepHead(at, shared, filled, n, at.pos);
      at.bytesRead += n;
      const base = at.pos - filled;
      at.pos += n;
      const end = filled + n;
      let lineStart = 0;
      let nl = shared.indexOf(10, filled);
      while (nl !== -1 && nl < end) {
        if (at.skipping) at.skipping = false;
        else if (nl > lineStart) onLine(shared, lineStart, trimCr(shared, lineStart, nl), false);
        lineStart = nl + 1;
        at.consumed = base + lineStart;
        nl = shared.indexOf(10, lineStart);
      }
      if (lineStart > 0) shared.copy(shared, 0, lineStart, end);
      at.filled = end - lineStart;
    }
  } finally {
    closeSync(fd);
  }
}

function trimCr(buf: Buffer, start: number, end: number): number {
  return end > start && buf[end - 1] === 13 ? end - 1 : end;
}

/** Release the shared read buffer if one line made it grow (keeps RSS low between runs). */
export function shrinkReadBuffer(): void {
  if (shared.length > CHUNK * 2) shared = Buffer.allocUnsafe(CHUNK * 2);
}
