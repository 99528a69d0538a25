/** Progress of one labelled unit of work (rollouts, evaluations). */
interface ProgressSink {
  update(label: string, done: number, total: number): void;
  /** Remove a bar from the terminal before a normal line is written. */
  clear(): void;
}

const WIDTH = 24;

/**
 * A progress bar redrawn in place on a TTY; otherwise plain lines, at most one per label every
 * `intervalMs` plus one when a label completes.
 */
export function createProgress(
  write: (s: string) => void,
  opts: { tty: boolean; intervalMs?: number; now?: () => number },
): ProgressSink {
  const now = opts.now ?? (() => Date.now());
  const interval = opts.intervalMs ?? 5000;
  const last = new Map<string, number>();
  let drawn = false;
  let lastDraw = 0;
  return {
    update(label, done, total) {
      if (opts.tty) {
        const t = now();
        if (done < total && done > 1 && t - lastDraw < 80) return;
        lastDraw = t;
        const filled = total > 0 ? Math.round((done / total) * WIDTH) : WIDTH;
        write(`\r\u001b[2K  [${"█".repeat(filled)}${"░".repeat(WIDTH - filled)}] ${label} ${done}/${total}`);
        drawn = true;
        if (done >= total) {
          write("\r\u001b[2K");
          drawn = false;
        }
        return;
      }
      const t = now();
      const start = last.get(label);
      if (start === undefined) last.set(label, t);
      if (done >= total || (start !== undefined && t - start >= interval)) {
        write(`    [progress] ${label} ${done}/${total}\n`);
        last.set(label, t);
      }
      if (done >= total) last.delete(label);
    },
    clear() {
      if (drawn) {
        write("\r\u001b[2K");
        drawn = false;
      }
    },
  };
}
