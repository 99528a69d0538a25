import { join } from "node:path";
import { watched } from "./watchdog.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");

const MAIN = join(REPO_ROOT, "src", "main.ts");

/** The `--set` flags that point a run at an OpenAI-compatible endpoint (a fake server, or one never called). */
export function endpointSets(url: string): string[] {
  return ["--set", "model.backend=openai_compatible", "--set", `model.openai_compatible_base_url=${url}`];
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  /** Variables over the test's own environment (HOME/XDG, NO_COLOR, provider keys); undefined removes one. */
  env?: Record<string, string | undefined>;
  /** The working directory (default: the repository). */
  cwd?: string;
  /** Text on stdin. Only `mcp` reads stdin, and it runs as a process: a run given stdin is spawned. */
  stdin?: string;
  /** How long the run may take before the call fails (default 60 s). */
  timeoutMs?: number;
}

/** The environment a run sees: the test's, NO_COLOR, the call's variables, and no SKILLOPT_LOG_LEVEL. */
function runEnv(opts: CliOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: "1", ...opts.env })) if (v !== undefined) env[k] = v;
  delete env.SKILLOPT_LOG_LEVEL;
  return env;
}

/**
 * Start the CLI as a real process: `bun src/main.ts …`, or the compiled binary named by
 * SKILLOPT_BIN. The child inherits the test's redirected HOME/XDG environment; its output is piped.
 * For what needs a process of its own: a signal or kill -9, stdin, a server that runs until stopped.
 */
