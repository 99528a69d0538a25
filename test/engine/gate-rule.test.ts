import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config/index.ts";
import { compareSkills } from "../../src/engine/compare.ts";
import { chooseRule, gateSettings, makeGate, ruleFor } from "../../src/engine/gate.ts";
import type { RolloutResult } from "../../src/engine/ports.ts";
import { PosteriorTest, posteriorPrior, probabilityOfGain } from "../../src/engine/posterior.ts";
import { skillCheckText } from "../../src/report/skill-check.ts";
import { stageLines } from "../../src/report/stage-text.ts";
import { sleepDecision } from "../../src/sleep/gate.ts";
import { tempDir } from "../support/tmp.ts";
import { trainOnSim } from "./support.ts";

const S = { alpha: 0.05, minEffect: 0.02, maxRegressions: null };

describe("gate rule auto: chosen from the split size and the noise floor", () => {
  test("small or noisy splits get the posterior rule, large ones the paired test, and the reason names both", () => {
    expect(chooseRule(4, 0, 0.95).rule).toBe("posterior");
    expect(chooseRule(20, 0.1, 0.95).rule).toBe("posterior");
    expect(chooseRule(50, 0.15, 0.95).rule).toBe("posterior");
    expect(chooseRule(120, 0.15, 0.95).rule).toBe("paired");
    expect(chooseRule(400, 0.3, 0.95).rule).toBe("paired");
    // The same size with a much noisier target: the paired test could not see a typical gain.
    expect(chooseRule(120, 0.6, 0.95).rule).toBe("posterior");
    const why = chooseRule(20, 0.1, 0.95).why;
    expect(why).toContain("20 selection items");
    expect(why).toContain("10 % flip rate");
  });
});

describe("one Gate, one implementation per rule", () => {
  const settings = (gate_rule: string) =>
    gateSettings({
      ...loadConfig({ config: "quickstart", set: ["model.backend=sim"] }).config.evaluation,
      gate_rule,
    } as never);

  test("ruleFor: a configured rule stands; auto chooses as chooseRule does, for training and eval --baseline alike", () => {
    expect(ruleFor(settings("paired"), 4, 0)).toEqual({ rule: "paired", why: "configured" });
    expect(ruleFor(settings("strict"), 400, 0.3)).toEqual({ rule: "strict", why: "configured" });
    expect(ruleFor(settings("auto"), 400, 0.3)).toEqual(chooseRule(400, 0.3, 0.95));
    expect(ruleFor(settings("auto"), 4, undefined)).toEqual(chooseRule(4, undefined, 0.95));
  });

  test("each rule's Gate says how it decides: strict on means, the others item by item; only posterior accepts beyond the bounds", () => {
    const shape = (rule: "strict" | "paired" | "posterior") => {
      const g = makeGate(rule, S);
      return [g.rule, g.itemwise, g.beyondBounds];
    };
    expect(shape("strict")).toEqual(["strict", false, false]);
    expect(shape("paired")).toEqual(["paired", true, false]);
    expect(shape("posterior")).toEqual(["posterior", true, true]);
    // strict reads every difference and compares the mean; the item-by-item rules stop at their verdict.
    const losers = Array(60).fill(-1);
    expect(makeGate("strict", S).onItems(losers, []).n_used).toBe(60);
    expect(makeGate("paired", S).onItems(losers, []).n_used).toBeLessThan(60);
  });
});

