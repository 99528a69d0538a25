import { isFailure } from "./evaluate.ts";
import { fill, metaSection, skillSection, trajectoriesWithinBudget, trajectoryIndex, userMessage } from "./messages.ts";
import { seededShuffle } from "./random.ts";
import type { RolloutResult } from "./ports.ts";
import { analystSchema, payloadKey } from "./schemas.ts";
import { askOptimizer, type StageContext } from "./stage-context.ts";
import type { Patch } from "./schemas.ts";

/** The analyst's answer for one minibatch (spec §4.4.2). */
export interface RawPatch {
  tag: string;
  source_type: "failure" | "success";
  batch_size: number;
  failure_summary?: unknown[];
  success_patterns?: unknown[];
  patch: Patch;
  appendix_notes: string[];
}

interface ReflectInput {
  results: RolloutResult[];
  skill: string;
  batchSeed: number;
  step: number;
  /** The accumulation batch, when a step has more than one. */
  batch: number | null;
  stepBuffer: string;
  meta: string;
}

function chunk<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

/** Appendix notes from an analyst answer: a list of strings, one string, or dicts with note/content. */
function parseNotes(raw: unknown): string[] {
  const list = Array.isArray(raw) ? raw : raw === undefined || raw === null ? [] : [raw];
  return list
    .map((x) =>
      typeof x === "string"
        ? x
        : x && typeof x === "object"
          ? String((x as Record<string, unknown>).note ?? (x as Record<string, unknown>).content ?? "")
          : "",
    )
    .map((s) => s.trim())
    .filter(Boolean);
}

/**
 * Minibatch reflection (spec §2.3 ②): failures and successes are shuffled with the batch seed
 * (and +1), chunked into minibatches of M, and every analyst call runs in the same round.
 * Results come back in a fixed order (failures then successes, by index), so the merge input is
 * deterministic (upstream used completion order).
 */
export async function reflect(sc: StageContext, input: ReflectInput): Promise<{ patches: RawPatch[]; calls: number }> {
  const { cfg, mode } = sc;
  const M = cfg.gradient.minibatch_size;
  const L = cfg.optimizer.learning_rate;
  const failures = seededShuffle(input.batchSeed, input.results.filter(isFailure));
  const successes = cfg.gradient.failure_only
    ? []
    : seededShuffle(
        input.batchSeed + 1,
        input.results.filter((r) => !isFailure(r)),
      );
  const jobs = [
    ...chunk(failures, M).map((items, i) => ({
      side: "failure" as const,
      tag: `minibatch_fail_${String(i).padStart(3, "0")}`,
      items,
    })),
    ...chunk(successes, M).map((items, i) => ({
      side: "success" as const,
      tag: `minibatch_succ_${String(i).padStart(3, "0")}`,
      items,
    })),
  ];
  sc.events.emit({
    type: "reflect_start",
    step: input.step,
    batch: input.batch,
    failures: failures.length,
    failureGroups: chunk(failures, M).length,
    successes: successes.length,
    successGroups: chunk(successes, M).length,
    minibatch: M,
    lr: L,
    workers: cfg.gradient.analyst_workers,
  });
  const sar = cfg.optimizer.use_skill_aware_reflection && mode !== "full_rewrite_minibatch";
  const out = await Promise.all(jobs.map((job) => analyst(sc, input, job.side, job.tag, job.items, sar)));
  const patches = out.filter((p): p is RawPatch => p !== undefined);
  return { patches, calls: jobs.length };
}

