import { readFileSync } from "node:fs";

/**
 * Whether a process with this pid exists and can still run (signal 0 probes without sending
 * anything). EPERM means it exists but belongs to someone else; a pid that is not a positive integer
 * names no process. A process that has ended but that its parent has not reaped yet (a zombie), or
 * one already dying of a SIGKILL, still answers signal 0: on Linux its state in /proc tells, and it
 * counts as gone, so a run killed with kill -9 a moment ago is not held by its corpse.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  return !endedOnLinux(pid);
}

/** /proc/PID/status says the process is a zombie, dead, or has a SIGKILL pending (Linux only). */
function endedOnLinux(pid: number): boolean {
  if (process.platform !== "linux") return false;
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "latin1");
  } catch {
    return false; // no /proc (or it vanished between the probe and the read): trust the probe
  }
  const state = /^State:\s*(\S)/m.exec(status)?.[1];
  if (state === "Z" || state === "X" || state === "x") return true;
  // SIGKILL is signal 9: bit 8 of the pending masks (per thread and shared), in hexadecimal.
  for (const key of ["SigPnd", "ShdPnd"]) {
    const hex = new RegExp(`^${key}:\\s*([0-9a-f]+)`, "m").exec(status)?.[1];
    if (hex && (BigInt(`0x${hex}`) & 0x100n) !== 0n) return true;
  }
  return false;
}

/** How to start skillopt again from inside itself: the compiled binary, or bun + the entry file. */
export function selfCommand(): string[] {
  // process.argv[1] is Bun.main in every real start (bun + the entry file, a symlink to it, the
  // compiled binary's /$bunfs path); unlike Bun.main, a caller running the CLI in its own process
  // (test/support/cli.ts) can set it to the entry the command tree would have been started from.
  const main = process.argv[1] ?? Bun.main;
  if (/\.[cm]?[jt]s$/.test(main) && !main.startsWith("/$bunfs") && !/^[A-Z]:[\\/]~BUN/.test(main))
    return [process.execPath, main];
  return [process.execPath];
}
