import { join } from "node:path";

export const REPO_ROOT = join(import.meta.dir, "..", "..");

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
  env?: Record<string, string | undefined>;
  cwd?: string;
  stdin?: string;
  timeoutMs?: number;
}

/**
 * Start the CLI as a real process: `bun src/main.ts …`, or the compiled binary named by
 * SKILLOPT_BIN. The child inherits the test's redirected HOME/XDG environment; its output is piped.
 */
export function spawnCli(args: string[], opts: CliOptions = {}) {
  const bin = process.env.SKILLOPT_BIN;
  const cmd = bin ? [bin, ...args] : [process.execPath, join(REPO_ROOT, "src", "main.ts"), ...args];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: "1", ...opts.env })) if (v !== undefined) env[k] = v;
  delete env.SKILLOPT_LOG_LEVEL;
  return Bun.spawn(cmd, {
    cwd: opts.cwd ?? REPO_ROOT,
    env,
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
}

/** Run the CLI as a real process (see spawnCli) to its end. */
export async function runCli(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  const proc = spawnCli(args, opts);
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}
