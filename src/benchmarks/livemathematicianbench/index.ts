import type { Benchmark, RolloutResult } from "../../engine/index.ts";
import { fillSkill } from "../shared/chat.ts";
import { EnvReader } from "../shared/env.ts";
import { asString, asStringList } from "../shared/formats.ts";
import { evaluationEntry, runQa } from "../shared/qa.ts";
import { loadConfiguredSplits } from "../shared/splits.ts";
import { extractAnswer } from "../shared/text.ts";
import { type Choice, extractChoice, liveMathLoader, shuffleChoices } from "./loader.ts";
import { LIVEMATH_INITIAL_SKILL, LIVEMATH_SYSTEM } from "./prompts.ts";

/** LiveMathematicianBench: seeded-shuffle multiple choice, label extraction (engine.md §6.3). */
const liveMathBenchmark: Benchmark = {
  name: "livemathematicianbench",
  initialSkill: LIVEMATH_INITIAL_SKILL,
  loadSplits: async (ctx) => loadConfiguredSplits(ctx, liveMathLoader),
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    const env = new EnvReader(ctx.env, "livemathematicianbench");
    const question = asString(item.question);
    const original = (item.choices ?? []) as Choice[];
    const originalCorrect = item.correct_choice as Choice;
    const { choices, correct } = env.bool("shuffle_choices", true)
      ? shuffleChoices(original, originalCorrect, ctx.batchSeed ?? ctx.seed, item.id)
      : { choices: original, correct: originalCorrect };
    const parts = [`## Question\n${question}`, `## Choices\n${choices.map((c) => `${c.label}. ${c.text}`).join("\n")}`];
    if (env.bool("use_theorem", false) && asString(item.theorem)) parts.push(`## Theorem\n${asString(item.theorem)}`);
    if (env.bool("use_sketch", false) && asString(item.sketch)) parts.push(`## Proof Sketch\n${asString(item.sketch)}`);
    const user = parts.join("\n\n");
    const system = fillSkill(LIVEMATH_SYSTEM, skill);
    const out = await runQa(ctx, { system, user, maxTurns: env.int("max_turns", 1) }, sampleIndex, {
      id: item.id,
      skill,
      description: "How to answer research-level multiple-choice math questions.",
      instructions: fillSkill(LIVEMATH_SYSTEM, ""),
    });
    const answer = out.error ? "" : extractAnswer(out.text);
    const picked = out.error ? { label: "", text: "" } : extractChoice(answer, choices);
    const hard = !out.error && picked.label === correct.label.toUpperCase() ? 1 : 0;
    out.trajectory.push(
      evaluationEntry({
        predicted: `${picked.label}${picked.text ? `. ${picked.text}` : ""}`,
        correct: `${correct.label}. ${correct.text}`,
        result: hard ? "correct" : "wrong",
      }),
    );
    const types = asStringList(item.theorem_type);
    return {
      id: item.id,
      hard,
      soft: hard,
      trajectory: out.trajectory,
      question,
      task_type: types[0] ?? "math_mcq",
      task_description: question,
      predicted_answer: answer,
      predicted_label: picked.label,
      predicted_text: picked.text,
      correct_label: correct.label,
      correct_text: correct.text,
      response: out.text,
      fail_reason: out.error
        ? `error: ${out.error}`
        : hard
          ? undefined
          : `MCQ=0: predicted '${picked.label || answer}' but expected '${correct.label}'`,
      agent_ok: !out.error,
      n_turns: out.nTurns,
      target_system_prompt: system,
      target_user_prompt: user,
    };
  },
};
export default liveMathBenchmark;
