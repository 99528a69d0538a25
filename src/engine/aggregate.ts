import { metaSection, skillSection, userMessage } from "./messages.ts";
import { type Patch, patchSchema, payloadKey } from "./schemas.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";
import { mapLimit } from "./pool.ts";

type Item = Record<string, unknown>;
/** Which trajectories a group of patches came from. */
type Side = "failure" | "success";

function items(p: Patch, key: string): Item[] {
  return Array.isArray(p[key]) ? (p[key] as Item[]) : [];
}

async function mergeCall(
  sc: StageContext,
  skill: string,
  meta: string,
  group: Patch[],
  level: number,
  side: Side,
): Promise<Patch> {
  const key = payloadKey(sc.mode);
  const user = userMessage(
    [
      metaSection(meta),
      skillSection(skill),
      {
        title: `Patches to merge (${group.length} total, merge level ${level})`,
        body: `${
          side === "failure"
            ? "These patches come from FAILED trajectories: fix the failures, resolve conflicts, and make sure no two " +
              "items target the same text."
            : "These patches come from SUCCESSFUL trajectories: be conservative and keep only patterns the skill does " +
              "not cover yet."
        } The patches are in the JSON block below.`,
      },
    ],
    { stage: "merge", side, update_mode: sc.mode, level, patches: group },
  );
  const system = `${sc.prompts.merge}\n\n${formatFor(sc)}`;
  const full = sc.mode === "full_rewrite_minibatch";
  const value = await askOptimizer(sc, "merge", system, user, patchSchema(sc.mode), {
    maxTokens: full ? 64000 : 16384,
  });
  if (value && Array.isArray(value[key])) {
    const merged = (value[key] as Item[]).map((it) => ({ ...it, merge_level: level }));
    return { ...value, [key]: full ? merged.slice(0, 1) : merged };
  }
  sc.events.emit({ type: "warning", code: "merge_fallback", side, level, patches: group.length });
  return {
    reasoning: "fallback concatenation",
    [key]: group.flatMap((p) => items(p, key).map((it) => ("merge_level" in it ? it : { ...it, merge_level: level }))),
  };
}

function formatFor(sc: StageContext): string {
  return sc.mode === "patch"
    ? sc.prompts.merge_format_patch
    : sc.mode === "rewrite_from_suggestions"
      ? sc.prompts.merge_format_rewrite
      : sc.prompts.merge_format_full_rewrite;
}

/** Merge one group level by level: chunks of max(2, b); singletons pass through (spec §2.5). */
async function hierarchical(
  sc: StageContext,
  skill: string,
  meta: string,
  patches: Patch[],
  side: Side,
): Promise<{ patch: Patch; calls: number }> {
  const key = payloadKey(sc.mode);
  if (!patches.length) return { patch: { reasoning: "no patches", [key]: [] }, calls: 0 };
  if (patches.length === 1) return { patch: patches[0]!, calls: 0 };
  const b = Math.max(2, sc.cfg.gradient.merge_batch_size);
  let level = 1;
  let current = patches;
  let calls = 0;
  while (current.length > 1) {
    const groups: Patch[][] = [];
    for (let i = 0; i < current.length; i += b) groups.push(current.slice(i, i + b));
    sc.events.emit({
      type: "aggregate_level",
      side,
      level,
      patches: current.length,
      groups: groups.length,
      batchSize: b,
    });
    calls += groups.filter((g) => g.length > 1).length;
    current = await mapLimit(groups, sc.cfg.gradient.analyst_workers, (g) =>
      g.length === 1 ? Promise.resolve(g[0]!) : mergeCall(sc, skill, meta, g, level, side),
    );
    level += 1;
  }
  return { patch: current[0]!, calls };
}

/**
 * Failure-first hierarchical merge. The failure and success groups are merged in the same round
 * (upstream ran them one after the other); the final merge runs only when both are non-empty.
 */
export async function aggregate(
  sc: StageContext,
  skill: string,
  meta: string,
  failure: Patch[],
  success: Patch[],
): Promise<{ patch: Patch; calls: number }> {
  const key = payloadKey(sc.mode);
  const [f, s] = await Promise.all([
    hierarchical(sc, skill, meta, failure, "failure"),
    hierarchical(sc, skill, meta, success, "success"),
  ]);
  const fi = items(f.patch, key);
  const si = items(s.patch, key);
  const calls = f.calls + s.calls;
  if (!fi.length && !si.length) return { patch: { reasoning: "no updates from either group", [key]: [] }, calls };
  if (!si.length) return { patch: f.patch, calls };
  if (!fi.length) return { patch: s.patch, calls };
  const full = sc.mode === "full_rewrite_minibatch";
  const intro = full
    ? `Two pre-merged groups: group 1 from failed trajectories (${fi.length} candidate), group 2 from successful trajectories (${si.length} candidate). \
Combine \
them into exactly one complete skill.`
    : `Two pre-merged groups: group 1 is failure-driven (HIGH priority, ${fi.length} items), group 2 is success-driven (lower priority, ${si.length} items).`;
  const user = userMessage(
    [
      metaSection(meta),
      skillSection(skill),
      { title: "Pre-merged groups", body: `${intro} The groups are in the JSON block below.` },
    ],
    {
      stage: "merge_final",
      update_mode: sc.mode,
      groups: [f.patch, s.patch],
    },
  );
  const value = await askOptimizer(
    sc,
    "merge",
    `${sc.prompts.merge_final}\n\n${formatFor(sc)}`,
    user,
    patchSchema(sc.mode),
    {
      maxTokens: full ? 64000 : 16384,
    },
  );
  if (value && Array.isArray(value[key]) && (value[key] as unknown[]).every((x) => x && typeof x === "object")) {
    return { patch: full ? { ...value, [key]: (value[key] as Item[]).slice(0, 1) } : value, calls: calls + 1 };
  }
  sc.events.emit({ type: "warning", code: "final_merge_fallback", failure_items: fi.length, success_items: si.length });
  return { patch: { reasoning: "fallback: failure first, then success", [key]: [...fi, ...si] }, calls: calls + 1 };
}
