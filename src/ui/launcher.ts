import { resolve } from "node:path";
import type { Subprocess } from "bun";
import { errorMessage, log, redactText } from "../lib/index.ts";
import { processEnv } from "../config/index.ts";
import { newRunFolder } from "../run/index.ts";

type LaunchStatus = "running" | "finished" | "failed" | "stopped";

export interface LaunchInfo {
  id: string;
  config: string;
  sets: string[];
  out: string;
  pid: number;
  status: LaunchStatus;
  exitCode: number | null;
  startedAt: string;
  /** The last lines the child printed (stdout and stderr). */
  log: string[];
}

interface Child {
  info: LaunchInfo;
  proc: Subprocess<"ignore", "pipe", "pipe">;
  listeners: Set<(info: LaunchInfo, line?: string) => void>;
  stopping: boolean;
}

const MAX_LINES = 300;

/** Training runs started from the dashboard, as child processes of `skillopt train`. */
export class Launcher {
  private readonly children = new Map<string, Child>();
  private counter = 0;

  /** `command` is how to invoke skillopt itself ([binary] or [bun, src/main.ts]). */
  constructor(
    private readonly opts: { root: string; command: string[]; cwd: string; env?: Record<string, string | undefined> },
  ) {}

  launch(config: string, sets: string[]): LaunchInfo {
    const out = newRunFolder(resolve(this.opts.root), config, (p) =>
      [...this.children.values()].some((c) => c.info.out === p),
    );
    // `--flag=value` forms: a value can never be read as a flag of its own.
    const argv = [
      ...this.opts.command,
      "train",
      `--config=${config}`,
      ...sets.map((s) => `--set=${s}`),
      `--out=${out}`,
    ];
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries({ ...processEnv(), ...this.opts.env, NO_COLOR: "1" }))
      if (v !== undefined) env[k] = v;
    const proc = Bun.spawn(argv, { cwd: this.opts.cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    this.counter += 1;
    const id = `l${this.counter}-${proc.pid}`;
    const child: Child = {
      info: {
        id,
        config,
        sets,
        out,
        pid: proc.pid,
        status: "running",
        exitCode: null,
        startedAt: new Date().toISOString(),
        log: [],
      },
      proc,
      listeners: new Set(),
      stopping: false,
    };
    this.children.set(id, child);
    void this.pump(child, proc.stdout);
    void this.pump(child, proc.stderr);
    void proc.exited.then((code) => {
      child.info.exitCode = code;
      child.info.status = child.stopping ? "stopped" : code === 0 ? "finished" : "failed";
      this.emit(child);
    });
    log.withTag("ui").info(`launched ${argv.slice(this.opts.command.length).join(" ")} (pid ${proc.pid})`);
    return child.info;
  }

  private async pump(child: Child, stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        const lines = buf.split(/\r?\n|\r/);
        buf = lines.pop() ?? "";
        for (const l of lines) this.addLine(child, l);
      }
      if (buf) this.addLine(child, buf);
    } catch (err) {
      this.addLine(child, `[ui] output stream closed: ${errorMessage(err)}`);
    }
  }

  private addLine(child: Child, raw: string): void {
    const line = redactText(raw.replace(/\u001b\[[0-9;]*[A-Za-z]/g, ""));
    child.info.log.push(line);
    if (child.info.log.length > MAX_LINES) child.info.log.splice(0, child.info.log.length - MAX_LINES);
    this.emit(child, line);
  }

  private emit(child: Child, line?: string): void {
    for (const l of child.listeners) l(child.info, line);
  }

  get(id: string): LaunchInfo | undefined {
    return this.children.get(id)?.info;
  }

  list(): LaunchInfo[] {
    return [...this.children.values()].map((c) => c.info).reverse();
  }

  /** The status of a run directory this launcher owns, if any. */
  statusOf(dir: string): LaunchStatus | undefined {
    const abs = resolve(dir);
    for (const c of this.children.values()) if (c.info.out === abs) return c.info.status;
    return undefined;
  }

  /** The launch that writes this run directory, if this dashboard started it. */
  byDir(dir: string): LaunchInfo | undefined {
    const abs = resolve(dir);
    return [...this.children.values()].reverse().find((c) => c.info.out === abs)?.info;
  }

  subscribe(id: string, fn: (info: LaunchInfo, line?: string) => void): () => void {
    const c = this.children.get(id);
    if (!c) return () => {};
    c.listeners.add(fn);
    return () => c.listeners.delete(fn);
  }

  /** Interrupt a run (SIGINT: the run is left interrupted and resumable), killing it after 5 s. */
  stop(id: string): boolean {
    const c = this.children.get(id);
    if (c?.info.status !== "running") return false;
    c.stopping = true;
    c.proc.kill("SIGINT");
    const t = setTimeout(() => {
      if (c.info.status === "running") c.proc.kill("SIGKILL");
    }, 5000);
    void c.proc.exited.then(() => clearTimeout(t));
    return true;
  }

  async stopAll(): Promise<void> {
    const running = [...this.children.values()].filter((c) => c.info.status === "running");
    for (const c of running) this.stop(c.info.id);
    await Promise.all(running.map((c) => c.proc.exited));
  }
}

/** How to start skillopt again from inside itself (re-exported for the dashboard's callers). */
export { selfCommand } from "../lib/index.ts";
