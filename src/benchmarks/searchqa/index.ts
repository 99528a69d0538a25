import type { Benchmark, RolloutResult } from "../../engine/index.ts";
import { fillSkill } from "../shared/chat.ts";
import { EnvReader } from "../shared/env.ts";
import { asString, asStringList } from "../shared/formats.ts";
import { evaluationEntry, runQa } from "../shared/qa.ts";
import { loadConfiguredSplits } from "../shared/splits.ts";
import { extractAnswer, squadScores } from "../shared/text.ts";
import { searchQaLoader, truncateContext } from "./loader.ts";
import { CONTEXT_LIMIT, SEARCHQA_INITIAL_SKILL, SEARCHQA_SYSTEM } from "./prompts.ts";

/** SearchQA: single-turn QA over retrieved snippets, EM / token F1 (engine.md §6.1). */
const searchQaBenchmark: Benchmark = {
  name: "searchqa",
  initialSkill: SEARCHQA_INITIAL_SKILL,
  loadSplits: async (ctx) => loadConfiguredSplits(ctx, searchQaLoader),
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    const env = new EnvReader(ctx.env, "searchqa");
    const question = asString(item.question);
    const golds = asStringList(item.answers);
    const system = fillSkill(SEARCHQA_SYSTEM, skill);
    const user = `## Context\n${truncateContext(asString(item.context), CONTEXT_LIMIT)}\n\n## Question\n${question}`;
    const out = await runQa(ctx, { system, user, maxTurns: env.int("max_turns", 1) }, sampleIndex, {
      id: item.id,
      skill,
      description: "How to answer SearchQA questions from retrieved snippets.",
      instructions: fillSkill(SEARCHQA_SYSTEM, ""),
    });
    const predicted = out.error ? "" : extractAnswer(out.text);
    const { em, f1, subEm } = out.error ? { em: 0, f1: 0, subEm: 0 } : squadScores(predicted, golds);
    const failReason = out.error
      ? `error: ${out.error}`
      : em === 0
        ? `EM=0: predicted '${predicted}' but expected ${JSON.stringify(golds)}`
        : undefined;
    out.trajectory.push(
      evaluationEntry({ predicted_answer: predicted, gold_answers: golds, exact_match: em, f1: Number(f1.toFixed(4)) }),
    );
    return {
      id: item.id,
      hard: em,
      soft: f1,
      trajectory: out.trajectory,
      question,
      task_type: "qa",
      task_description: question,
      predicted_answer: predicted,
      gold_answers: golds,
      em,
      f1,
      sub_em: subEm,
      response: out.text,
      fail_reason: failReason,
      agent_ok: !out.error,
      n_turns: out.nTurns,
      target_system_prompt: system,
      target_user_prompt: user,
    };
  },
};
export default searchQaBenchmark;
