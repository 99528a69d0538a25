import { basename } from "node:path";
import type { Benchmark, ChatMessage, ContentPart, RolloutResult } from "../../engine/index.ts";
import { errorMessage, readInputFile } from "../../lib/index.ts";
import { fillSkill } from "../shared/chat.ts";
import { EnvReader } from "../shared/env.ts";
import { asString, asStringList } from "../shared/formats.ts";
import { evaluationEntry, failedResult, runQa } from "../shared/qa.ts";
import { loadConfiguredSplits } from "../shared/splits.ts";
import { anls, lastNonEmptyLine, lastOpenToLastClose } from "../shared/text.ts";
import { docVqaLoader, imageMime } from "./loader.ts";
import { DOCVQA_INITIAL_SKILL, DOCVQA_REVIEW, DOCVQA_SYSTEM, DOCVQA_USER_SUFFIX } from "./prompts.ts";

/** DocVQA: image + question as content parts, ANLS scoring (engine.md §6.2). */
const docVqaBenchmark: Benchmark = {
  name: "docvqa",
  initialSkill: DOCVQA_INITIAL_SKILL,
  loadSplits: async (ctx) => loadConfiguredSplits(ctx, docVqaLoader),
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    const env = new EnvReader(ctx.env, "docvqa");
    const question = asString(item.question);
    const golds = asStringList(item.answers);
    const imagePath = asStringList(item.image_paths)[0] ?? "";
    const taskType = asString(item.task_type) || "docvqa";
    const base = {
      question,
      task_type: taskType,
      task_description: question,
      image_paths: [imagePath],
      gold_answer: golds,
    };
    let bytes: Buffer;
    try {
      // Non-blocking and regular files only: a FIFO named as an image never hangs the run.
      bytes = readInputFile(imagePath, "image_path");
    } catch (err) {
      const missing = (err as { data?: { problem?: string } }).data?.problem === "not_found";
      return failedResult(
        item.id,
        missing ? `image-not-found: ${imagePath || "(no image_path)"}` : `image-unreadable: ${errorMessage(err)}`,
        base,
      );
    }
    const detail = env.oneOf("image_detail", ["auto", "low", "high"], "auto");
    const image: ContentPart = {
      type: "image",
      url: `data:${imageMime(imagePath)};base64,${bytes.toString("base64")}`,
      ...(detail === "auto" ? {} : { detail }),
    };
    const userText = `## Question\n${question}\n\n${DOCVQA_USER_SUFFIX}`;
    const user: ContentPart[] = [{ type: "text", text: userText }, image];
    const system = fillSkill(DOCVQA_SYSTEM, skill);
    const out = await runQa(
      ctx,
      {
        system,
        user,
        maxTurns: env.int("max_turns", 1),
        stopAfter: (t) => /<answer>/i.test(t),
        nextTurn: (previous): ChatMessage[] => [
          { role: "system", content: system },
          { role: "user", content: user },
          { role: "assistant", content: previous },
          { role: "user", content: [{ type: "text", text: DOCVQA_REVIEW }, image] },
        ],
      },
      sampleIndex,
      {
        id: item.id,
        skill,
        description: "How to answer questions about document images.",
        instructions: `${fillSkill(DOCVQA_SYSTEM, "")}\n\nThe document image is attachments/${basename(imagePath)}; open it to answer.`,
        files: { [`attachments/${basename(imagePath)}`]: new Uint8Array(bytes) },
      },
    );
    const predicted = out.error ? "" : (lastOpenToLastClose(out.text) ?? lastNonEmptyLine(out.text));
    const score = out.error ? 0 : anls(predicted, golds);
    const hard = score >= 0.999 ? 1 : 0;
    out.trajectory.push(
      evaluationEntry({ predicted_answer: predicted, gold_answers: golds, anls: Number(score.toFixed(4)) }),
    );
    return {
      id: item.id,
      hard,
      soft: score,
      trajectory: out.trajectory,
      ...base,
      predicted_answer: predicted,
      response: out.text,
      fail_reason: out.error
        ? `error: ${out.error}`
        : hard
          ? undefined
          : `ANLS=${score.toFixed(3)}: predicted '${predicted}' but expected ${JSON.stringify(golds)}`,
      agent_ok: !out.error,
      n_turns: out.nTurns,
      target_system_prompt: system,
      target_user_prompt: userText,
    };
  },
};
export default docVqaBenchmark;
