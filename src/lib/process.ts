/**
 * Whether a process with this pid exists (signal 0 probes without sending anything). EPERM means it
 * exists but belongs to someone else; a pid that is not a positive integer names no process.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** How to start skillopt again from inside itself: the compiled binary, or bun + the entry file. */
export function selfCommand(): string[] {
  const main = Bun.main;
  if (/\.[cm]?[jt]s$/.test(main) && !main.startsWith("/$bunfs") && !/^[A-Z]:[\\/]~BUN/.test(main))
    return [process.execPath, main];
  return [process.execPath];
}
