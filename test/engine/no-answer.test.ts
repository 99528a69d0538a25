import { describe, expect, test } from "bun:test";
import { Evaluator, gateSettings, NO_EVENTS } from "../../src/engine/index.ts";
import type {
  Benchmark,
  BenchmarkContext,
  EngineEvent,
  RolloutResult,
  TaskItem,
  WarningEvent,
} from "../../src/engine/index.ts";
import { consoleLines } from "../report/support.ts";
import { quickConfig } from "./support.ts";

/**
 * A benchmark whose answers are scripted per item and attempt: "1"/"0" is a right/wrong answer
 * (a score), "x" is no answer (agent_ok false, as every benchmark marks an endpoint failure).
 */
function scripted(script: Record<string, string>): Benchmark & { asked: string[] } {
  const asked: string[] = [];
  const attempts = new Map<string, number>();
  return {
    name: "scripted",
    initialSkill: "",
    asked,
    async loadSplits() {
      return { train: [], val: [], test: [] };
    },
    async rollout(item: TaskItem): Promise<RolloutResult> {
      asked.push(item.id);
      const k = attempts.get(item.id) ?? 0;
      attempts.set(item.id, k + 1);
      const outcome = script[item.id]![Math.min(k, script[item.id]!.length - 1)];
      if (outcome === "x")
        return {
          id: item.id,
          hard: 0,
          soft: 0,
          trajectory: [],
          agent_ok: false,
          fail_reason: `llm-call-failed: HTTP 503 (${item.id})`,
        };
      return { id: item.id, hard: Number(outcome), soft: Number(outcome), trajectory: [], agent_ok: true };
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
const items = (ids: string[]): TaskItem[] => ids.map((id) => ({ id }));

describe("the evaluator keeps 'no answer' apart from a score", () => {
  test("an item that got no answer is re-asked once; its answer then counts like any other", async () => {
    const bench = scripted({ a: "1", b: "x1", c: "0" });
    const warnings: WarningEvent[] = [];
    const ev = new Evaluator(bench, CTX, 4, {
      emit: (e: EngineEvent) => void (e.type === "warning" && warnings.push(e)),
    });
    const out = await ev.run("skill", items(["a", "b", "c"]), "selection");
    expect(out.errored).toEqual([]);
    expect(out.results.map((r) => [r.id, r.hard])).toEqual([
      ["a", 1],
      ["b", 1],
      ["c", 0],
    ]);
    expect(out.complete).toBe(true);
    expect(bench.asked.filter((id) => id === "b")).toHaveLength(2);
    expect(warnings).toEqual([
      {
        type: "warning",
        code: "reask",
        label: "selection",
        errored: 1,
        total: 3,
        reason: "llm-call-failed: HTTP 503 (b)",
      },
    ]);
    expect(consoleLines(warnings)).toEqual([
      "  [warn] selection: 1 of 3 item(s) got no answer (llm-call-failed: HTTP 503 (b)); asking them once more",
    ]);
  });

  test("still no answer after the re-ask: the item is errored with its reason and is in no mean", async () => {
    const bench = scripted({ a: "1", b: "x", c: "0" });
    const out = await new Evaluator(bench, CTX, 4, NO_EVENTS).run("skill", items(["a", "b", "c"]), "selection");
    expect(out.errored).toEqual([{ id: "b", reason: "llm-call-failed: HTTP 503 (b)", role: "target" }]);
    expect(out.results.map((r) => r.id)).toEqual(["a", "c"]);
    expect(out.evaluated).toBe(2);
    expect(out.complete).toBe(true);
  });

  test("nothing answered: the endpoint is down, nothing is re-asked", async () => {
    const bench = scripted({ a: "x", b: "x" });
    const out = await new Evaluator(bench, CTX, 4, NO_EVENTS).run("skill", items(["a", "b"]), "baseline");
    expect(out.errored.map((e) => e.id)).toEqual(["a", "b"]);
    expect(bench.asked).toHaveLength(2);
  });

  test("a missing answer is never a zero: it holds early rejection until it is answered", async () => {
    const gate = gateSettings(quickConfig().evaluation);
    // must beat 0.5 on 4 items: a wrong answer on a and c would decide "reject" at c — if b counted as a zero.
    const bench = scripted({ a: "0", b: "x1", c: "0", d: "1" });
    const out = await new Evaluator(bench, CTX, 1, NO_EVENTS).run(
      "candidate",
      items(["a", "b", "c", "d"]),
      "selection",
      { gate, mustBeat: 0.5, bonus: 0 },
    );
    expect(out.errored).toEqual([]);
    // b was re-asked and answered right: a, b, c decide (0 + 1 + 0 + at most 1 = 0.5, not above 0.5).
    expect(out.complete).toBe(false);
    expect(out.results.map((r) => [r.id, r.hard])).toEqual([
      ["a", 0],
      ["b", 1],
      ["c", 0],
    ]);
  });
});
