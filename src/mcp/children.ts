import type { Subprocess } from "bun";
import { processEnv } from "../config/index.ts";

/** What a finished CLI child left: its exit code and what it printed (each capped). */
export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A child we started and still watch. */
export interface Child {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Resolves once the child exited and both its streams are drained. */
  done: Promise<CliOutcome>;
}

const CAP = 4 * 1024 * 1024;
/** How long a cancelled child gets to end on SIGINT (it marks its run interrupted) before its group is killed. */
const GRACE_MS = 5000;

async function drain(stream: ReadableStream<Uint8Array>, onLine?: (line: string) => void, cap = CAP): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let partial = "";
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value, { stream: true });
    if (text.length < cap) text += chunk;
    if (onLine) {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) onLine(l.trim());
    }
  }
  text += decoder.decode();
  if (onLine && partial.trim()) onLine(partial.trim());
  return text.length > cap ? `${text.slice(0, cap)}\n[output cut at ${cap} characters]` : text;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // A detached child leads its own process group: the negative pid reaches it and everything it started.
    process.kill(-pid, signal);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
  }
}

/**
 * The CLI processes the MCP server starts: the same binary, each detached into its own process
 * group so that stopping one stops whatever it spawned too.
 */
export class Children {
  private readonly live = new Set<Child>();

  constructor(
    private readonly command: readonly string[],
    private readonly cwd: string,
  ) {}

  /** Start `skillopt <args>`; it runs until it ends or is stopped. */
  start(args: readonly string[], onStderrLine?: (line: string) => void): Child {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...processEnv(), NO_COLOR: "1" })) if (v !== undefined) env[k] = v;
    const proc = Bun.spawn([...this.command, ...args], {
      cwd: this.cwd,
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    const done = Promise.all([drain(proc.stdout), drain(proc.stderr, onStderrLine), proc.exited]).then(
      ([stdout, stderr, code]) => ({ code, stdout, stderr }),
    );
    const child: Child = { proc, done };
    this.live.add(child);
    void done.finally(() => this.live.delete(child));
    return child;
  }

  /** Run `skillopt <args>` to its end (each stderr line to `onStderrLine`); an abort stops it (and its group) and rejects. */
  async run(args: readonly string[], signal: AbortSignal, onStderrLine?: (line: string) => void): Promise<CliOutcome> {
    signal.throwIfAborted();
    const child = this.start(args, onStderrLine);
    const onAbort = () => void this.stop(child);
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const outcome = await child.done;
      signal.throwIfAborted();
      return outcome;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** SIGINT to the child's group, SIGKILL once `graceMs` passed (at once for 0); resolves when it has ended. */
  async stop(child: Child, graceMs = GRACE_MS): Promise<void> {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
    signalGroup(child.proc.pid, graceMs > 0 ? "SIGINT" : "SIGKILL");
    const timer = setTimeout(() => signalGroup(child.proc.pid, "SIGKILL"), graceMs);
    try {
      await child.proc.exited;
    } finally {
      clearTimeout(timer);
    }
    // Whatever the child started and left behind in its group goes too.
    signalGroup(child.proc.pid, "SIGKILL");
  }

  /** Stop every child still running. */
  async stopAll(graceMs = GRACE_MS): Promise<void> {
    await Promise.all([...this.live].map((c) => this.stop(c, graceMs)));
  }
}