export function spawnCli(args: string[], opts: CliOptions = {}) {
  const bin = process.env.SKILLOPT_BIN;
  const cmd = bin ? [bin, ...args] : [process.execPath, MAIN, ...args];
  return Bun.spawn(cmd, {
    cwd: opts.cwd ?? REPO_ROOT,
    env: runEnv(opts),
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
}

/**
 * Run the CLI as a real process (see spawnCli) to its end: for a test whose point needs a second
 * process (a run held by another live pid, a signal, kill -9).
 */
export async function runCliProcess(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const proc = spawnCli(args, opts);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Commands that serve until a signal or the end of stdin: they always get a process of their own. */
function serves(args: string[]): boolean {
  const words = args.filter((a) => !a.startsWith("-"));
  return words[0] === "ui" || words[0] === "mcp" || (words[0] === "sim" && words[1] === "serve");
}

/**
 * Run the CLI to its end and return its exit code and output. By default the command tree runs
 * inside the test process (runInProcess); it is spawned (runCliProcess) when SKILLOPT_BIN names a
 * compiled binary to test, when the run is given stdin, for the commands that serve until stopped
 * (`ui`, `mcp`, `sim serve`), and for every run when SKILLOPT_TEST_SPAWN=1 (the suite as it was
 * before runs moved in-process: to tell a difference of the in-process run from a bug, or to time it).
 */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const spawn = process.env.SKILLOPT_BIN || process.env.SKILLOPT_TEST_SPAWN === "1";
  if (spawn || opts.stdin !== undefined || serves(args)) return runCliProcess(args, opts);
  return runInProcess(args, opts);
}

/** In-process runs take turns: each one owns process.env, the working directory and stdout/stderr while it runs. */
let turn: Promise<unknown> = Promise.resolve();

type Write = typeof process.stdout.write;

/**
 * Run the command tree (src/cli/run.ts) inside this process, as `bun src/main.ts ARGS` would in a
 * child: the call's environment (NO_COLOR set, SKILLOPT_LOG_LEVEL removed), working directory and
 * argv; stdout and stderr captured and neither a terminal; a fresh logger and output mode; exit code
 * 0 unless the command sets one. Afterwards every piece of process-global state is put back: the
 * environment, cwd, argv, exitCode, the stream writers, the logger, the output mode, and any
 * process listener (SIGINT, SIGTERM, …) the command left behind. A run that blocks the thread (a
 * synchronous call that never returns) ends the test process with a line naming it (watchdog.ts).
 */
export function runInProcess(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const run = turn.then(() => runOnce(args, opts));
  turn = run.catch(() => {});
  return run;
}

async function runOnce(args: string[], opts: CliOptions): Promise<CliResult> {
  // Loaded on the first run, so a test file that only needs REPO_ROOT does not load the command tree.
  const [{ runCli: runCommandTree }, { output }, { resetLog }] = await Promise.all([
    import("../../src/cli/run.ts"),
    import("../../src/cli/output.ts"),
    import("../../src/lib/index.ts"),
  ]);
  const saved = {
    env: { ...process.env },
    cwd: process.cwd(),
    argv: process.argv,
    exitCode: process.exitCode,
    output: { ...output },
    listeners: new Map(process.eventNames().map((e) => [e, process.listeners(e as NodeJS.Signals)])),
    streamListeners: [process.stdout, process.stderr].map(
      (s) => new Map(s.eventNames().map((e) => [e, s.listeners(e)])),
    ),
  };
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const restoreStdout = capture(process.stdout, out);
  const restoreStderr = capture(process.stderr, err);
  const env = runEnv(opts);
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  let timer: Timer | undefined;
  try {
    process.chdir(opts.cwd ?? REPO_ROOT);
    process.argv = [process.execPath, MAIN, ...args];
    process.exitCode = 0;
    Object.assign(output, { json: false, quiet: false, debug: false, color: !env.NO_COLOR, fd1: false });
    resetLog();
    const limit = opts.timeoutMs ?? 60_000;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`skillopt ${args.join(" ")} did not end within ${limit / 1000} s (in-process run)`)),
        limit,
      );
    });
    const code = await Promise.race([watched(`skillopt ${args.join(" ")}`, () => runCommandTree([...args])), timeout]);
    // Decoded whole, as a pipe's reader would: a character split across two writes stays one.
    return { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
  } finally {
    clearTimeout(timer);
    // Before the streams go back: a repeat line consola still holds is this run's output.
    resetLog();
    restoreStdout();
    restoreStderr();
    for (const k of Object.keys(process.env)) if (!(k in saved.env)) delete process.env[k];
    Object.assign(process.env, saved.env);
    process.chdir(saved.cwd);
    process.argv = saved.argv;
    // Bun keeps the old code when exitCode is set to undefined: 0 is the closest to "never set".
    process.exitCode = saved.exitCode ?? 0;
    Object.assign(output, saved.output);
    resetLog();
    for (const e of process.eventNames()) {
      const before = saved.listeners.get(e) ?? [];
      for (const l of process.listeners(e as NodeJS.Signals)) if (!before.includes(l)) process.off(e, l);
    }
    [process.stdout, process.stderr].forEach((s, i) => {
      for (const e of s.eventNames()) {
        const before = saved.streamListeners[i]!.get(e) ?? [];
        for (const l of s.listeners(e)) if (!before.includes(l)) s.off(e, l as (...a: unknown[]) => void);
      }
    });
  }
}

/** Send a stream's writes to `into` and make it no terminal, until the returned function puts it back. */
function capture(stream: NodeJS.WriteStream, into: Buffer[]): () => void {
  const write = Object.getOwnPropertyDescriptor(stream, "write");
  const tty = Object.getOwnPropertyDescriptor(stream, "isTTY");
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const encoding = typeof rest[0] === "string" ? (rest[0] as BufferEncoding) : "utf8";
    into.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
    const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
    done?.();
    return true;
  }) as Write;
  Object.defineProperty(stream, "isTTY", { value: false, configurable: true, writable: true });
  return () => {
    if (write) Object.defineProperty(stream, "write", write);
    else delete (stream as { write?: Write }).write;
    if (tty) Object.defineProperty(stream, "isTTY", tty);
    else delete (stream as { isTTY?: boolean }).isTTY;
  };
}
