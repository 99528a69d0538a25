import { sha256 } from "../../lib/index.ts";

/** Deterministic draws in [0,1) for a seed and a label (same request → same draw). */
export function makeDraw(seed: number): (label: string) => number {
  return (label) => Number.parseInt(sha256(`sim/${seed}/${label}`).slice(0, 12), 16) / 2 ** 48;
}

export function pickBy<T>(draw: number, xs: readonly T[]): T {
  return xs[Math.min(xs.length - 1, Math.floor(draw * xs.length))]!;
}
