import { describe, expect, test } from "bun:test";
import { stopConditionMet } from "../../src/engine/index.ts";
import { stopMessage } from "../../src/lib/index.ts";
import { consoleLines } from "../report/support.ts";
import { MemoryRecorder, quickConfig, trainOnSim } from "./support.ts";

const warnings = (run: Awaited<ReturnType<typeof trainOnSim>>) => run.events.filter((e) => e.type === "warning");

describe("stop conditions of train: (target score, patience, wall time), on the sim backend", () => {
  test("the first condition that holds wins, each measured as documented", () => {
    const off = { max_wall_seconds: null, patience: null, target_score: null };
    const state = { best: { hash: "h", hard: 0.5, soft: 0.5, score: 0.5, origin: "x", step: 2 }, lastStep: 5 };
    expect(stopConditionMet(off, state, 1e9)).toBeUndefined();
    expect(stopConditionMet({ ...off, target_score: 0.5 }, state, 0)).toMatchObject({
      condition: "target_score",
      value: 0.5,
    });
    expect(stopConditionMet({ ...off, target_score: 0.51 }, state, 0)).toBeUndefined();
    // Three steps (3, 4, 5) since the best was found at step 2.
    expect(stopConditionMet({ ...off, patience: 3 }, state, 0)).toMatchObject({ condition: "patience", value: 3 });
    expect(stopConditionMet({ ...off, patience: 4 }, state, 0)).toBeUndefined();
    // Patience never fires before the first step, even at 0 steps since the baseline.
    expect(
      stopConditionMet({ ...off, patience: 1 }, { ...state, lastStep: 0, best: { ...state.best, step: 0 } }, 0),
    ).toBeUndefined();
    expect(stopConditionMet({ ...off, max_wall_seconds: 30 }, state, 30)).toMatchObject({ condition: "wall_time" });
    expect(stopConditionMet({ ...off, max_wall_seconds: 30 }, state, 29.9)).toBeUndefined();
    expect(stopMessage({ condition: "patience", key: "train.patience", limit: 3, value: 3 })).toBe(
      "no better skill on selection for 3 steps (train.patience=3)",
    );
  });

  test("target_score: the run stops at the step boundary after the best reaches it, and still measures test", async () => {
    const full = await trainOnSim(quickConfig());
    const best = full.result.summary.best;
    const reachedAt = full.result.state.best.step;
    expect(reachedAt).toBeGreaterThan(0);
    expect(reachedAt).toBeLessThan(full.result.state.lastStep);
    const run = await trainOnSim(quickConfig([`train.target_score=${best.selection}`]));
    expect(run.result.state.lastStep).toBe(reachedAt);
    expect(run.result.summary.status).toBe("stopped");
    expect(run.result.summary.stopped_reason).toContain("target selection score reached");
    // The test pass ran: the deployed skill has a test score, unlike a budget stop.
    expect(run.result.summary.best.test).toBe(best.test);
    const w = warnings(run);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ code: "stop_condition", condition: "target_score", key: "train.target_score" });
    expect(consoleLines(run.events, true)).toEqual([
      `  [warn] stopping: ${run.result.summary.stopped_reason}; testing the best skill (resume with a larger train.target_score to go on)`,
    ]);
  });

  test("patience: stops after N steps without a better skill; a resume with a larger patience goes on", async () => {
    const recorder = new MemoryRecorder();
    const run = await trainOnSim(quickConfig(["train.patience=2"]), recorder);
    const s = run.result.state;
    expect(s.lastStep - s.best.step).toBe(2);
    expect(run.result.summary.stopped_reason).toBe("no better skill on selection for 2 steps (train.patience=2)");
    const stoppedAt = s.lastStep;
    // The same setting stops again at once; a larger one continues from the committed step.
    const again = await trainOnSim(quickConfig(["train.patience=2"]), recorder);
    expect(again.result.state.lastStep).toBe(stoppedAt);
    expect(again.events.some((e) => e.type === "step_start")).toBe(false);
    const on = await trainOnSim(quickConfig(["train.patience=1000"]), recorder);
    expect(on.result.summary.status).toBe("finished");
    expect(on.result.state.lastStep).toBeGreaterThan(stoppedAt);
    expect(on.events.find((e) => e.type === "step_start")).toMatchObject({ step: stoppedAt + 1 });
  });

  test("max_wall_seconds: counted over the run's invocations at step boundaries", async () => {
    // A clock that advances 10 s each time the engine reads it.
    let t = 0;
    const now = () => {
      t += 10_000;
      return t;
    };
    const run = await trainOnSim(quickConfig(["train.max_wall_seconds=60"]), new MemoryRecorder(), { now });
    expect(run.result.summary.status).toBe("stopped");
    const w = warnings(run);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatchObject({ code: "stop_condition", condition: "wall_time", limit: 60 });
    if (w[0]!.code !== "stop_condition") throw new Error("expected stop_condition");
    expect(w[0]!.value).toBeGreaterThanOrEqual(60);
    expect(run.result.state.lastStep).toBeGreaterThan(0);
    expect(run.result.state.lastStep).toBeLessThan(12);
  });
});
