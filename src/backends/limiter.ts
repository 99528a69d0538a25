import { abortableSleep } from "../lib/index.ts";
/** A counting semaphore: at most `size` tasks run at once; the rest wait in FIFO order. */
export class Limiter {
  private active = 0;
  private peak = 0;
  private readonly waiting: Array<() => void> = [];
  private pausedUntil = 0;

  constructor(readonly size: number) {
    if (!Number.isInteger(size) || size < 1)
      throw new RangeError(`limiter size must be a positive integer, got ${size}`);
  }

  get running(): number {
    return this.active;
  }

  /** Highest number of tasks that ran at once. */
  get maxRunning(): number {
    return this.peak;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Hold new starts for `ms` (a provider said Retry-After): the other slots wait instead of
   * hammering an endpoint that is rate limiting.
   */
  pause(ms: number, now = Date.now()): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) await abortableSleep(wait, signal);
      return await fn();
    } finally {
      this.release();
    }
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.active < this.size) {
      this.enter();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener("abort", onAbort);
        this.enter();
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(grant);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private enter(): void {
    this.active++;
    if (this.active > this.peak) this.peak = this.active;
  }

  private release(): void {
    this.active--;
    const next = this.waiting.shift();
    if (next) next();
  }
}
