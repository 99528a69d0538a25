import type { ConsolaInstance } from "consola";

/** consola's numeric levels (the names SKILLOPT_LOG_LEVEL accepts). */
const LEVELS: Record<string, number> = {
  silent: Number.NEGATIVE_INFINITY,
  fatal: 0,
  error: 0,
  warn: 1,
  log: 2,
  info: 3,
  success: 3,
  fail: 3,
  ready: 3,
  start: 3,
  box: 3,
  debug: 4,
  trace: 5,
  verbose: Number.POSITIVE_INFINITY,
};

function levelOfEnv(): number | undefined {
  const name = process.env.SKILLOPT_LOG_LEVEL;
  return name && name in LEVELS ? LEVELS[name] : undefined;
}

let envLevel = levelOfEnv();
let level = envLevel ?? LEVELS.info!;
let root: ConsolaInstance | undefined;

/** Every consola instance made so far (the root and each tagged child): resetLog settles them. */
const made = new Set<ConsolaInstance>();
/** Bumped by resetLog: a lazy logger made before then builds its instance again. */
let generation = 0;

/**
 * Start the logger afresh from the environment as it is now: the level from SKILLOPT_LOG_LEVEL and
 * new consola instances writing to `process.stderr` from the next line on. A line consola holds
 * back to count repeats ("(repeated 3 times)", written a second after the last one) is written now,
 * where the process would have written it before it ended. The CLI never needs this (its process
 * starts with a fresh logger); a caller that runs the command tree several times inside one process
 * (test/support/cli.ts) calls it before and after each run.
 */
export function resetLog(): void {
  for (const inst of made) writeHeldRepeat(inst);
  made.clear();
  generation += 1;
  envLevel = levelOfEnv();
  level = envLevel ?? LEVELS.info!;
  root = undefined;
}

/** consola 3's pending repeat line (its `_lastLog` and throttle timer), written at once as its timer would. */
function writeHeldRepeat(inst: ConsolaInstance): void {
  const c = inst as unknown as {
    _lastLog?: { count?: number; object?: { args: unknown[] }; timeout?: ReturnType<typeof setTimeout> };
    _log(o: object): void;
    options: { throttleMin: number };
  };
  const last = c._lastLog;
  if (!last?.timeout) return;
  clearTimeout(last.timeout);
  last.timeout = undefined;
  const repeated = (last.count ?? 0) - c.options.throttleMin;
  if (!last.object || repeated <= 0) return;
  c._log({ ...last.object, args: [...last.object.args, ...(repeated > 1 ? [`(repeated ${repeated} times)`] : [])] });
  last.count = 1;
}

/**
 * consola is loaded on the first line that is actually written: importing it costs a large part
 * of a `version` or `--help` run, which never logs.
 */
function realRoot(): ConsolaInstance {
  if (!root) {
    const tty = Boolean(process.stderr.isTTY) && colorAllowed();
    const { createConsola } = require("consola") as typeof import("consola");
    root = createConsola({
      level,
      fancy: tty,
      stdout: process.stderr,
      stderr: process.stderr,
      formatOptions: { date: false, colors: tty },
    });
  }
  return root;
}

/**
 * Whether colour is allowed at all (NO_COLOR unset). Read here, beside the log level, so the CLI's
 * output settings need no config module: `version` and `--help` load none of it.
 */
export function colorAllowed(): boolean {
  return !process.env.NO_COLOR;
}

const noop = () => {};

/** A logger that resolves to `resolve()` only when a call would print (or needs the real object). */
function lazy(resolve: () => ConsolaInstance): ConsolaInstance {
  let inst: ConsolaInstance | undefined;
  let madeIn = generation;
  const real = () => {
    if (!inst || madeIn !== generation) {
      inst = resolve();
      madeIn = generation;
      made.add(inst);
    }
    return inst;
  };
  return new Proxy({} as ConsolaInstance, {
    get(_, key) {
      if (key === "level") return level;
      if (key === "withTag") return (tag: string) => lazy(() => real().withTag(tag));
      if (typeof key === "string" && key in LEVELS && LEVELS[key]! > level) return noop;
      const v = (real() as unknown as Record<PropertyKey, unknown>)[key];
      return typeof v === "function" ? v.bind(real()) : v;
    },
    set(_, key, value) {
      if (key === "level") {
        level = value as number;
        if (root) root.level = level;
        return true;
      }
      (real() as unknown as Record<PropertyKey, unknown>)[key] = value;
      return true;
    },
  });
}

/** The single logger. Everything goes to stderr; stdout carries only results. */
export const log: ConsolaInstance = lazy(realRoot);

/** Set the level from CLI flags: quiet → warn, verbose/debug → debug. */
export function setLogLevel(mode: "quiet" | "normal" | "verbose" | "silent"): void {
  if (envLevel !== undefined) return;
  log.level =
    mode === "quiet"
      ? LEVELS.warn!
      : mode === "verbose"
        ? LEVELS.debug!
        : mode === "silent"
          ? LEVELS.silent!
          : LEVELS.info!;
}
