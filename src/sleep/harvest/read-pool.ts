import { availableParallelism } from "node:os";
import type { ReaderContext, ReadOutcome, SessionFileMark, SessionState } from "../ports.ts";
import { errorMessage } from "../../lib/index.ts";
import { SOURCES } from "./sources.ts";
import type { Candidate } from "./source.ts";
import { settleFinals } from "./text.ts";
import type { SourceName } from "./types.ts";

declare const SKILLOPT_READ_WORKER: string | undefined;

/** The worker's module: beside this file in a checkout; where build.ts put it in the binary. */
function readWorkerUrl(): URL {
  if (typeof SKILLOPT_READ_WORKER === "string") return new URL(SKILLOPT_READ_WORKER, import.meta.url);
  return new URL("./read-worker.ts", import.meta.url);
}

/**
 * Reading sessions on worker threads. A first harvest parses hundreds of megabytes of JSONL: each
 * file is independent of the others, so files are read on up to MAX_THREADS workers while the main
 * thread reads too and consumes the results in the harvest's own order (newest first). Only
 * sources whose read is a function of the file, the prior state and the context run there
 * (`offThread`), and only when there is enough to read to pay for starting the workers.
 */

/**
 * Below this many bytes to read, a worker costs about what it saves. Measured on 2 cores with
 * `bun bench/harvest.ts` (a worker costs ≈ 40 ms to start and ≈ 100 ms of CPU to warm up its
 * compiled code, and two threads share the memory bandwidth the end-of-string searches need):
 * 256 MB took the same wall time with one worker as without (+40 % CPU); 1 GB took 0–20 % less
 * wall time over rounds of runs (0.74 s instead of 0.93 s at best) for 25–45 % more CPU.
 */
const AUTO_MIN_BYTES = 512 * 1024 * 1024;
/** Bytes to read per worker. */
const AUTO_BYTES_PER_THREAD = 256 * 1024 * 1024;
const MAX_THREADS = 4;
/** Jobs handed to one worker at a time: one being read, one waiting, so a worker never idles. */
const PER_WORKER = 2;

/** How many read workers to start: `threads` when the caller chose, else by the work and the machine. */
export function readThreads(threads: number | "auto" | undefined, bytesToRead: number, jobs: number): number {
  if (jobs === 0) return 0;
  if (typeof threads === "number") return Math.max(0, Math.min(Math.floor(threads), jobs));
  if (bytesToRead < AUTO_MIN_BYTES) return 0;
  const cores = availableParallelism();
  return Math.max(0, Math.min(cores - 1, MAX_THREADS, Math.ceil(bytesToRead / AUTO_BYTES_PER_THREAD), jobs));
}

/** What the worker needs to rebuild the reader context (the lexicon is rebuilt from env there). */
type WorkerContext = Omit<ReaderContext, "lex">;

export interface ReadRequest {
  source: SourceName;
  c: Candidate;
  prior: { mark: SessionFileMark; state: SessionState } | undefined;
}

/** A read's answer, from a worker or the main thread: an outcome, or the reader's error message. */
export type ReadReply = { outcome: ReadOutcome } | { error: string };

/**
 * One read, on whichever thread runs it (the main thread and the workers alike): the reader's
 * outcome with its assistant texts settled (only the finals it keeps are redacted, once, before
 * the digest is kept or mined), or the reader's error as the reply.
 */
export function readSession(req: ReadRequest, ctx: ReaderContext): ReadReply {
  try {
    const outcome = SOURCES[req.source].read(req.c, req.prior, ctx);
    if (outcome.state) settleFinals(outcome.state.digest);
    return { outcome };
  } catch (err) {
    return { error: errorMessage(err) };
  }
}

/** Messages to the worker. */
export type ToWorker = { kind: "init"; ctx: WorkerContext } | ({ kind: "read"; id: number } & ReadRequest);
/** Messages from the worker. */
export type FromWorker = { id: number } & ReadReply;

