import { spawn } from "node:child_process";
import { join } from "node:path";

export const REPO = join(import.meta.dir, "..", "..");

/** The command that runs the product: the compiled binary in SKILLOPT_BIN, else `bun src/main.ts`. */
export function productCommand(): string[] {
  const bin = process.env.SKILLOPT_BIN;
  return bin ? [bin] : [process.execPath, join(REPO, "src", "main.ts")];
}

export interface Measured {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall seconds from spawn to exit, and the spawn time (ms epoch). */
  wallS: number;
  spawnedAt: number;
  /** Peak RSS (KB) and bytes written by the process (dirtied pages, from /usr/bin/time's %O × 512). */
  peakRssKb: number | null;
  bytesWritten: number | null;
  cpuS: number | null;
}

/**
 * Run the CLI as a user would, under /usr/bin/time for its peak RSS, CPU time and bytes written
 * (when /usr/bin/time exists).
 */
export async function runMeasured(args: string[], env: Record<string, string> = {}): Promise<Measured> {
  const timeBin = (await Bun.file("/usr/bin/time").exists()) ? ["/usr/bin/time", "-f", "@@time %M %O %U %S"] : [];
  const cmd = [...timeBin, ...productCommand(), ...args];
  const spawnedAt = Date.now();
  const t0 = performance.now();
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  const wallS = (performance.now() - t0) / 1000;
  const m = /@@time (\d+) (\d+) ([\d.]+) ([\d.]+)/.exec(stderr);
  return {
    code,
    stdout,
    stderr: stderr.replace(/@@time .*\n?/, ""),
    wallS,
    spawnedAt,
    peakRssKb: m ? Number(m[1]) : null,
    bytesWritten: m ? Number(m[2]) * 512 : null,
    cpuS: m ? Number(m[3]) + Number(m[4]) : null,
  };
}

/** Start `skillopt sim serve` on a free port; resolves with its /v1 URL. */
export async function startSimServe(latencyMs: number): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn([...productCommand(), "sim", "serve", "--port", "0", "--latency-ms", String(latencyMs)], {
    cwd: REPO,
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let banner = "";
  while (!banner.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    banner += new TextDecoder().decode(value);
  }
  const url = /(http:\/\/\S+\/v1)/.exec(banner)?.[1];
  if (!url) {
    proc.kill();
    throw new Error(`skillopt sim serve did not start: ${banner}`);
  }
  return {
    url,
    stop: async () => {
      proc.kill();
      await proc.exited;
    },
  };
}