describe("the posterior rule", () => {
  test("the prior alone never accepts: ties on every item are rejected even from an optimistic history", () => {
    const prior = posteriorPrior([0.2, 0.2, 0.2, 0.2, 0.2, 0.2], 0.1);
    expect(prior.mean).toBeGreaterThan(0);
    const t = new PosteriorTest(10, S, prior);
    let v: string | undefined;
    for (let i = 0; i < 10 && !v; i++) v = t.push(0);
    expect(t.result().verdict).toBe("reject");
  });

  test("clear dominance on a 4-item split is accepted and marked low evidence; the paired test cannot accept it", () => {
    const diffs = [1, 0, 1, 0];
    const post = makeGate("posterior", S).onItems(diffs, [false, false, false, false]);
    expect(post.verdict).toBe("accept");
    expect(post.low_evidence).toBe(true);
    expect(post.flips).toEqual({ gained: 2, lost: 0 });
    expect(makeGate("paired", S).onItems(diffs, [false, false, false, false]).verdict).not.toBe("accept");
    // One loss beside the wins is no dominance.
    expect(makeGate("posterior", S).onItems([1, -1, 1, 0], []).verdict).not.toBe("accept");
  });

  test("a run whose proposals mostly hurt makes the next decision sceptical", () => {
    const diffs = [1, 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    const hopeful = probabilityOfGain(diffs, posteriorPrior([0.1, 0.1, 0.1], 0.1)).p;
    const sceptical = probabilityOfGain(diffs, posteriorPrior([-0.1, -0.1, -0.1, -0.1, -0.1, -0.1], 0.1)).p;
    expect(hopeful).toBeGreaterThan(sceptical);
    expect(makeGate("posterior", S).onItems(diffs, [], { history: [0.1, 0.1, 0.1], flipRate: 0.1 }).verdict).toBe(
      "accept",
    );
    expect(
      makeGate("posterior", S).onItems(diffs, [], { history: Array(8).fill(-0.15), flipRate: 0.1 }).verdict,
    ).not.toBe("accept");
  });

  test("a clear loser on a large split stops early (futility) without reading every item", () => {
    const t = new PosteriorTest(200, S, posteriorPrior([], 0.1));
    let k = 0;
    while (!t.push(k % 3 === 0 ? -1 : 0)) k += 1;
    expect(t.result().verdict).toBe("reject");
    expect(t.used).toBeLessThan(60);
  });
});

describe("end to end on the simulator with the bundled default (gate_rule: auto)", () => {
  const run = (val: number, train: number, test: number, seed: number) =>
    trainOnSim(
      loadConfig({
        config: "conventions",
        set: [
          "model.backend=sim",
          `train.seed=${seed}`,
          `env.split_seed=${seed}`,
          `env.train_items=${train}`,
          `env.val_items=${val}`,
          `env.test_items=${test}`,
          "env.sim_temperature=0.3",
          "env.sim_noise_rate=0.1",
        ],
      }).config,
    );

  test("a SearchQA-shaped 40/20/20 run with helpful edits accepts steps and improves test; the run says which rule and why", async () => {
    const r = await run(20, 40, 20, 1);
    const s = r.result.summary;
    expect(s.gate_rule).toBe("posterior");
    expect(s.gate_choice?.configured).toBe("auto");
    const steps = r.recorder.records().filter((x) => x.outcome === "accepted");
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(s.final.test!).toBeGreaterThan(s.baseline.test! + 0.3);
    // Each accepted step's evidence is in the summary, low-evidence accepts flagged.
    expect(s.accepted_evidence!.map((e) => e.step)).toEqual(steps.map((x) => x.step));
    for (const e of s.accepted_evidence!) {
      expect(e.n_used).toBe(20);
      expect(e.won).toBeGreaterThan(e.lost);
      expect(e.low_evidence).toBe(!(e.ci[0] > 0));
    }
    // Said before the first step: after the noise floor, in the run's opening lines.
    const kinds = r.events.map((e) => e.type);
    const said = kinds.indexOf("gate_rule");
    expect(said).toBeGreaterThan(kinds.indexOf("noise_floor"));
    expect(said).toBeLessThan(kinds.indexOf("step_start"));
    const e = r.events[said]!;
    expect(stageLines(e as never).lines[0]).toMatch(
      /^\[gate rule\] auto → posterior: 20 selection items and a \d+ % flip rate/,
    );
  });

  test("4 selection items: helpful step candidates are accepted (not only the epoch boundary's slow update)", async () => {
    const r = await run(4, 8, 8, 2);
    const s = r.result.summary;
    expect(s.gate_rule).toBe("posterior");
    const accepted = r.recorder.records().filter((x) => x.outcome === "accepted");
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    for (const x of accepted) {
      expect(x.gate?.rule).toBe("posterior");
      expect(x.gate?.low_evidence).toBe(true);
    }
    expect(s.final.test!).toBeGreaterThan(s.baseline.test!);
  });

  test("bundled configs default to auto; a config without gate_rule (the reference's) still decides with strict", () => {
    const { config } = loadConfig({ config: "conventions", set: ["model.backend=sim"] });
    expect(config.evaluation.gate_rule).toBe("auto");
    using dir = tempDir();
    const file = join(dir.path, "reference.yaml");
    writeFileSync(file, "train:\n  num_epochs: 1\nenv:\n  name: conventions\n");
    expect(loadConfig({ config: file }).config.evaluation.gate_rule).toBe("strict");
  });
});

describe("the same rule through the same module: Sleep and eval --baseline", () => {
  const delta = (id: string, b: number, c: number) => ({
    task_id: id,
    tags: [],
    baseline_score: b,
    candidate_score: c,
    status: c > b ? ("improved" as const) : c < b ? ("regressed" as const) : ("unchanged" as const),
    scores_are_finite: true,
  });

  test("Sleep under auto decides 4 held-out tasks with the posterior rule and marks the accept low evidence", () => {
    const tasks = [delta("a", 0, 1), delta("b", 1, 1), delta("c", 0, 1), delta("d", 0.5, 0.5)];
    const auto = sleepDecision(tasks, "auto");
    expect(auto.rule).toBe("posterior");
    expect(auto.verdict).toBe("accept");
    expect(auto.low_evidence).toBe(true);
    // The paired test on the same tasks cannot accept; strict accepts and says so.
    expect(sleepDecision(tasks, "paired").verdict).not.toBe("accept");
    expect(sleepDecision(tasks, "strict").paired_verdict).not.toBe("accept");
  });

  test("eval --baseline under auto: a small clear win reads improved on low evidence; a loss never fails the check on weak evidence", () => {
    const ev = {
      gate_metric: "hard",
      gate_mixed_weight: 0.5,
      semantic_density_weight: 0,
      use_semantic_density: false,
      gate_confidence: 0.95,
      gate_min_effect: 0.02,
      gate_max_regressions: null,
      noise_floor_items: 32,
    };
    const results = (hards: number[]): RolloutResult[] =>
      hards.map((h, i) => ({ id: `t${i}`, hard: h, soft: h, trajectory: [], predicted_answer: String(h) }));
    const base = results([0, 0, 1, 1, 0, 1, 1, 0]);
    const cand = results([1, 1, 1, 1, 0, 1, 1, 0]);
    const none = { compared: 0, flips: 0 };
    const auto = compareSkills(gateSettings({ ...ev, gate_rule: "auto" } as never), base, cand, none);
    expect(auto.rule.rule).toBe("posterior");
    expect(auto.verdict).toBe("improved");
    expect(auto.decision.low_evidence).toBe(true);
    const check = {
      ...auto,
      title: "t",
      fail_on: "regression" as const,
      failed: false,
      cost_usd: 0,
      calls: { total: 16, cached: 0 },
    } as never;
    expect(skillCheckText(check)).toContain("on low evidence: the interval still includes no change");
    // The same items under paired: undecided (the bounds include 0).
    expect(compareSkills(gateSettings({ ...ev, gate_rule: "paired" } as never), base, cand, none).verdict).toBe(
      "undecided",
    );
    // Swapped, the candidate lost two tasks: not a proven regression, so not "regressed".
    expect(compareSkills(gateSettings({ ...ev, gate_rule: "auto" } as never), cand, base, none).verdict).toBe(
      "undecided",
    );
  });
});