interface Job {
  id: number;
  req: ReadRequest;
  state: "queued" | "sent" | "done";
  reply?: ReadReply;
  waiters: (() => void)[];
}

/**
 * A pool of read workers with an ordered job queue. `submit` queues a read; `result` returns its
 * reply, reading it on the calling thread when no worker has taken it yet, and reading queued jobs
 * meanwhile when a worker has it. A worker that fails hands its jobs back to the main thread:
 * the pool is only ever a faster way to the same replies.
 */
export class ReadPool {
  private readonly workers: { w: Worker; inFlight: Set<Job> }[] = [];
  private readonly queue: Job[] = [];
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;
  private broken = false;

  constructor(
    threads: number,
    ctx: WorkerContext,
    private readonly readHere: (req: ReadRequest) => ReadReply,
    private readonly onBroken: (reason: string) => void,
    /** The worker's module (tests pass one that fails). */
    workerUrl: URL = readWorkerUrl(),
  ) {
    for (let i = 0; i < threads; i++) {
      const w = new Worker(workerUrl);
      const slot = { w, inFlight: new Set<Job>() };
      w.onmessage = (e: MessageEvent<FromWorker>) => this.onReply(slot, e.data);
      w.onerror = (e: ErrorEvent) => this.fail(`a read worker failed: ${e.message || "unknown error"}`);
      w.addEventListener("messageerror", () => this.fail("a read worker sent an unreadable reply"));
      w.postMessage({ kind: "init", ctx } satisfies ToWorker);
      this.workers.push(slot);
    }
  }

  submit(req: ReadRequest): number {
    const job: Job = { id: this.nextId++, req, state: "queued", waiters: [] };
    this.jobs.set(job.id, job);
    this.queue.push(job);
    this.pump();
    return job.id;
  }

  /** The reply of a submitted job (each job's reply is taken once). */
  async result(id: number): Promise<ReadReply> {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`read job ${id} is unknown`);
    while (job.state !== "done") {
      if (job.state === "queued") {
        this.queue.splice(this.queue.indexOf(job), 1);
        this.runHere(job);
        break;
      }
      // A worker has it: read the next queued job here meanwhile, then let the replies in.
      const next = this.queue.shift();
      if (next) {
        this.runHere(next);
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else await new Promise<void>((resolve) => job.waiters.push(resolve));
    }
    this.jobs.delete(id);
    return job.reply!;
  }

  close(): void {
    for (const { w } of this.workers) w.terminate();
    this.workers.length = 0;
  }

  private runHere(job: Job): void {
    this.settle(job, this.readHere(job.req));
  }

  private settle(job: Job, reply: ReadReply): void {
    job.state = "done";
    job.reply = reply;
    for (const wake of job.waiters.splice(0)) wake();
  }

  private onReply(slot: { inFlight: Set<Job> }, msg: FromWorker): void {
    const job = this.jobs.get(msg.id);
    if (job?.state !== "sent") return;
    slot.inFlight.delete(job);
    this.settle(job, "error" in msg ? { error: msg.error } : { outcome: msg.outcome });
    this.pump();
  }

  private pump(): void {
    if (this.broken) return;
    for (const slot of this.workers) {
      while (slot.inFlight.size < PER_WORKER) {
        const job = this.queue.shift();
        if (!job) return;
        job.state = "sent";
        slot.inFlight.add(job);
        const { source, c, prior } = job.req;
        slot.w.postMessage({ kind: "read", id: job.id, source, c, prior } satisfies ToWorker);
      }
    }
  }

  /** Stop using the workers: what they held goes back to the queue, read here in order. */
  private fail(reason: string): void {
    if (this.broken) return;
    this.broken = true;
    const held = this.workers.flatMap((s) => [...s.inFlight]).filter((j) => j.state === "sent");
    this.close();
    for (const job of held) job.state = "queued";
    this.queue.unshift(...held.sort((a, b) => a.id - b.id));
    for (const job of held) for (const wake of job.waiters.splice(0)) wake();
    this.onBroken(reason);
  }
}
