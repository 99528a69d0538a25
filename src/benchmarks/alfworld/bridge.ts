import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { errorMessage, log, UnsupportedError } from "../../lib/index.ts";
import { LineReader } from "../shared/lines.ts";
import { BRIDGE_PY } from "./bridge-py.ts";

const INSTALL_HINT =
  "ALFWorld is not installed: run `pip install alfworld && alfworld-download` in a Python 3 environment, then set env.alfworld_python to that " +
  "python and ALFWORLD_DATA to the downloaded data directory";

const ReplySchema = v.looseObject({
  observation: v.optional(v.string(), ""),
  admissible: v.optional(v.array(v.string()), []),
  done: v.optional(v.boolean(), false),
  won: v.optional(v.boolean(), false),
  reward: v.optional(v.number(), 0),
  error: v.optional(v.string()),
  missing: v.optional(v.boolean()),
});
export type BridgeReply = v.InferOutput<typeof ReplySchema>;

/** A child process running one ALFWorld episode, spoken to in JSON lines. */
export class AlfworldBridge {
  private readonly proc: ReturnType<typeof Bun.spawn>;
  private readonly dir: string;
  private readonly lines: LineReader;
  private stderr = "";

  private constructor(python: string, env: Record<string, string>) {
    this.dir = mkdtempSync(join(tmpdir(), "skillopt-alfworld-"));
    const script = join(this.dir, "bridge.py");
    writeFileSync(script, BRIDGE_PY);
    try {
      this.proc = Bun.spawn([python, "-u", script], {
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        env,
        cwd: this.dir,
      });
    } catch (err) {
      rmSync(this.dir, { recursive: true, force: true });
      throw new UnsupportedError(`${INSTALL_HINT} (cannot start ${python}: ${(err as Error).message})`, {
        feature: "alfworld",
        needs: "python with alfworld",
        key: "env.alfworld_python",
        value: python,
      });
    }
    this.lines = new LineReader((this.proc.stdout as ReadableStream<Uint8Array>).getReader());
    void new Response(this.proc.stderr as ReadableStream).text().then((t) => {
      this.stderr = t;
    });
  }

  /** Start the bridge with `python` (env.alfworld_python, default python3). */
  static start(python: string, env: Record<string, string>): AlfworldBridge {
    return new AlfworldBridge(python, env);
  }

  /** The next line that is not blank, or undefined once the bridge has exited. */
  private async readLine(timeoutMs: number): Promise<string | undefined> {
    const deadline = Date.now() + timeoutMs;
    const late = `ALFWorld bridge did not answer within ${Math.round(timeoutMs / 1000)}s`;
    for (;;) {
      const line = await this.lines.next(deadline, late);
      if (line === undefined || line.trim()) return line;
    }
  }

  /** Send one request and wait for its reply; an unusable install is an UnsupportedError. */
  async request(req: Record<string, unknown>, timeoutMs: number): Promise<BridgeReply> {
    const stdin = this.proc.stdin as import("bun").FileSink;
    try {
      stdin.write(`${JSON.stringify(req)}\n`);
      await stdin.flush();
    } catch {
      throw new Error(`ALFWorld bridge is not running (exit ${this.proc.exitCode ?? "?"})`);
    }
    const line = await this.readLine(timeoutMs);
    if (line === undefined) {
      await this.proc.exited;
      const tail = this.stderr.trim().split("\n").slice(-2).join(" | ");
      if (/No module named|cannot import/i.test(this.stderr))
        throw new UnsupportedError(INSTALL_HINT, { feature: "alfworld", needs: "python with alfworld" });
      throw new Error(`ALFWorld bridge exited (code ${this.proc.exitCode})${tail ? `: ${tail}` : ""}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`ALFWorld bridge sent a line that is not JSON: ${line.slice(0, 200)}`);
    }
    const reply = v.parse(ReplySchema, parsed);
    if (reply.missing)
      throw new UnsupportedError(`${INSTALL_HINT} (${reply.error ?? "import failed"})`, {
        feature: "alfworld",
        needs: "python with alfworld",
      });
    if (reply.error) throw new Error(`ALFWorld: ${reply.error}`);
    return reply;
  }

  /** Ask the episode to close, then make sure the process is gone. */
  async close(): Promise<void> {
    try {
      if (this.proc.exitCode === null) await this.request({ cmd: "close" }, 5000);
    } catch (err) {
      log.withTag("alfworld").debug(`bridge close: ${errorMessage(err)}`);
    }
    this.proc.kill("SIGKILL");
    await this.proc.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}
