import { cpus, loadavg, totalmem } from "node:os";

/** One line saying what the figures were measured on, and how busy it was. */
export function machineLine(): string {
  const c = cpus();
  const [l1, l5] = loadavg();
  return `machine: ${c.length} × ${c[0]?.model?.trim() ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, load average ${l1!.toFixed(1)} (1 min) / ${l5!.toFixed(1)} (5 min) — a shared machine; figures are noisy when the load exceeds the core count`;
}
