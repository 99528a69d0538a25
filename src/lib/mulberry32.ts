import { sha256 } from "./hash.ts";

/** mulberry32: a small seeded generator of floats in [0, 1); the state is a 32-bit integer. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed derived from a text label (the first 8 hex digits of its sha256). */
export function seedOfLabel(label: string): number {
  return Number.parseInt(sha256(label).slice(0, 8), 16) >>> 0;
}
