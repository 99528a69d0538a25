import { sha256 } from "../lib/index.ts";
import type { Random } from "./ports.ts";

function stateOf(label: string): number {
  return Number.parseInt(sha256(label).slice(0, 8), 16) >>> 0;
}

/** A seeded PRNG (mulberry32); `fork` derives an independent stream from a label. */
function createRandom(seed: number | string): Random {
  let a = stateOf(`skillopt/${seed}`);
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Random = {
    next,
    int: (max) => Math.floor(next() * max),
    shuffle<T>(items: readonly T[]): T[] {
      const out = [...items];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    },
    fork: (label) => createRandom(`${seed}/${label}`),
  };
  return rng;
}

/** Shuffle with a fresh stream for an integer seed (upstream's `Random(seed).shuffle`). */
export function seededShuffle<T>(seed: number, items: readonly T[]): T[] {
  return createRandom(seed).shuffle(items);
}
