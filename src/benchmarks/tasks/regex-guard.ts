import { type DataAt, DataError } from "../../lib/index.ts";

/**
 * Regex evaluation with a time bound. JavaScript regexes backtrack: a reference such as `^(a+)+$`
 * takes seconds (or forever) on some answers, and a regex cannot be interrupted on the thread that
 * runs it. So matching runs in one long-lived Worker; when an answer takes longer than the bound, the
 * worker is terminated (a fresh one serves the next call) and the evaluation is an error, never a score.
 */

/** Default bound per answer. Generous: a sane pattern takes microseconds. */
const REGEX_TIMEOUT_MS = 2_000;

// Plain JavaScript, so the worker needs no file of its own (works the same in the compiled binary).
const WORKER_SOURCE = `self.onmessage = (e) => {
  const { id, source, flags, text } = e.data;
  try { postMessage({ id, ok: new RegExp(source, flags).test(text) }); }
  catch (err) { postMessage({ id, error: String((err && err.message) || err) }); }
};`;

interface Pending {
  resolve: (ok: boolean) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

let worker: Worker | undefined;
let workerUrl: string | undefined;
let nextId = 1;
const pending = new Map<number, Pending>();

function getWorker(): Worker {
  if (worker) return worker;
  workerUrl ??= URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "application/javascript" }));
  const w = new Worker(workerUrl);
  w.onmessage = (e: MessageEvent<{ id: number; ok?: boolean; error?: string }>) => {
    const p = pending.get(e.data.id);
    if (!p) return;
    pending.delete(e.data.id);
    clearTimeout(p.timer);
    if (e.data.error !== undefined) p.reject(new Error(e.data.error));
    else p.resolve(Boolean(e.data.ok));
  };
  // An idle worker must not keep the process alive.
  (w as Worker & { unref?: () => void }).unref?.();
  worker = w;
  return w;
}

/** Stop the worker and fail everything it was running (a stuck match blocks the whole queue). */
function killWorker(reason: string): void {
  worker?.terminate();
  worker = undefined;
  for (const [id, p] of pending) {
    pending.delete(id);
    clearTimeout(p.timer);
    p.reject(new RegexTimeoutError(reason));
  }
}

/** A regex evaluation that did not finish within its bound. */
export class RegexTimeoutError extends Error {}

/** `re.test(text)`, bounded: rejects with RegexTimeoutError after `timeoutMs`. */
export function boundedRegexTest(re: RegExp, text: string, timeoutMs = REGEX_TIMEOUT_MS): Promise<boolean> {
  const id = nextId++;
  const w = getWorker();
  return new Promise<boolean>((resolve, reject) => {
    const timer = setTimeout(() => killWorker(`did not finish within ${timeoutMs / 1000} s`), timeoutMs);
    pending.set(id, { resolve, reject, timer });
    // A stateful (g/y) regex must not carry lastIndex between answers: send source and flags only.
    w.postMessage({ id, source: re.source, flags: re.flags, text });
  });
}

/** The DataError of a timed-out evaluation: names the task, the pattern and the answer length. */
export function regexTimeoutError(
  where: string,
  pattern: string,
  answer: string,
  err: RegexTimeoutError,
  at: DataAt = {},
): DataError {
  return new DataError(
    `${where}: regex reference ${JSON.stringify(pattern)} ${err.message} on a ${answer.length}-character answer (catastrophic backtracking); the run \
stops rather than score it`,
    {
      hint: "simplify the pattern (no nested quantifiers such as (a+)+), then resume the run",
      data: { ...at, field: "reference", problem: "regex_timeout" },
    },
  );
}
