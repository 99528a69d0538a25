import type { ContextWindow, SkilloptModelClient } from "../backends/index.ts";
import type { TrainConfig } from "../config/index.ts";
import { normalizeUpdateMode } from "../engine/index.ts";
import { ModelUnfitError } from "../lib/index.ts";
import { PROMPTS } from "../prompts/index.ts";
import { roleLabel } from "./no-answer.ts";

/** Characters per token assumed for a prompt's lower bound (English prose and Markdown run about 4). */
const CHARS_PER_TOKEN = 4;
const tokensOf = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/**
 * The least each role's largest prompt can be, in tokens, whatever the data: the optimizer's
 * analyst call holds its instructions, the output format and the skill before any trajectory; every
 * rollout holds the skill before its task. The real prompts are larger, so a window below this
 * cannot hold the plan.
 */
function promptFloors(
  cfg: TrainConfig,
  skill: string,
): Record<"optimizer" | "target", { stage: string; tokens: number }> {
  const mode = normalizeUpdateMode(cfg.optimizer.skill_update_mode);
  const format =
    mode === "patch"
      ? PROMPTS.format_patch
      : mode === "rewrite_from_suggestions"
        ? PROMPTS.format_rewrite
        : PROMPTS.format_full_rewrite;
  const sar =
    cfg.optimizer.use_skill_aware_reflection && mode !== "full_rewrite_minibatch" ? PROMPTS.sar_failure.length : 0;
  return {
    optimizer: {
      stage: "analyst",
      tokens: tokensOf(PROMPTS.analyst_failure.length + format.length + sar + skill.length),
    },
    target: { stage: "rollout", tokens: tokensOf(skill.length) },
  };
}

export interface ContextFit {
  role: "optimizer" | "target";
  model: string | undefined;
  context_tokens: number;
  source: string;
  largest_prompt_at_least: number;
  stage: string;
}

/**
 * Before the first paid call: ask each role's server for its model's context window (where it
 * tells it) and refuse a plan whose largest prompt cannot fit, naming the role, the stage and the
 * sizes (exit 1). Returns what was learned, for the dry-run plan.
 */
export async function checkContextFits(
  client: SkilloptModelClient,
  cfg: TrainConfig,
  skill: string,
): Promise<ContextFit[]> {
  const floors = promptFloors(cfg, skill);
  const fits: ContextFit[] = [];
  for (const role of ["optimizer", "target"] as const) {
    const w: ContextWindow | undefined = await client.contextWindow(role);
    if (!w) continue;
    const floor = floors[role];
    fits.push({
      role,
      model: client.info[role]?.model,
      context_tokens: w.tokens,
      source: w.source,
      largest_prompt_at_least: floor.tokens,
      stage: floor.stage,
    });
    if (floor.tokens < w.tokens) continue;
    throw new ModelUnfitError(
      `${roleLabel(client, role)} cannot hold the ${floor.stage} prompt (at least ${floor.tokens} tokens against a context of ${w.tokens}, ` +
        `as its server reports through ${w.source})`,
      {
        hint:
          role === "optimizer"
            ? "nothing was called; use an optimizer model with a larger context (model.optimizer_backend / model.optimizer), " +
              "or start the server with a larger context (vLLM --max-model-len, llama.cpp -c, Ollama num_ctx / OLLAMA_CONTEXT_LENGTH)"
            : "nothing was called; use a target model with a larger context, a shorter skill, or start the server with a larger context",
        data: {
          role,
          stage: floor.stage,
          cause: "context_length",
          prompt_tokens: floor.tokens,
          context_tokens: w.tokens,
          ...(client.info[role]?.model ? { model: client.info[role]!.model } : {}),
        },
      },
    );
  }
  return fits;
}
