import { mulberry32, seedOfLabel } from "../lib/index.ts";
import type { Random } from "./ports.ts";

/** A seeded PRNG (mulberry32); `fork` derives an independent stream from a label. */
function createRandom(seed: number | string): Random {
  const next = mulberry32(seedOfLabel(`skillopt/${seed}`));
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
