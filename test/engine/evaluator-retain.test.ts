import { describe, expect, test } from "bun:test";
import { Evaluator, NO_EVENTS, skillHash } from "../../src/engine/index.ts";
import type { Benchmark, BenchmarkContext, RolloutResult, TaskItem } from "../../src/engine/index.ts";

/** A benchmark that counts how often each (skill, item) pair is rolled out. */
function counting(): Benchmark & { asked: string[] } {
  const asked: string[] = [];
  return {
    name: "counting",
    initialSkill: "",
    asked,
    async loadSplits() {
      return { train: [], val: [], test: [] };
    },
    async rollout(item: TaskItem, skill: string): Promise<RolloutResult> {
      asked.push(`${skill}/${item.id}`);
      return { id: item.id, hard: 1, soft: 1, trajectory: [], agent_ok: true };
    },
  };
}

const CTX = {
  env: {},
  configDir: ".",
  workDir: ".",
  target: { model: "m", maxTokens: 1 },
  seed: 1,
} as unknown as BenchmarkContext;
const ITEMS: TaskItem[] = [{ id: "a" }, { id: "b" }];

describe("the evaluator's rollout cache is bounded between steps", () => {
  test("live skills and the most recent others keep their evaluation rollouts; older skills and training batches are asked again", async () => {
    const bench = counting();
    const ev = new Evaluator(bench, CTX, 2, NO_EVENTS);
    for (const skill of ["live", "old", "recent1", "recent2"]) await ev.run(skill, ITEMS, "selection");
    await ev.run("live", ITEMS, "rollout", undefined, { seed: 7 });
    ev.retain(new Set([skillHash("live")]), 2);
    bench.asked.length = 0;
    for (const skill of ["live", "old", "recent1", "recent2"]) await ev.run(skill, ITEMS, "selection");
    await ev.run("live", ITEMS, "rollout", undefined, { seed: 7 });
    expect(bench.asked).toEqual(["old/a", "old/b", "live/a", "live/b"]);
    expect(ev.rolloutsReused).toBe(6);
  });
});
