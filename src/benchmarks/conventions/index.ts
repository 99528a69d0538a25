import type { Benchmark, BenchmarkContext, Splits } from "../../engine/index.ts";
import { DataError, errorMessage } from "../../lib/index.ts";
import { isSystemic } from "../shared/chat.ts";
import { conventionsProducing, type TaskValue } from "./formats.ts";
import { drawConflict, drawHouseRules, generateSplits, taskPrompt } from "./generator.ts";
import INITIAL_SKILL from "./initial-skill.md" with { type: "text" };

const DEFAULT_SIZES = { train: 48, val: 32, test: 64 };

function size(env: Record<string, unknown>, key: string, fallback: number): number {
  const v = env[key];
  if (v === undefined || v === null || v === "") return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 100_000) {
    throw new DataError(`env.${key} must be a positive integer (got ${JSON.stringify(v)})`, {
      data: { input: `env.${key}`, problem: "invalid_value" },
    });
  }
  return n;
}

/** The system prompt the target sees: the skill document, verbatim, inside a short frame. */
export function targetSystemPrompt(skill: string): string {
  return `You answer reporting questions for a team. Follow the team's skill document below exactly.\n\n<skill>\n${skill}\n</skill>`;
}

/** Last non-empty line of a reply, trimmed (the answer). */
function extractAnswer(text: string): string {
  const lines = text
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean);
  return lines[lines.length - 1] ?? "";
}

async function loadSplits(ctx: BenchmarkContext): Promise<Splits> {
  const seed = Number(ctx.env.split_seed ?? 42);
  if (!Number.isInteger(seed))
    throw new DataError(`env.split_seed must be an integer (got ${JSON.stringify(ctx.env.split_seed)})`, {
      data: { input: "env.split_seed", problem: "invalid_value" },
    });
  const sizes = {
    train: size(ctx.env, "train_items", DEFAULT_SIZES.train),
    val: size(ctx.env, "val_items", DEFAULT_SIZES.val),
    test: size(ctx.env, "test_items", DEFAULT_SIZES.test),
  };
  const rules = drawHouseRules(seed);
  const shape = String(ctx.env.conventions_shape ?? "standard");
  // crowded: the standard tasks; only the simulated target differs (src/backends/sim/stochastic.ts).
  // conflict_crowded: the conflict shape's tasks, and the crowded target.
  if (!["standard", "conflict", "crowded", "conflict_crowded"].includes(shape))
    throw new DataError(
      `env.conventions_shape must be standard, conflict, crowded or conflict_crowded (got ${JSON.stringify(shape)})`,
      {
        data: { input: "env.conventions_shape", problem: "invalid_value" },
      },
    );
  const conflict = shape === "conflict" || shape === "conflict_crowded";
  return generateSplits(seed, sizes, rules, conflict ? drawConflict(seed, rules) : undefined);
}

const rollout: Benchmark["rollout"] = async (item, skill, ctx, sampleIndex) => {
  const value = item.value as TaskValue;
  const expected = String(item.expected);
  const system = targetSystemPrompt(skill);
  const user = taskPrompt(String(item.question), value);
  const base = {
    id: item.id,
    question: user,
    task_description: user,
    task_type: String(item.family),
    target_system_prompt: system,
  };
  let reply: string;
  try {
    const res = await ctx.model.chat(
      "target",
      {
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
        stage: "rollout",
        model: ctx.target.model,
        maxTokens: ctx.target.maxTokens,
        ...(ctx.target.temperature === undefined ? {} : { temperature: ctx.target.temperature }),
        ...(ctx.target.reasoningEffort ? { reasoningEffort: ctx.target.reasoningEffort } : {}),
        sampleIndex,
      },
      ctx.signal ? { signal: ctx.signal } : {},
    );
    reply = res.text;
  } catch (err) {
    // Systemic failures (budget, auth, a configuration refused mid-run) must stop the run; the
    // caller decides. A per-task failure is a scored result with its reason.
    if (isSystemic(err, ctx.signal)) throw err;
    return {
      ...base,
      hard: 0,
      soft: 0,
      predicted_answer: "",
      fail_reason: `model_error: ${errorMessage(err)}`,
      agent_ok: false,
      trajectory: [{ role: "user", content: user }],
    };
  }
  const answer = extractAnswer(reply);
  const hard = answer === expected ? 1 : 0;
  const sameFamily = conventionsProducing(value, answer).length > 0;
  const soft =
    hard === 1 ? 1 : answer.toLowerCase().replace(/\s+/g, "") === expected.toLowerCase().replace(/\s+/g, "") ? 0.5 : 0;
  const verdict = hard ? "PASS" : "FAIL";
  return {
    ...base,
    hard,
    soft,
    n_turns: 1,
    predicted_answer: answer,
    ...(hard
      ? {}
      : {
          fail_reason: sameFamily
            ? `wrong_convention: a valid ${item.family} format, but not the house one`
            : `wrong_answer: not a recognised ${item.family} format`,
        }),
    trajectory: [
      { role: "user", content: user },
      { role: "assistant", content: reply },
      {
        role: "system",
        content: `Evaluation: ${verdict}. Expected ${JSON.stringify(expected)}, got ${JSON.stringify(answer)}.`,
      },
    ],
  };
};

/** The `conventions` benchmark: seeded tasks whose answers follow hidden house conventions. */
const conventionsBenchmark: Benchmark = {
  name: "conventions",
  initialSkill: INITIAL_SKILL,
  loadSplits,
  rollout,
};

export default conventionsBenchmark;
