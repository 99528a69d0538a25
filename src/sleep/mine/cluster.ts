import type { TaskRecord } from "../types.ts";

const STOP = new Set(
  (
    "the and for with that this from into onto please can you could would should will just also then than them they what when where which while " +
    "have has had been being are was were its it's our your my me we us a an to of in on at by or is be do does did not no yes so if as all any " +
    "some more most make sure get got let lets use using how why"
  ).split(" "),
);

/** Content tokens of a text: lower-case words > 2 chars, minus stopwords. */
function contentTokens(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}_]+/u)
      .filter((t) => t.length > 2 && !STOP.has(t) && !/^\d+$/.test(t)),
  );
}

/** Jaccard similarity of two token sets. */
function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const t of a) if (b.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

const RANK = { success: 3, fail: 2, mixed: 1, unknown: 0 } as const;

function mergeInto(into: TaskRecord, other: TaskRecord): TaskRecord {
  const sessions = [...new Set([...into.source_sessions, ...other.source_sessions])];
  const hints = new Set([into.skill_hint, other.skill_hint].filter(Boolean));
  // A checkable (rule) member makes the whole cluster checkable.
  const checkable = into.reference_kind === "none" && other.reference_kind !== "none" ? other : into;
  return {
    ...checkable,
    id: into.id,
    intent: into.intent,
    source_sessions: sessions,
    outcome: RANK[other.outcome] > RANK[into.outcome] ? other.outcome : into.outcome,
    skill_hint: hints.size === 1 ? [...hints][0]! : "",
    tags: [...new Set([...checkable.tags, ...into.tags])],
  };
}

/** Merge records sharing an id (spec §4.5). */
export function dedupTasks(tasks: readonly TaskRecord[]): TaskRecord[] {
  const byId = new Map<string, TaskRecord>();
  for (const t of tasks) {
    const prev = byId.get(t.id);
    byId.set(t.id, prev ? mergeInto(prev, t) : { ...t });
  }
  return [...byId.values()];
}

/**
 * Cluster near-duplicate intents of one project (§12.1 #9): intents whose content-token Jaccard
 * is ≥ threshold merge into the first one seen; the cluster records every source session and a
 * `recurring:<n>` tag, and clusters that recur sort first (they are what a skill rule pays for).
 */
export function clusterTasks(tasks: readonly TaskRecord[], threshold = 0.6): TaskRecord[] {
  const clusters: Array<{ task: TaskRecord; tokens: Set<string>; n: number; order: number }> = [];
  tasks.forEach((t, order) => {
    const tokens = contentTokens(t.intent);
    const hit = clusters.find(
      (c) => c.task.project === t.project && c.task.origin === t.origin && jaccard(c.tokens, tokens) >= threshold,
    );
    if (hit) {
      hit.task = mergeInto(hit.task, t);
      hit.n += 1;
      for (const tok of tokens) hit.tokens.add(tok);
    } else clusters.push({ task: { ...t }, tokens, n: 1, order });
  });
  return clusters
    .map((c) => ({
      ...c,
      task:
        c.n > 1
          ? {
              ...c.task,
              tags: [
                ...c.task.tags.filter((x) => !x.startsWith("recurring:")),
                `recurring:${c.task.source_sessions.length}`,
              ],
            }
          : c.task,
    }))
    .sort((a, b) => b.task.source_sessions.length - a.task.source_sessions.length || a.order - b.order)
    .map((c) => c.task);
}
