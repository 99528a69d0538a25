import type { TaskRecord } from "./types.ts";

const WRAPPERS = [
  (s: string) => `Quick one: ${s}`,
  (s: string) => `Please handle this request: ${s}`,
  (s: string) => `For the daily report: ${s}`,
];

/** Synthetic variants of each real train task (spec §5.7): train only, never archived, never gated on. */
export function dreamAugment(tasks: readonly TaskRecord[], factor: number): TaskRecord[] {
  if (factor <= 0) return [...tasks];
  const extra = tasks
    .filter((t) => t.split === "train" && t.origin === "real")
    .flatMap((t) =>
      Array.from(
        { length: factor },
        (_, k): TaskRecord => ({
          ...t,
          id: `${t.id}_dream${k}`,
          intent: WRAPPERS[k % WRAPPERS.length]!(t.intent),
          tags: [...t.tags, "dream"],
          split: "train",
          origin: "dream",
          derived_from: t.id,
        }),
      ),
    );
  return [...tasks, ...extra];
}

const tokens = (s: string) => new Set((s.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((t) => t.length > 2));

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const t of a) if (b.has(t)) inter++;
  const union = a.size + b.size - inter;
  return union ? inter / union : 0;
}

/**
 * Associative recall (spec §5.8): the archived train tasks most similar (max Jaccard over
 * tonight's train intents) are replayed again as `recall:<id>` train copies. Tonight's ids, their
 * sources and tonight's val/test ids are never recalled, so the gate slice stays unseen.
 */
export function recallTasks(tonight: readonly TaskRecord[], archive: readonly TaskRecord[], k: number): TaskRecord[] {
  if (k <= 0) return [];
  const query = tonight.filter((t) => t.split === "train").map((t) => tokens(t.intent));
  const blocked = new Set(tonight.flatMap((t) => [t.id, t.derived_from].filter(Boolean)));
  const seen = new Set<string>();
  const scored = archive
    .filter(
      (t) => t.origin === "real" && t.split === "train" && !blocked.has(t.id) && !seen.has(t.id) && seen.add(t.id),
    )
    .map((t) => {
      const tk = tokens(t.intent);
      return { t, sim: tk.size ? Math.max(0, ...query.map((q) => jaccard(q, tk))) : 0 };
    })
    .filter((x) => x.sim > 0)
    .sort((a, b) => b.sim - a.sim || (a.t.id < b.t.id ? -1 : 1))
    .slice(0, k);
  return scored.map(({ t }) => ({
    ...t,
    id: `recall:${t.id}`,
    tags: [...t.tags, "recall"],
    split: "train",
    origin: "real",
    derived_from: t.id,
  }));
}

/**
 * A persistent gate slice (§12.2 tiny held-out sets): archived val tasks of the project from
 * earlier nights join tonight's val until it holds `target` tasks, newest first, skipping ids
 * already present tonight.
 */
export function persistentVal(
  tonight: readonly TaskRecord[],
  archive: readonly TaskRecord[],
  target: number,
): TaskRecord[] {
  const have = tonight.filter((t) => t.split === "val").length;
  if (have >= target) return [];
  const ids = new Set(tonight.map((t) => t.id));
  const out: TaskRecord[] = [];
  for (const t of archive) {
    if (out.length + have >= target) break;
    if (t.split !== "val" || t.origin !== "real" || t.reference_kind === "none" || ids.has(t.id)) continue;
    ids.add(t.id);
    out.push({ ...t, tags: t.tags.includes("archived") ? t.tags : [...t.tags, "archived"] });
  }
  return out;
}
