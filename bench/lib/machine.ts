import { cpus, loadavg, totalmem } from "node:os";

/** One line saying what the figures were measured on, and how busy it was. */
export function machineLine(): string {
  const c = cpus();
  const [l1, l5] = loadavg();
  return `machine: ${c.length} × ${c[0]?.model?.trim() ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${l1!.toFixed(1)} (1 min) / ${l5!.toFixed(1)} (5 min) — a shared machine; figures are noisy when the load exceeds the core count`;
}

/** The 1-minute load average now. */
export function loadNow(): number {
  return loadavg()[0]!;
}

/**
 * The machine's load over a measurement: sample() at each round, text() beside its figure, e.g.
 * "load 1.2–3.4" (the 1-minute average's range over the samples).
 */
export class LoadSampler {
  private readonly samples: number[] = [];
  sample(): void {
    this.samples.push(loadNow());
  }
  text(): string {
    if (this.samples.length === 0) this.sample();
    const lo = Math.min(...this.samples);
    const hi = Math.max(...this.samples);
    return lo.toFixed(1) === hi.toFixed(1) ? `load ${lo.toFixed(1)}` : `load ${lo.toFixed(1)}–${hi.toFixed(1)}`;
  }
}
