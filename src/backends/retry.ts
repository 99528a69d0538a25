import { abortableSleep, BackendError } from "../lib/index.ts";

/** How one logical call is retried: exponential backoff with full jitter, honouring Retry-After. */
export interface RetryPolicy {
  /** Total attempts including the first (spec §2.17: 3 for optimizer stages, 5 for rollouts). */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Upper bound on a server-requested Retry-After wait. */
  maxRetryAfterMs: number;
  /** Uniform [0, 1); injected so tests and benches are reproducible. */
  random: () => number;
}

export const OPTIMIZER_ATTEMPTS = 3;
export const ROLLOUT_ATTEMPTS = 5;

export function defaultPolicy(attempts: number, overrides: Partial<RetryPolicy> = {}): RetryPolicy {
  return {
    attempts,
    baseDelayMs: 500,
    maxDelayMs: 30_000,
    maxRetryAfterMs: 120_000,
    random: Math.random,
    ...overrides,
  };
}

/** Delay before retry number `retry` (1-based): Retry-After when the server gave one, else full jitter. */
export function backoffDelay(policy: RetryPolicy, retry: number, err: unknown): number {
  if (err instanceof BackendError && err.retryAfterMs !== undefined) {
    return Math.min(Math.max(0, err.retryAfterMs), policy.maxRetryAfterMs);
  }
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(policy.random() * cap);
}

/** Whether the policy may retry this failure (BackendError.retryable; anything else is a bug → no). */
function isRetryable(err: unknown): boolean {
  return err instanceof BackendError && err.retryable;
}

interface AttemptInfo {
  attempt: number;
  error: unknown;
  delayMs: number;
}

/**
 * Run `fn` until it succeeds, fails with a non-retryable error, or the attempts are used up.
 * Returns the value and the number of attempts made. An abort of `signal` stops at once.
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  opts: { signal?: AbortSignal; onRetry?: (info: AttemptInfo) => void } = {},
): Promise<{ value: T; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    opts.signal?.throwIfAborted();
    try {
      return { value: await fn(attempt), attempts: attempt };
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (!isRetryable(err) || attempt >= policy.attempts) {
        if (err instanceof BackendError && attempt > 1) {
          throw new BackendError(err.kind, `${err.message} (after ${attempt} attempts)`, {
            cause: err,
            status: err.status,
            retryable: false,
            ...(err.hint ? { hint: err.hint } : {}),
            data: { ...err.data, attempts: attempt },
          });
        }
        throw err;
      }
      const delayMs = backoffDelay(policy, attempt, err);
      opts.onRetry?.({ attempt, error: err, delayMs });
      await abortableSleep(delayMs, opts.signal);
    }
  }
}

/** Parse Retry-After (seconds or HTTP date) and retry-after-ms headers into milliseconds. */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && ms.trim() !== "" && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get("retry-after");
  if (ra === null || ra.trim() === "") return undefined;
  if (Number.isFinite(Number(ra))) return Math.max(0, Number(ra) * 1000);
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
