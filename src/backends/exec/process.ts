import { existsSync, statSync } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { allowlistedEnv, isSecretKey, redactText } from "../../lib/index.ts";
import type { EnvLookup } from "../settings.ts";

interface ProcessSpec {
  /** argv[0] is the executable (a path, or a name looked up on PATH of `env`). Never a shell string. */
  argv: string[];
  cwd?: string;
  /** The complete child environment (an allowlist, never a copy of ours). */
  env: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Captured bytes per stream; the rest is dropped and `truncated` set. */
  maxOutputBytes?: number;
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
  truncated: boolean;
  durationMs: number;
}

const DEFAULT_MAX_OUTPUT = 16 * 1024 * 1024;

/**
 * Run a child in its own process group; on timeout or abort the whole group gets SIGTERM, then
 * SIGKILL after a grace period, so agent CLIs cannot leave grandchildren running.
 */
export async function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const started = performance.now();
  const exe = resolveExecutable(spec.argv[0] ?? "", spec.env.PATH);
  const proc = Bun.spawn([exe, ...spec.argv.slice(1)], {
    ...(spec.cwd ? { cwd: spec.cwd } : {}),
    env: spec.env,
    stdin: spec.stdin === undefined ? "ignore" : new TextEncoder().encode(spec.stdin),
    stdout: "pipe",
    stderr: "pipe",
    detached: process.platform !== "win32",
  });
  let timedOut = false;
  let aborted = false;
  const killGroup = (sig: NodeJS.Signals) => {
    try {
      if (process.platform !== "win32") process.kill(-proc.pid, sig);
      else proc.kill(sig);
    } catch {
      proc.kill(sig);
    }
  };
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    killGroup("SIGTERM");
    graceTimer = setTimeout(() => killGroup("SIGKILL"), 2_000);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, spec.timeoutMs);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  spec.signal?.addEventListener("abort", onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();
  const limit = spec.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const [out, err] = await Promise.all([readCapped(proc.stdout, limit), readCapped(proc.stderr, limit)]);
  const code = await proc.exited;
  clearTimeout(timer);
  spec.signal?.removeEventListener("abort", onAbort);
  if (timedOut || aborted) {
    // The leader is gone; make sure nothing of its group survives.
    killGroup("SIGKILL");
  }
  if (graceTimer) clearTimeout(graceTimer);
  return {
    code: timedOut || aborted ? null : code,
    stdout: out.text,
    stderr: err.text,
    timedOut,
    aborted,
    truncated: out.truncated || err.truncated,
    durationMs: performance.now() - started,
  };
}

async function readCapped(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<{ text: string; truncated: boolean }> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  const reader = stream.getReader();
  for (;;) {
    const { done, value: chunk } = await reader.read();
    if (done) break;
    if (size >= limit) {
      truncated = true;
      continue;
    }
    const room = limit - size;
    chunks.push(chunk.byteLength > room ? chunk.subarray(0, room) : chunk);
    if (chunk.byteLength > room) truncated = true;
    size += Math.min(chunk.byteLength, room);
  }
  return { text: Buffer.concat(chunks).toString("utf8"), truncated };
}

/** Find an executable on the child's PATH (absolute or relative paths are used as given). */
export function resolveExecutable(name: string, path: string | undefined): string {
  if (name === "" || isAbsolute(name) || name.includes("/") || name.includes("\\")) return name;
  for (const dir of (path ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    } catch {
      // unreadable PATH entry: try the next one
    }
  }
  return name;
}

/** The allowlist every child process starts from, and how one is built (shared with the command evaluator). */

/** Build a child environment from an allowlist plus fixed additions. */
export function childEnv(
  env: EnvLookup,
  allow: readonly string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  return allowlistedEnv(env, allow, extra);
}

/** Redact secret-looking text and the literal values of the secrets handed to a child. */
export function secretScrubber(env: Record<string, string>): (text: string) => string {
  const secrets = Object.entries(env)
    .filter(([k, v]) => isSecretKey(k) && v.length >= 8)
    .map(([, v]) => v);
  return (text) => secrets.reduce((out, secret) => out.replaceAll(secret, "[REDACTED]"), redactText(text));
}