async function analyst(
  sc: StageContext,
  input: ReflectInput,
  side: "failure" | "success",
  tag: string,
  items: RolloutResult[],
  sar: boolean,
): Promise<RawPatch | undefined> {
  const { cfg, mode, prompts } = sc;
  const L = cfg.optimizer.learning_rate;
  const key = payloadKey(mode);
  const unit = mode === "patch" ? "edits" : "suggestions";
  const wantNotes = sar && (side === "failure" || cfg.optimizer.skill_aware_appendix_source !== "failure_only");
  const format =
    mode === "patch"
      ? prompts.format_patch
      : mode === "rewrite_from_suggestions"
        ? prompts.format_rewrite
        : prompts.format_full_rewrite;
  const system = [
    fill(side === "failure" ? prompts.analyst_failure : prompts.analyst_success, { budget: L, unit }),
    fill(format, { budget: L, source: side }),
    wantNotes ? (side === "failure" ? prompts.sar_failure : prompts.sar_success) : "",
  ]
    .filter(Boolean)
    .join("\n\n");
  const trajectories = trajectoriesWithinBudget(items, sc.bench);
  const title = side === "failure" ? "Failed Trajectories" : "Successful Trajectories";
  const user = userMessage(
    [
      skillSection(input.skill),
      sc.bench.editScope
        ? {
            title: "What May Change",
            body: `These tasks train only ${sc.bench.editScope.label}. Target your edits at that text; an edit anywhere else is refused.`,
          }
        : undefined,
      mode === "full_rewrite_minibatch"
        ? {
            title: "Update Format",
            body: "Return exactly one complete replacement skill in `skill_candidates`; do not return edits.",
          }
        : { title: `${mode === "patch" ? "Edits" : "Suggestions"} Budget`, body: `Produce at most L=${L} ${unit}.` },
      input.stepBuffer ? { title: "Previous Steps in This Epoch", body: input.stepBuffer } : undefined,
      metaSection(input.meta),
      {
        title: `${title} (${items.length} total)`,
        body: `${trajectoryIndex(trajectories)}\n\nThe full trajectories are in the JSON block below.`,
      },
    ],
    {
      stage: "analyst",
      side,
      update_mode: mode,
      budget: mode === "full_rewrite_minibatch" ? null : L,
      skill_aware: wantNotes,
      has_meta_skill: Boolean(input.meta.trim()),
      trajectories,
    },
  );
  const full = mode === "full_rewrite_minibatch";
  const value = await askOptimizer(sc, "analyst", system, user, analystSchema(mode), {
    maxTokens: full ? 64000 : 16384,
    // A schema-constrained small model can answer `{}`: valid, and as useless as prose.
    empty: (v) =>
      v.patch !== undefined && v.patch !== null
        ? undefined
        : wantNotes && parseNotes(v.appendix_notes).length
          ? undefined
          : "empty: neither a patch nor appendix notes",
  });
  if (!value) return undefined;
  const notes = wantNotes ? parseNotes(value.appendix_notes) : [];
  const patch = value.patch as Patch | undefined;
  if (!patch) {
    if (!notes.length) return undefined;
    return {
      tag,
      source_type: side,
      batch_size: items.length,
      patch: { reasoning: "execution-lapse only", [key]: [] },
      appendix_notes: notes,
    };
  }
  const list = Array.isArray(patch[key]) ? (patch[key] as unknown[]) : [];
  const capped = full ? list.slice(0, 1) : list.slice(0, L);
  const batchSize = Math.max(Number.parseInt(String(value.batch_size ?? items.length), 10) || items.length, 1);
  return {
    tag,
    source_type: side,
    batch_size: batchSize,
    ...(value.failure_summary ? { failure_summary: value.failure_summary } : {}),
    ...(value.success_patterns ? { success_patterns: value.success_patterns } : {}),
    patch: { ...patch, [key]: capped },
    appendix_notes: notes,
  };
}

/** Split raw patches into failure and success patch lists with support defaults (spec §2.3). */
export function normalisePatches(
  raws: readonly RawPatch[],
  mode: StageContext["mode"],
): { failure: Patch[]; success: Patch[] } {
  const key = payloadKey(mode);
  const failure: Patch[] = [];
  const success: Patch[] = [];
  for (const raw of raws) {
    const items = (raw.patch[key] as Record<string, unknown>[] | undefined) ?? [];
    if (!items.length) continue;
    const support = Math.max(raw.batch_size, 1);
    const withDefaults = items.map((it) => ({ source_type: raw.source_type, support_count: support, ...it }));
    (raw.source_type === "success" ? success : failure).push({ ...raw.patch, [key]: withDefaults });
  }
  return { failure, success };
}
