import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
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
  /** Of cpuS, the seconds spent in the kernel (system time). */
  sysS: number | null;
  /** Peak RSS (KB) of the product until `phaseFile` appeared (polled from /proc; null when not asked or unknown). */
  peakRssBeforeKb: number | null;
}

/** The product's process: the child of /usr/bin/time when it wraps the command, else the spawned process. */
function productPid(pid: number, wrapped: boolean): number | undefined {
  if (!wrapped) return pid;
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0];
    return first ? Number(first) : undefined;
  } catch {
    return undefined;
  }
}

/** VmHWM (KB) of a live process on Linux, else undefined. */
function highWaterKb(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Run the CLI as a user would, under /usr/bin/time for its peak RSS, CPU time and bytes written
 * (when /usr/bin/time exists). With `phaseFile`, the process's high-water RSS is also polled
 * (every 25 ms, from /proc) until that file appears: the peak of the run's first phase (e.g. a
 * training run until it writes summary.json, just before report.html).
 */
export async function runMeasured(
  args: string[],
  env: Record<string, string> = {},
  opts: { phaseFile?: string } = {},
): Promise<Measured> {
  const timeBin = (await Bun.file("/usr/bin/time").exists()) ? ["/usr/bin/time", "-f", "@@time %M %O %U %S"] : [];
  const cmd = [...timeBin, ...productCommand(), ...args];
  const spawnedAt = Date.now();
  const t0 = performance.now();
  const child = spawn(cmd[0]!, cmd.slice(1), {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let before: number | undefined;
  const phaseFile = opts.phaseFile;
  const poll = phaseFile
    ? setInterval(() => {
        if (existsSync(phaseFile)) {
          clearInterval(poll);
          return;
        }
        const pid = child.pid === undefined ? undefined : productPid(child.pid, timeBin.length > 0);
        const hwm = pid === undefined ? undefined : highWaterKb(pid);
        if (hwm !== undefined) before = hwm;
      }, 25)
    : undefined;
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? 1)));
  clearInterval(poll);
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
    sysS: m ? Number(m[4]) : null,
    peakRssBeforeKb: before ?? null,
  };
}

/** Start `skillopt sim serve` on a free port; resolves with its /v1 URL. */
export async function startSimServe(
  latencyMs: number,
  extra: readonly string[] = [],
): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = Bun.spawn(
    [...productCommand(), "sim", "serve", "--port", "0", "--latency-ms", String(latencyMs), ...extra],
    {
      cwd: REPO,
      stdout: "pipe",
      stderr: "inherit",
    },
  );
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
