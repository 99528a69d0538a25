/**
 * The ring the harvest's prefetch thread reads files into (see prefetch.ts for the reading side).
 * One SharedArrayBuffer holds a control block, one header per slot and the slots' bytes. The
 * prefetch thread only issues reads: it takes the harvest's reads in order, reads each into free
 * slots, and publishes every slot; the main thread parses the slots in place and releases them.
 * This module is the whole of the prefetch thread's code and imports nothing, so the thread starts
 * with almost nothing to load or compile.
 */

/** Control block (Int32) indices. */
export const PRODUCED = 0;
export const CONSUMED = 1;
/** The prefetch thread skips reads below this index (the main thread has passed them). */
export const SKIP_TO = 2;
export const STATE = 3;
/** Counts the prefetch thread's steps, so a thread that stopped moving can be told from a slow one. */
export const BEAT = 4;
export const STOP = 5;
export const ERROR_LENGTH = 6;
const CONTROL_INTS = 8;

export const IDLE = 0;
const RUNNING = 1;
export const DONE = 2;
export const FAILED = 3;

/** Slot header (Float64) fields. */
export const H_READ = 0;
/** File offset of the slot's first byte. */
export const H_POS = 1;
/** Bytes of the slot that belong to this read (up to its last newline unless the read ends here). */
export const H_LEN = 2;
/** Bytes the read system call returned into the slot (≥ H_LEN). */
export const H_GOT = 3;
export const H_FLAGS = 4;
const HEADER_FIELDS = 5;

/** The read's last slot. */
export const F_END = 1;
/** The file ended before the size the harvest saw (it shrank). */
export const F_SHORT = 2;
/** Opening or reading failed here: the main thread reads the rest itself (and meets the error). */
export const F_ERROR = 4;

const ERROR_BYTES = 1024;
/**
 * How often a prefetch thread with no free slot looks again. The main thread does not wake it:
 * a wake-up tends to run the woken thread on the waker's core, taking the main thread off its
 * own, where a timed wait lets it wake on the core it sleeps on.
 */
const POLL_MS = 1;

export interface RingViews {
  control: Int32Array;
  headers: Float64Array;
  errorText: Uint8Array;
  /** One Buffer per slot, each slotBytes long. */
  slots: Buffer[];
}

export function ringBytes(slots: number, slotBytes: number): number {
  return CONTROL_INTS * 4 + slots * HEADER_FIELDS * 8 + ERROR_BYTES + slots * slotBytes;
}

export function ringViews(sab: SharedArrayBuffer, slots: number, slotBytes: number): RingViews {
  const headersAt = CONTROL_INTS * 4;
  const errorAt = headersAt + slots * HEADER_FIELDS * 8;
  const dataAt = errorAt + ERROR_BYTES;
  return {
    control: new Int32Array(sab, 0, CONTROL_INTS),
    headers: new Float64Array(sab, headersAt, slots * HEADER_FIELDS),
    errorText: new Uint8Array(sab, errorAt, ERROR_BYTES),
    slots: Array.from({ length: slots }, (_, k) => Buffer.from(sab, dataAt + k * slotBytes, slotBytes)),
  };
}

export function headerAt(slot: number): number {
  return slot * HEADER_FIELDS;
}

/** What the prefetch thread is sent: the ring and the reads, in the order the harvest makes them. */
export interface PrefetchInit {
  sab: SharedArrayBuffer;
  slots: number;
  slotBytes: number;
  paths: string[];
  /** [from, size] of each read: bytes [from, size) of paths[i]. */
  ranges: Float64Array;
}

/** The file calls the prefetch thread makes (node:fs in the product). */
interface PrefetchIo {
  openSync(path: string, flags: "r"): number;
  readSync(fd: number, buf: Buffer, offset: number, length: number, position: number): number;
  closeSync(fd: number): void;
}

/**
 * The prefetch thread's loop. A file error (an errno `code`) ends that read with F_ERROR; anything
 * else ends the thread as FAILED with its message, and the main thread reads on alone.
 */
export function runPrefetch(init: PrefetchInit, io: PrefetchIo): void {
  const { control, headers, errorText, slots } = ringViews(init.sab, init.slots, init.slotBytes);
  const count = init.slots;
  let produced = 0;

  /** The next slot once the main thread has released it; -1 when asked to stop. */
  const freeSlot = (): number => {
    for (;;) {
      if (Atomics.load(control, STOP) !== 0) return -1;
      const consumed = Atomics.load(control, CONSUMED);
      if (produced - consumed < count) return produced % count;
      Atomics.wait(control, CONSUMED, consumed, POLL_MS);
    }
  };
  const publish = (slot: number, read: number, pos: number, len: number, got: number, flags: number): void => {
    const h = headerAt(slot);
    headers[h + H_READ] = read;
    headers[h + H_POS] = pos;
    headers[h + H_LEN] = len;
    headers[h + H_GOT] = got;
    headers[h + H_FLAGS] = flags;
    produced++;
    Atomics.store(control, PRODUCED, produced);
    Atomics.notify(control, PRODUCED);
  };
  const skipped = (read: number) => Atomics.load(control, SKIP_TO) > read || Atomics.load(control, STOP) !== 0;

  const readOne = (read: number): void => {
    const from = init.ranges[2 * read]!;
    const size = init.ranges[2 * read + 1]!;
    let fd: number;
    try {
      fd = io.openSync(init.paths[read]!, "r");
    } catch (err) {
      if (!isFileError(err)) throw err;
      const slot = freeSlot();
      if (slot >= 0) publish(slot, read, from, 0, 0, F_END | F_ERROR);
      return;
    }
    try {
      let pos = from;
      for (;;) {
        const slot = freeSlot();
        if (slot < 0 || skipped(read)) return;
        const buf = slots[slot]!;
        const want = Math.min(init.slotBytes, size - pos);
        let got: number;
        try {
          got = io.readSync(fd, buf, 0, want, pos);
        } catch (err) {
          if (!isFileError(err)) throw err;
          publish(slot, read, pos, 0, 0, F_END | F_ERROR);
          return;
        }
        Atomics.add(control, BEAT, 1);
        if (got <= 0) {
          publish(slot, read, pos, 0, 0, F_END | F_SHORT);
          return;
        }
        if (pos + got >= size) {
          publish(slot, read, pos, got, got, F_END);
          return;
        }
        // A slot ends at its last newline; the partial line after it starts the next slot's read.
        let len = got;
        if (got === want) {
          const nl = buf.lastIndexOf(10, got - 1);
          if (nl !== -1) len = nl + 1;
        }
        publish(slot, read, pos, len, got, 0);
        pos += len;
      }
    } finally {
      io.closeSync(fd);
    }
  };

  Atomics.store(control, STATE, RUNNING);
  Atomics.notify(control, STATE);
  try {
    for (let read = 0; read < init.paths.length; read++) {
      if (Atomics.load(control, STOP) !== 0) break;
      if (read < Atomics.load(control, SKIP_TO)) continue;
      Atomics.add(control, BEAT, 1);
      readOne(read);
    }
    Atomics.store(control, STATE, DONE);
  } catch (err) {
    const text = new TextEncoder().encode(err instanceof Error ? err.message : String(err)).subarray(0, ERROR_BYTES);
    errorText.set(text);
    Atomics.store(control, ERROR_LENGTH, text.length);
    Atomics.store(control, STATE, FAILED);
  }
  Atomics.notify(control, PRODUCED);
}

function isFileError(err: unknown): boolean {
  return err instanceof Error && typeof (err as { code?: unknown }).code === "string";
}
