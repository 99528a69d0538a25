import { metaSection, skillSection, userMessage } from "./messages.ts";
import { LrDecisionSchema, type Patch, payloadKey, RankingSchema } from "./schemas.ts";
import type { LrDecision } from "./records.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";

type Item = Record<string, unknown>;

/** One line describing a patch item for ranking / LR prompts (no truncation, spec §2.6). */
function describeItem(it: Item): string {
  if ("op" in it)
    return `op=${it.op}  target='${it.target ?? ""}'  content='${it.content ?? ""}'  support=${it.support_count ?? 1}`;
  if ("instruction" in it)
    return `type=${it.type} title='${it.title}' instruction='${it.instruction}' priority=${it.priority_hint ?? ""} support=${it.support_count ?? 1}`;
  const preview = String(it.new_skill ?? "").slice(0, 400);
  return `title=${it.title ?? ""} change_summary=${JSON.stringify(it.change_summary ?? [])} source=${it.source_type ?? ""} support=${it.support_count ?? 1} \
new_skill_preview=${JSON.stringify(preview)}`;
}

/** Coerce the model's learning_rate (spec §2.6): bool invalid, int ≥ 0, integral float, else first integer in the text. */
function coerceLr(raw: unknown): number | undefined {
  if (typeof raw === "boolean") return undefined;
  if (typeof raw === "number") return Number.isInteger(raw) ? Math.max(0, raw) : undefined;
  const m = /-?\d+/.exec(String(raw ?? ""));
  return m ? Math.max(0, Number.parseInt(m[0], 10)) : undefined;
}

/** The autonomous learning-rate call: the optimizer decides how many items to apply. */
export async function autonomousLr(
  sc: StageContext,
  skill: string,
  meta: string,
  merged: Patch,
  evidence: Record<string, unknown>,
  stepBuffer: string,
): Promise<LrDecision> {
  const list = (merged[payloadKey(sc.mode)] as Item[] | undefined) ?? [];
  const user = userMessage(
    [
      metaSection(meta),
      skillSection(skill),
      {
        title: "Current Step Evidence",
        body: Object.entries(evidence)
          .map(([k, val]) => `${k}=${typeof val === "number" && !Number.isInteger(val) ? val.toFixed(6) : val}`)
          .join("\n"),
      },
      { title: "Proposed Update Items", body: list.map((it, i) => `[${i}] ${describeItem(it)}`).join("\n") },
      {
        title: "Decision",
        body: `Decide how many of these ${list.length} items to apply this step. Do not rank them.`,
      },
      stepBuffer ? { title: "Previous Steps in This Epoch", body: stepBuffer } : undefined,
    ],
    { stage: "lr_autonomous", update_mode: sc.mode, evidence, items: list },
  );
  const value = await askOptimizer(sc, "lr_autonomous", sc.prompts.lr_autonomous, user, LrDecisionSchema);
  const decided = value ? coerceLr(value.learning_rate) : undefined;
  const chosen = Math.min(decided ?? 0, list.length);
  return {
    learning_rate: chosen,
    raw_learning_rate: value?.learning_rate ?? null,
    available_update_items: list.length,
    clamped: decided !== undefined && decided > list.length,
    fallback: decided === undefined,
    reasoning: String(value?.reasoning ?? ""),
    confidence: String(value?.confidence ?? ""),
    risk_notes: Array.isArray(value?.risk_notes) ? value.risk_notes.map(String) : [],
  };
}

/**
 * Keep at most `budget` items: unchanged when they fit, else one ranking call whose valid indices
 * (in range, unseen, in order) are kept; fallback = the first `budget` items. A budget of 0 keeps
 * nothing (spec §10.6: upstream still applied one edit).
 */
export async function rankAndSelect(
  sc: StageContext,
  skill: string,
  meta: string,
  merged: Patch,
  budget: number,
): Promise<{ patch: Patch; calls: number }> {
  const key = payloadKey(sc.mode);
  const list = (merged[key] as Item[] | undefined) ?? [];
  if (budget <= 0)
    return {
      patch: { ...merged, reasoning: `${merged.reasoning ?? ""} [budget 0: nothing selected]`, [key]: [] },
      calls: 0,
    };
  if (list.length <= budget) return { patch: merged, calls: 0 };
  const label = sc.mode === "patch" ? "edits" : "suggestions";
  const user = userMessage(
    [
      metaSection(meta),
      skillSection(skill),
      {
        title: `${sc.mode === "patch" ? "Edits" : "Suggestions"} Pool (${list.length} ${label}, budget=${budget})`,
        body: `${list.map((it, i) => `[${i}] ${describeItem(it)}`).join("\n")}\n\nSelect the ${budget} most important and return their 0-based \
indices in priority order.${
          sc.mode === "patch"
            ? ""
            : " These are suggestions for a whole-document rewrite: also weigh rewrite utility, how much " +
              "an item helps restructure or clarify the skill."
        }`,
      },
    ],
    { stage: "ranking", update_mode: sc.mode, budget, items: list },
  );
  const value = await askOptimizer(sc, "ranking", sc.prompts.ranking, user, RankingSchema);
  const kept: number[] = [];
  for (const raw of value?.selected_indices ?? []) {
    if (kept.length >= budget) break;
    const x = typeof raw === "string" && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
    if (typeof x === "number" && Number.isInteger(x) && x >= 0 && x < list.length && !kept.includes(x)) kept.push(x);
  }
  if (kept.length) {
    return {
      patch: {
        reasoning: `${merged.reasoning ?? ""} [optimizer-ranked: selected ${kept.length}/${list.length} ${label}]`,
        [key]: kept.map((i) => list[i]!),
        ranking_details: value,
      },
      calls: 1,
    };
  }
  return {
    patch: {
      reasoning: `${merged.reasoning ?? ""} [fallback truncated ${list.length}->${budget} ${label}]`,
      [key]: list.slice(0, budget),
    },
    calls: 1,
  };
}
