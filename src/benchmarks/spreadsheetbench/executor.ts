import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log, UnsupportedError } from "../../lib/index.ts";
import { LineReader } from "../shared/lines.ts";
import { HELPER_PY, runnerScript, stripPathAssignments } from "./helper-py.ts";

const PASSTHROUGH = ["LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING", "PYTHONHASHSEED", "SYSTEMROOT", "WINDIR"];

interface Exec {
  ok: boolean;
  /** stdout + stderr (capped) when the run failed. */
  error?: string;
  timedOut: boolean;
  /** stdout + stderr of the run (capped). */
  output: string;
}

interface Interpreter {
  python: string;
  /** argv prefix that puts the child in a namespace with no network (empty when unavailable). */
  isolate: string[];
}

const interpreters = new Map<string, Promise<Interpreter>>();

async function run(
  argv: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; signal?: AbortSignal },
) {
  // The environment is always passed: Bun's default is the one the process started with, not
  // process.env as it is now (the same in the CLI's own process; not where tests run the CLI).
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env ?? process.env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs,
    killSignal: "SIGKILL",
    signal: opts.signal,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { stdout, stderr, code, killed: proc.signalCode === "SIGKILL" };
}

async function probe(configured: string): Promise<Interpreter> {
  const candidates = configured ? [configured] : ["python3", "python", "/usr/bin/python3"];
  const paths = [
    ...new Set(
      candidates
        .map((c) => (c.includes("/") ? c : Bun.which(c, { PATH: process.env.PATH ?? "" })))
        .filter((p): p is string => Boolean(p && existsSync(p))),
    ),
  ];
  // probe every candidate at once (pyenv-style shims are slow to fail), keep the first in order that works
  const ok = await Promise.all(
    paths.map((p) =>
      run([p, "-c", "import openpyxl"], { timeoutMs: 30_000 })
        .then((r) => r.code === 0)
        .catch(() => false),
    ),
  );
  const python = paths.find((_, i) => ok[i]);
  if (!python) {
    throw new UnsupportedError(
      configured
        ? `SpreadsheetBench: env.python ${configured} cannot import openpyxl; install it for that interpreter (pip install openpyxl)`
        : "SpreadsheetBench needs Python 3 with openpyxl: install it (Debian/Ubuntu: apt-get install python3-openpyxl; elsewhere: pip install " +
            "openpyxl) or set env.python",
      {
        feature: "spreadsheetbench",
        needs: "python3 with openpyxl",
        key: "env.python",
        value: configured || undefined,
      },
    );
  }
  let isolate: string[] = [];
  const unshare = Bun.which("unshare", { PATH: process.env.PATH ?? "" });
  if (unshare) {
    const r = await run(
      [
        unshare,
        "-rn",
        python,
        "-c",
        "import socket\ntry:\n socket.create_connection(('1.1.1.1', 53), timeout=1)\nexcept OSError:\n print('blocked')",
      ],
      {
        timeoutMs: 15_000,
      },
    ).catch(() => undefined);
    if (r?.code === 0 && r.stdout.includes("blocked")) isolate = [unshare, "-rn"];
  }
  if (isolate.length === 0) {
    log
      .withTag("spreadsheetbench")
      .warn(
        "no network namespace available (unshare -rn failed); generated code gets the Python-level network block only",
      );
  }
  return { python, isolate };
}

/** The interpreter (env.python, else python3/python on PATH, else /usr/bin/python3) that has openpyxl. */
export function interpreter(configured: string): Promise<Interpreter> {
  let p = interpreters.get(configured);
  if (!p) {
    p = probe(configured);
    interpreters.set(configured, p);
    p.catch(() => interpreters.delete(configured));
  }
  return p;
}

function scrubbedEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: home,
    PYTHONDONTWRITEBYTECODE: "1",
  };
  for (const k of PASSTHROUGH) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/**
 * Run generated code on one input workbook: a private temp dir holding a copy of the input, the
 * solution and the runner; scrubbed environment; no network (network namespace + Python-level
 * block); `timeoutS`. On success the output workbook is copied to `outputPath`.
 */
export async function executeCode(
  code: string,
  inputXlsx: string,
  outputPath: string,
  opts: { python: string; timeoutS: number; signal?: AbortSignal },
): Promise<Exec> {
  const interp = await interpreter(opts.python);
  const dir = mkdtempSync(join(tmpdir(), "skillopt-xlsx-"));
  try {
    const input = join(dir, "input.xlsx");
    const output = join(dir, "output.xlsx");
    copyFileSync(inputXlsx, input);
    writeFileSync(join(dir, "solution.py"), stripPathAssignments(code));
    writeFileSync(join(dir, "runner.py"), runnerScript(join(dir, "solution.py"), input, output));
    const r = await run([...interp.isolate, interp.python, join(dir, "runner.py")], {
      cwd: dir,
      env: scrubbedEnv(dir),
      timeoutMs: Math.max(1, opts.timeoutS) * 1000,
      signal: opts.signal,
    });
    const text = `${r.stdout}\n${r.stderr}`.trim().slice(-3000);
    if (r.killed) return { ok: false, error: `timeout after ${opts.timeoutS}s`, timedOut: true, output: text };
    if (r.code !== 0) return { ok: false, error: text || `exit code ${r.code}`, timedOut: false, output: text };
    if (!existsSync(output)) {
      return {
        ok: false,
        error: "output-not-found: the code did not save a workbook to OUTPUT_PATH",
        timedOut: false,
        output: text,
      };
    }
    copyFileSync(output, outputPath);
    return { ok: true, timedOut: false, output: text };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A long-lived helper process for our own trusted scripts (preview, compare): one interpreter
 * start per run instead of one per call. Generated code never goes through it.
 */
class HelperProcess {
  private readonly proc: ReturnType<typeof Bun.spawn>;
  private readonly lines: LineReader;
  private readonly dir: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(python: string) {
    this.dir = mkdtempSync(join(tmpdir(), "skillopt-xlsx-helper-"));
    writeFileSync(join(this.dir, "helper.py"), HELPER_PY);
    this.proc = Bun.spawn([python, join(this.dir, "helper.py"), "serve"], {
      cwd: this.dir,
      env: scrubbedEnv(this.dir),
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    this.proc.unref();
    this.lines = new LineReader((this.proc.stdout as ReadableStream<Uint8Array>).getReader());
    void this.proc.exited.then(() => rmSync(this.dir, { recursive: true, force: true }));
  }

  get alive(): boolean {
    return this.proc.exitCode === null;
  }

  /** One request at a time, in order. */
  call(cmd: string, args: string[]): Promise<string> {
    const run = async () => {
      const stdin = this.proc.stdin as import("bun").FileSink;
      stdin.write(`${JSON.stringify({ cmd, args })}\n`);
      await stdin.flush();
      const l = await this.lines.next();
      if (l === undefined) throw new Error(`spreadsheet helper exited (code ${this.proc.exitCode})`);
      const reply = JSON.parse(l) as { ok: boolean; out?: string; error?: string };
      if (!reply.ok) throw new Error(`spreadsheet helper ${cmd} failed: ${reply.error}`);
      return reply.out ?? "";
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }
}

const helpers = new Map<string, HelperProcess>();

/** Run a helper command (`preview` / `compare`) in the long-lived helper process; throws on failure. */
export async function runHelper(python: string, args: string[]): Promise<string> {
  const interp = await interpreter(python);
  let h = helpers.get(interp.python);
  if (!h?.alive) {
    h = new HelperProcess(interp.python);
    helpers.set(interp.python, h);
  }
  const [cmd, ...rest] = args;
  return h.call(cmd!, rest);
}
