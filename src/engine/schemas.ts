import * as v from "valibot";
import type { UpdateMode } from "./settings.ts";

// Models send null for absent fields as often as they omit them.
const optStr = v.nullish(v.string());
const strList = v.nullish(
  v.union([
    v.array(v.string()),
    v.pipe(
      v.string(),
      v.transform((x) => [x]),
    ),
  ]),
);
const optAny = v.optional(v.unknown());

const EditSchema = v.looseObject({
  op: v.picklist(
    ["append", "insert_after", "replace", "delete"],
    "op must be one of append, insert_after, replace, delete",
  ),
  target: optStr,
  content: optStr,
  /** A skill package's file the edit changes (absent = SKILL.md). */
  file: optStr,
  support_count: optAny,
  source_type: optStr,
});

const SuggestionSchema = v.looseObject({
  type: v.string(),
  title: v.string(),
  motivation: optStr,
  instruction: v.string(),
  priority_hint: optStr,
  support_count: optAny,
  source_type: optStr,
});

const CandidateSchema = v.looseObject({
  title: optStr,
  change_summary: strList,
  new_skill: v.string(),
  support_count: optAny,
  source_type: optStr,
});

/** Payload key of a patch per update mode (spec §1.4). */
export function payloadKey(mode: UpdateMode): "edits" | "revise_suggestions" | "skill_candidates" {
  return mode === "patch" ? "edits" : mode === "rewrite_from_suggestions" ? "revise_suggestions" : "skill_candidates";
}

function itemSchema(mode: UpdateMode) {
  return mode === "patch" ? EditSchema : mode === "rewrite_from_suggestions" ? SuggestionSchema : CandidateSchema;
}

/** A patch `{reasoning, <payload>: [...]}` for the mode. */
export function patchSchema(mode: UpdateMode) {
  return v.looseObject({ reasoning: optStr, [payloadKey(mode)]: v.array(itemSchema(mode)) });
}

/** The analyst's whole answer (spec §4.4.2); `patch` may be absent when only appendix notes came back. */
export function analystSchema(mode: UpdateMode) {
  return v.looseObject({
    batch_size: optAny,
    failure_summary: v.optional(v.array(v.looseObject({ failure_type: optStr, count: optAny, description: optStr }))),
    success_patterns: v.optional(v.array(v.unknown())),
    patch: v.optional(patchSchema(mode)),
    appendix_notes: optAny,
  });
}

export const RankingSchema = v.looseObject({ reasoning: optStr, selected_indices: v.array(v.unknown()) });

export const RewriteSchema = v.looseObject({
  reasoning: optStr,
  change_summary: strList,
  new_skill: v.pipe(
    v.string(),
    v.check((s) => s.trim().length > 0, "new_skill must not be empty"),
  ),
});

export const LrDecisionSchema = v.looseObject({
  learning_rate: v.unknown(),
  reasoning: optStr,
  confidence: optStr,
  risk_notes: v.optional(v.array(v.unknown())),
});

export const SlowUpdateSchema = v.looseObject({ reasoning: optStr, slow_update_content: v.string() });
/** The shortened skill (pool-step.ts, under objective: weighted). */
export const ShortenSchema = v.looseObject({ reasoning: optStr, skill: v.string() });
export const MetaSkillSchema = v.looseObject({ reasoning: optStr, meta_skill_content: v.string() });
export const AppendixSchema = v.looseObject({ appendix_notes: v.array(v.string()) });

export type Patch = Record<string, unknown>;
