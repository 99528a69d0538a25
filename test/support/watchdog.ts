/**
 * A run of the CLI inside the test process shares the test's one thread: a synchronous call that
 * never returns (opening a FIFO for reading, a spawnSync of a child that waits on a server in this
 * process) would block the whole suite forever, and no test timeout can interrupt a blocked thread.
 * This watchdog is a worker thread: while a watched run is under way, the main thread beats every
 * half second; when the beats stop for SKILLOPT_TEST_BLOCKED_S seconds (default 120: nothing in a
 * run blocks the thread that long), it writes one line naming the run to stderr and kills the test
 * process, so a hang is a loud failure instead of a suite that never ends.
 */

const SOURCE = `
const { writeSync } = require("node:fs");
let beats;
let limitMs = 120000;
let what = "";
let last = -1;
let since = 0;
onmessage = (e) => {
  if (e.data.beats) beats = new Int32Array(e.data.beats);
  if (e.data.limitMs) limitMs = e.data.limitMs;
  if (e.data.what !== undefined) what = e.data.what;
};
setInterval(() => {
  if (!beats || Atomics.load(beats, 0) === 0) {
    last = -1;
    return;
  }
  const beat = Atomics.load(beats, 1);
  const now = Date.now();
  if (beat !== last) {
    last = beat;
    since = now;
    return;
  }
  if (now - since < limitMs) return;
  writeSync(2, "\\nin-process run \`" + what + "\` blocked the test process for " + Math.round((now - since) / 1000) +
    " s (a synchronous call that never returns: a FIFO opened for reading, a spawnSync waiting on this process?); " +
    "killing the test process. Run that test with SKILLOPT_TEST_SPAWN=1 to see it fail on its own.\\n");
  process.kill(process.pid, "SIGKILL");
}, 250);
`;

let worker: Worker | undefined;
/** [0]: a watched run is under way (1) or not (0); [1]: the main thread's beat counter. */
const beats = new Int32Array(new SharedArrayBuffer(8));

function start(): Worker {
  if (worker) return worker;
  const w = new Worker(URL.createObjectURL(new Blob([SOURCE], { type: "application/javascript" })));
  const seconds = Number(process.env.SKILLOPT_TEST_BLOCKED_S);
  w.postMessage({ beats: beats.buffer, limitMs: seconds > 0 ? seconds * 1000 : 120_000 });
  // The watchdog must never keep the test process alive.
  (w as Worker & { unref?: () => void }).unref?.();
  worker = w;
  return w;
}

/** Run `fn` (named `what` in the watchdog's line) with the watchdog watching the main thread. */
export async function watched<T>(what: string, fn: () => Promise<T>): Promise<T> {
  start().postMessage({ what });
  Atomics.add(beats, 1, 1);
  Atomics.store(beats, 0, 1);
  const beat = setInterval(() => Atomics.add(beats, 1, 1), 500);
  try {
    return await fn();
  } finally {
    clearInterval(beat);
    Atomics.store(beats, 0, 0);
  }
}
