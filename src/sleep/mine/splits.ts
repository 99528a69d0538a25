import { DataError, sha256 } from "../../lib/index.ts";
import type { TaskRecord } from "../types.ts";

function bucketHash(seed: number, id: string): bigint {
  return BigInt(`0x${sha256(`${seed}${id}`)}`);
}

/**
 * Assign train/val/test by `sha256(str(seed) + id) % 100` (spec §4.7; kept for compatibility, so a
 * task's split is stable across nights). Dream copies are always train. Returns new records.
 */
export function assignSplits(tasks: readonly TaskRecord[], val: number, test: number, seed: number): TaskRecord[] {
  if (val < 0 || val > 1 || test < 0 || test > 1 || val + test >= 1) {
    throw new DataError(
      `invalid split fractions: val_fraction=${val}, test_fraction=${test} (each in [0,1], sum < 1)`,
      {
        data: { input: "val_fraction", problem: "invalid_fractions" },
      },
    );
  }
  const valCut = BigInt(Math.round(val * 100));
  const testCut = valCut + BigInt(Math.round(test * 100));
  const out = tasks.map((t) => {
    if (t.origin === "dream") return { ...t, split: "train" as const };
    const b = bucketHash(seed, t.id) % 100n;
    return { ...t, split: b < valCut ? ("val" as const) : b < testCut ? ("test" as const) : ("train" as const) };
  });
  const real = out.filter((t) => t.origin !== "dream");
  if (real.length < 2) return out;
  const key = (t: TaskRecord) => bucketHash(seed, t.id);
  const smallest = (xs: TaskRecord[]) =>
    xs.reduce((a, b) => (key(b) < key(a) || (key(b) === key(a) && b.id < a.id) ? b : a));
  if (!real.some((t) => t.split === "val")) {
    const trains = real.filter((t) => t.split === "train");
    if (trains.length) smallest(trains).split = "val";
  }
  if (!real.some((t) => t.split === "train")) {
    const vals = real.filter((t) => t.split === "val");
    if (vals.length > 1) smallest(vals).split = "train";
  }
  return out;
}

/**
 * Top the val split up to `minVal` real tasks by promoting the train tasks with the smallest split
 * hash (deterministic, so a task keeps its split across nights), as long as one train task is left.
 * A one-task gate is a coin flip (§12.2 tiny held-out sets).
 */
export function ensureMinVal(tasks: readonly TaskRecord[], minVal: number, seed: number): TaskRecord[] {
  const out = tasks.map((t) => ({ ...t }));
  const key = (t: TaskRecord) => bucketHash(seed, t.id);
  const trains = out
    .filter((t) => t.split === "train" && t.origin === "real")
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1));
  let nVal = out.filter((t) => t.split === "val").length;
  while (nVal < minVal && trains.length > 1) {
    trains.shift()!.split = "val";
    nVal++;
  }
  return out;
}
