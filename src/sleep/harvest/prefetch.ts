import { closeSync, openSync, readSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import {
  BEAT,
  CONSUMED,
  DONE,
  ERROR_LENGTH,
  F_END,
  F_ERROR,
  F_SHORT,
  FAILED,
  H_FLAGS,
  H_GOT,
  H_LEN,
  H_POS,
  H_READ,
  headerAt,
  IDLE,
  type PrefetchInit,
  PRODUCED,
  type RingViews,
  ringBytes,
  ringViews,
  SKIP_TO,
  STATE,
  STOP,
} from "./prefetch-ring.ts";

declare const SKILLOPT_PREFETCH_WORKER: string | undefined;

/** The prefetch thread's module: beside this file in a checkout; where build.ts put it in the binary. */
function prefetchWorkerUrl(): URL {
  if (typeof SKILLOPT_PREFETCH_WORKER === "string") return new URL(SKILLOPT_PREFETCH_WORKER, import.meta.url);
  return new URL("./prefetch-worker.ts", import.meta.url);
}

/**
 * Reading ahead on a second thread. Copying a file from the page cache into a read buffer is a
 * good part of a first harvest's main-thread time and used to alternate with parsing. A prefetch
 * thread takes the harvest's reads in order and reads them into a ring of shared slots while the
 * main thread parses the slots already read, in place. It parses nothing, so it starts in a few
 * milliseconds and warms up no parser.
 *
 * Its reads are exactly the main thread's: bytes [from, size) of each file as discovered, so an
 * append made since is not read. A read the main thread asks for that is not the next planned one
 * (another offset, a source reading otherwise) is read on the main thread; so is every read
 * while the thread has not started, and the rest of every read once it failed or stopped moving
 * (the debug log says so). A file error meets the main thread's own read of the same bytes,
 * which fails as it always did.
 */

/** Below this many bytes to read, starting the thread costs about what it saves. */
const AUTO_MIN_BYTES = 16 * 1024 * 1024;
/**
 * Slots in the ring. Peak RSS grows by more than the ring (JSC sizes its next collection by the
 * heap plus memory like this, so more garbage piles up between collections): on the 256 MB corpus
 * +18–20 MB with 8 slots, +10 with 4, +6 with 2, which read ahead less (more reads taken back).
 */
const SLOTS = 8;
/** Every line up to this long is parsed where it was read (longer ones are carried across slots). */
const SLOT_BYTES = 2 * 1024 * 1024;
/** A prefetch thread that neither publishes nor reads for this long is given up on. */
const STALL_MS = 2000;
/** How long a forced prefetch (HarvestOptions.prefetch = true) waits for its thread to start. */
const START_WAIT_MS = 5000;

export interface PrefetchRead {
  path: string;
  from: number;
  size: number;
}

/**
 * Whether to read ahead: true for any reads, false never, `auto` past AUTO_MIN_BYTES to read on
 * two cores or more, with a core to spare or with files not in the page cache. With the files in
 * the cache, the thread's reads are copies that cost CPU time (moved off the main thread): they
 * shorten the harvest only on a core that would otherwise idle. On a busy machine the other
 * processes get that core, and our threads share one slice of the machine (Linux's autogroup): the
 * extra thread then made the harvest slower. Measured on 2 cores, its effect on the wall time
 * against the last minute's load average: −10 ms at 1.1, none at 1.6–1.8, +50–80 ms from 1.9 to
 * 3.5. Hence a core to spare: a load of at most cores − 0.5. Files read from the disk are another
 * matter: the thread waits for the disk while the main thread parses (256 MB not in the cache:
 * 0.57 → 0.42 s), so `cold` (looksCold, asked only on a busy machine) also lets it start.
 */
export function wantPrefetch(
  mode: boolean | "auto",
  bytesToRead: number,
  cores = availableParallelism(),
  load = loadavg()[0] ?? 0,
  cold: () => boolean = () => false,
): boolean {
  if (bytesToRead <= 0) return false;
  if (mode !== "auto") return mode;
  return bytesToRead >= AUTO_MIN_BYTES && cores >= 2 && (load <= cores - 0.5 || cold());
}

/** Bytes read from each file looksCold samples. */
const PROBE_BYTES = 64 * 1024;
/**
 * A sample read slower than this came from the disk: 64 KB took 15–30 µs from the page cache and
 * 190–1650 µs from this machine's virtual disk.
 */
const COLD_READ_US = 100;

/**
 * Whether the files to read look absent from the page cache: even the fastest of three sample
 * reads (the first, middle and last planned reads' first 64 KB) was slower than COLD_READ_US.
 * Fewer than three reads say nothing (the first read of a process is slow for other reasons).
 */
export function looksCold(reads: readonly PrefetchRead[]): boolean {
  if (reads.length < 3) return false;
  const buf = Buffer.allocUnsafe(PROBE_BYTES);
  let fastest = Number.POSITIVE_INFINITY;
  for (const r of [reads[0]!, reads[reads.length >> 1]!, reads[reads.length - 1]!]) {
    const started = performance.now();
    try {
      const fd = openSync(r.path, "r");
      try {
        readSync(fd, buf, 0, Math.min(PROBE_BYTES, r.size - r.from), r.from);
      } finally {
        closeSync(fd);
      }
    } catch {
      return false;
    }
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest * 1000 > COLD_READ_US;
}

/** A published slot, read by the main thread. */
interface Slot {
  buf: Buffer;
  /** File offset of buf[0]. */
  pos: number;
  len: number;
  got: number;
  end: boolean;
  short: boolean;
  error: boolean;
}

export interface PrefetchOptions {
  slots?: number;
  slotBytes?: number;
  /** The thread's module (tests pass one that fails). */
  workerUrl?: URL;
  /** Said once when the main thread stops using the thread (debug log in the harvest). */
  onBroken?: (reason: string) => void;
  /**
   * Every read through the thread (a forced prefetch): wait for it to start (up to
   * START_WAIT_MS) and for each slot. Otherwise the main thread reads on by itself whenever the
   * next slot is not there yet (the thread not started, or behind: on a busy machine it may not
   * get a core), and the thread skips what the main thread took.
   */
  waitForThread?: boolean;
  /** How long a forced prefetch waits for the thread to start (default START_WAIT_MS). */
  startWaitMs?: number;
  /** How long the thread may neither publish nor read before it is given up on (default STALL_MS). */
  stallMs?: number;
}

export class Prefetch {
  private readonly ring: RingViews;
  private readonly worker: Worker;
  private readonly slotCount: number;
  private readonly index = new Map<string, number>();
  private readonly reads: PrefetchRead[];
  private taken = 0;
  private next = 0;
  private broken: string | undefined;
  private startError = "";
  private startWaitMs: number;
  private readonly stallMs: number;
  /** Reads begun from the ring, reads made on the main thread, and reads begun from the ring and finished there. */
  readonly counts = { ahead: 0, here: 0, handedBack: 0 };

  constructor(
    reads: PrefetchRead[],
    private readonly opts: PrefetchOptions = {},
  ) {
    this.reads = reads;
    this.startWaitMs = opts.waitForThread ? (opts.startWaitMs ?? START_WAIT_MS) : 0;
    this.stallMs = opts.stallMs ?? STALL_MS;
    this.slotCount = opts.slots ?? SLOTS;
    const slotBytes = opts.slotBytes ?? SLOT_BYTES;
    const sab = new SharedArrayBuffer(ringBytes(this.slotCount, slotBytes));
    this.ring = ringViews(sab, this.slotCount, slotBytes);
    const ranges = new Float64Array(reads.length * 2);
    reads.forEach((r, i) => {
      ranges[2 * i] = r.from;
      ranges[2 * i + 1] = r.size;
      if (!this.index.has(r.path)) this.index.set(r.path, i);
    });
    this.worker = new Worker(opts.workerUrl ?? prefetchWorkerUrl());
    this.worker.onerror = (e: ErrorEvent) => {
      this.startError ||= e.message || "unknown error";
    };
    const init: PrefetchInit = { sab, slots: this.slotCount, slotBytes, paths: reads.map((r) => r.path), ranges };
    this.worker.postMessage(init);
  }

  /** The planned read for these bytes (marks the reads before it as passed), or -1. */
  claim(path: string, from: number, size: number): number {
    if (this.broken) return -1;
    const i = this.index.get(path);
    if (i === undefined || i < this.next) return -1;
    this.next = i + 1;
    const r = this.reads[i]!;
    if (r.from !== from || r.size !== size) {
      this.counts.here++;
      this.skipTo(i + 1);
      return -1;
    }
    this.skipTo(i);
    return i;
  }

  /**
   * The next slot of read i, waiting for it while the thread is reading; undefined when the main
   * thread must read on itself (the thread has not started, has failed or stopped, or skipped it).
   */
  slot(i: number, first: boolean): Slot | undefined {
    const { control, headers, slots } = this.ring;
    for (;;) {
      const state = Atomics.load(control, STATE);
      const produced = Atomics.load(control, PRODUCED);
      if (this.taken < produced) {
        const k = this.taken % this.slotCount;
        const h = headerAt(k);
        const read = headers[h + H_READ]!;
        if (read < i) {
          this.release();
          continue;
        }
        if (read > i) return this.here(i, first);
        const flags = headers[h + H_FLAGS]!;
        if (first) this.counts.ahead++;
        return {
          buf: slots[k]!,
          pos: headers[h + H_POS]!,
          len: headers[h + H_LEN]!,
          got: headers[h + H_GOT]!,
          end: (flags & F_END) !== 0,
          short: (flags & F_SHORT) !== 0,
          error: (flags & F_ERROR) !== 0,
        };
      }
      if (this.broken) return this.here(i, first);
      if (state === FAILED) {
        const n = Atomics.load(control, ERROR_LENGTH);
        const why = new TextDecoder().decode(this.ring.errorText.slice(0, n));
        this.stop(`the prefetch thread failed: ${why}`);
        return this.here(i, first);
      }
      if (state === IDLE && this.startWaitMs > 0) {
        Atomics.wait(control, STATE, IDLE, this.startWaitMs);
        this.startWaitMs = 0;
        continue;
      }
      if (state === IDLE || state === DONE || !this.opts.waitForThread) return this.here(i, first);
      const beat = Atomics.load(control, BEAT);
      const woke = Atomics.wait(control, PRODUCED, produced, this.stallMs);
      if (
        woke === "timed-out" &&
        Atomics.load(control, BEAT) === beat &&
        Atomics.load(control, PRODUCED) === produced
      ) {
        this.stop(`the prefetch thread stopped moving for ${this.stallMs / 1000} s`);
        return this.here(i, first);
      }
    }
  }

  /** Give the slot last returned by slot() back to the thread. */
  release(): void {
    this.taken++;
    const { control } = this.ring;
    Atomics.store(control, CONSUMED, this.taken);
    // Woken only when it has nothing left here: a wake-up may take the waker's core for a while.
    if (this.taken === Atomics.load(control, PRODUCED)) Atomics.notify(control, CONSUMED);
  }

  /**
   * Stop the thread; why the main thread read alone, if it did, for the debug log. A thread that
   * never started is waited for a little (at most the stall time), to tell one that cannot start (its
   * module fails to load) from one that started late.
   */
  async close(): Promise<string | undefined> {
    this.stop(undefined);
    try {
      if (this.broken) return undefined; // said when it happened
      if (this.counts.ahead > 0 || this.counts.here === 0) return undefined;
      const { control } = this.ring;
      const until = performance.now() + this.stallMs;
      while (!this.startError && Atomics.load(control, STATE) === IDLE && performance.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      if (this.startError) return `the prefetch thread could not start: ${this.startError}`;
      return "the prefetch thread did not start before the harvest's reads were done";
    } finally {
      this.worker.terminate();
    }
  }

  /** The main thread reads (the rest of) read i: the thread need not. */
  private here(i: number, first: boolean): undefined {
    if (first) this.counts.here++;
    else this.counts.handedBack++;
    this.skipTo(i + 1);
    return undefined;
  }

  private skipTo(i: number): void {
    const { control } = this.ring;
    if (Atomics.load(control, SKIP_TO) < i) Atomics.store(control, SKIP_TO, i);
  }

  private stop(reason: string | undefined): void {
    if (reason && !this.broken) {
      this.broken = reason;
      this.opts.onBroken?.(`${reason}; reading on the main thread`);
    }
    const { control } = this.ring;
    Atomics.store(control, STOP, 1);
    Atomics.notify(control, CONSUMED);
  }
}

/** The prefetch of the harvest running in this thread, if any (read-lines.ts reads from it). */
let active: Prefetch | undefined;

export function activePrefetch(): Prefetch | undefined {
  return active;
}

/** Start reading ahead (one prefetch at a time: the harvest runs one at a time per process). */
export function startPrefetch(reads: PrefetchRead[], opts?: PrefetchOptions): Prefetch {
  if (active) throw new Error("a prefetch is already running in this thread");
  active = new Prefetch(reads, opts);
  return active;
}

/** Stop reading ahead; why the main thread read alone, if it did. */
export function stopPrefetch(): Promise<string | undefined> {
  const p = active;
  active = undefined;
  return p ? p.close() : Promise.resolve(undefined);
}
