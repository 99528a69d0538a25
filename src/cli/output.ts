import { writeSync } from "node:fs";
import { colorAllowed } from "../lib/index.ts";

/**
 * Process-wide output mode, set once from the global flags before a command runs. `fd1` is true
 * when the CLI owns its process (main.ts): stdout is written to file descriptor 1 and asked whether
 * it is a terminal. A caller that runs the command tree inside its own process (the tests'
 * test/support/cli.ts) sets it false for one run: stdout then goes through `process.stdout`, where
 * that caller captures it.
 */
export const output = {
  json: false,
  quiet: false,
  debug: false,
  color: colorAllowed(),
  fd1: true,
};

/**
 * stdout is written with write(2) on file descriptor 1, not through `process.stdout`: creating
 * that stream object costs more than the rest of a `version` or `--help` run (about 9 ms of a
 * 13 ms run on the compiled binary). Once a write would block (a non-blocking pipe that is full),
 * this and every later write go through the stream, which queues, so the order is kept. A reader
 * that went away (EPIPE: `skillopt runs | head -1`) ends our output quietly.
 */
let viaStream = false;
let closed = false;

export function writeStdout(text: string): void {
  if (closed) return;
  if (viaStream || !output.fd1) {
    process.stdout.write(text);
    return;
  }
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    while (done < bytes.length) done += writeSync(1, bytes, done, bytes.length - done);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EPIPE") {
      closed = true;
      return;
    }
    if (code !== "EAGAIN") throw namedStdout(err);
    viaStream = true;
    process.stdout.write(bytes.subarray(done));
  }
}

/**
 * A failed write to stdout (a full disk behind `> file`, an I/O error) names "standard output" as
 * its path, so the CLI reports it as the file-system failure it is (cli/errors.ts fromFsError),
 * not as an internal error.
 */
function namedStdout(err: unknown): unknown {
  const e = err as NodeJS.ErrnoException;
  if (err instanceof Error && typeof e.code === "string" && typeof e.path !== "string") e.path = "standard output";
  return err;
}

/**
 * Whether stdout is a terminal, without creating the `process.stdout` stream (see writeStdout);
 * node:tty is loaded only when asked (about 2.5 ms, which `version` does not need).
 */
export function stdoutIsTTY(): boolean {
  if (!output.fd1) return Boolean(process.stdout.isTTY);
  return (require("node:tty") as typeof import("node:tty")).isatty(1);
}

/** Write a result line to stdout (the only stdout path besides printJson). */
export function printResult(text: string): void {
  writeStdout(text.endsWith("\n") ? text : `${text}\n`);
}

/** Write a JSON document to stdout. */
export function printJson(value: unknown): void {
  writeStdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** True when progress may be drawn as a bar (stderr is a TTY and we are not quiet). */
export function canDrawProgress(): boolean {
  return Boolean(process.stderr.isTTY) && !output.quiet && !output.json;
}
