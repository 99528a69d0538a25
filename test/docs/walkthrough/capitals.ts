import type { Benchmark, RolloutResult, TaskItem } from "../../../src/engine/ports.ts";
import { DataError } from "../../../src/lib/index.ts";
import { skillSection } from "../../../src/benchmarks/shared/chat.ts";
import { evaluationEntry, runQa } from "../../../src/benchmarks/shared/qa.ts";
import { firstJsonArray, loadConfiguredSplits, type SplitLoader } from "../../../src/benchmarks/shared/splits.ts";
import { extractAnswer, normalizeSquad } from "../../../src/benchmarks/shared/text.ts";

/** One record of a split file → a task item; a bad record names its file and index. */
function toItem(raw: Record<string, unknown>, path: string, index: number): TaskItem {
  const { id, country, capital } = raw;
  if (typeof id !== "string" || typeof country !== "string" || typeof capital !== "string") {
    throw new DataError(`${path} item ${index}: expected {"id", "country", "capital"} strings`, {
      // The facts `--json` prints: the file, the item (its id, or its index without one), what is wrong.
      data: { path, item: typeof id === "string" && id ? id : index, problem: "missing_field" },
    });
  }
  return { id, country, capital };
}

const loader: SplitLoader = {
  label: "Capitals",
  name: "capitals",
  loadSplitItems: (dir) => firstJsonArray(dir).map((r, i) => toItem(r as Record<string, unknown>, dir, i)),
};

const SYSTEM =
  "You answer geography questions.\n\n{skill}End your reply with the answer inside <answer></answer> tags.";

const capitals: Benchmark = {
  name: "capitals",
  initialSkill: "# Capitals\n\n- Answer with the city's name only.\n",
  loadSplits: async (ctx) => loadConfiguredSplits(ctx, loader),
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    const system = SYSTEM.replace("{skill}", skillSection(skill));
    const user = `What is the capital of ${String(item.country)}?`;
    const out = await runQa(ctx, { system, user, maxTurns: 1 }, sampleIndex);
    const predicted = out.error ? "" : extractAnswer(out.text);
    const hard = normalizeSquad(predicted) === normalizeSquad(String(item.capital)) ? 1 : 0;
    out.trajectory.push(
      evaluationEntry({ predicted_answer: predicted, gold_answer: item.capital, correct: hard === 1 }),
    );
    return {
      id: item.id,
      hard,
      soft: hard,
      trajectory: out.trajectory,
      task_type: "capital",
      task_description: user,
      predicted_answer: predicted,
      response: out.text,
      fail_reason: out.error
        ? `error: ${out.error}`
        : hard
          ? undefined
          : `predicted '${predicted}', expected '${String(item.capital)}'`,
      agent_ok: !out.error,
      n_turns: out.nTurns,
    };
  },
};

export default capitals;
