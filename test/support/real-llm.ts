import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./cli.ts";
import { closedPort } from "./net.ts";

/**
 * The small real model of ../shared/real-llm (a 256-token GPT behind an OpenAI-compatible server,
 * plain Node). CI copies /work/shared beside the clone; REAL_LLM_SERVER names another server.mjs.
 */
export const REAL_LLM_SERVER = process.env.REAL_LLM_SERVER ?? join(REPO_ROOT, "..", "shared", "real-llm", "server.mjs");

/** Why the real-model tests cannot run here, or undefined when they can. */
export function realLlmMissing(): string | undefined {
  if (!existsSync(REAL_LLM_SERVER))
    return `${REAL_LLM_SERVER} not found (the real model lives in ../shared beside the clone)`;
  if (!Bun.which("node")) return "node is not on PATH (the real model's server runs on Node)";
  return undefined;
}

export interface RealLlm {
  /** Base URL, ".../v1". */
  url: string;
  /** The server's log (one line per request), for a failing test's message. */
  log(): Promise<string>;
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Start the real model's server on a free loopback port and wait for /health. It stops itself
 * after `maxSeconds` even if a test never disposes it; `env` adds variables (REAL_LLM_OVERFLOW).
 */
export async function startRealLlm(opts: { maxSeconds: number; env?: Record<string, string> }): Promise<RealLlm> {
  const port = await closedPort();
  const proc = Bun.spawn(["node", REAL_LLM_SERVER, "--port", String(port), "--max-seconds", String(opts.maxSeconds)], {
    env: { ...process.env, ...opts.env },
    stdout: "ignore",
    stderr: "pipe",
  });
  const base = `http://127.0.0.1:${port}`;
  // Loading the weights takes well under a second; give a busy machine up to 30 s.
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`the real model's server exited with ${proc.exitCode}`);
    const ok = await fetch(`${base}/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) break;
    if (i === 299) {
      proc.kill();
      throw new Error(`the real model's server did not answer /health on port ${port} within 30 s`);
    }
    await Bun.sleep(100);
  }
  const stderr = new Response(proc.stderr).text();
  return {
    url: `${base}/v1`,
    log: async () => {
      proc.kill();
      return stderr;
    },
    async [Symbol.asyncDispose]() {
      proc.kill();
      await proc.exited;
    },
  };
}

/** The quickstart, small: 1 epoch of 2 steps of 4 items, 4 selection and 4 test items, no call cache. */
export const SMALL_QUICKSTART = [
  "--config",
  "quickstart",
  "--set",
  "train.num_epochs=1",
  "--set",
  "train.batch_size=4",
  "--set",
  "env.train_items=8",
  "--set",
  "env.val_items=4",
  "--set",
  "env.test_items=4",
  "--no-cache",
];

/**
 * The quickstart for a one-request-at-a-time real model: 1 epoch of 2 steps of 2 items (one analyst
 * call each), 2 selection items, no noise floor and no final test pass. The call cache stays on,
 * so a resume pays nothing twice.
 */
export const TINY_QUICKSTART = [
  "--config",
  "quickstart",
  "--set",
  "train.num_epochs=1",
  "--set",
  "train.batch_size=2",
  "--set",
  "env.train_items=4",
  "--set",
  "env.val_items=2",
  "--set",
  "env.test_items=2",
  "--set",
  "evaluation.noise_floor_items=0",
  "--set",
  "evaluation.eval_test=false",
];
