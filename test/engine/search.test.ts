import { describe, expect, test } from "bun:test";
import { gateSettings, makeGate } from "../../src/engine/gate.ts";
import { mergeSkills } from "../../src/engine/merge.ts";
import { afterPoolStep } from "../../src/engine/pool-step.ts";
import { taskCostOf, taskCosts } from "../../src/engine/deployed.ts";
import {
  admit,
  costOf,
  itemFrontier,
  mergePair,
  objectiveValue,
  pickParent,
  poolBest,
  tokenFrontier,
} from "../../src/engine/search.ts";
import type { LoopState, PoolEntry } from "../../src/engine/state.ts";
import { quickConfig, trainOnSim } from "./support.ts";

const HARD = { metric: "hard" as const, mixedWeight: 0 };
const score = { kind: "score" as const, tokenWeight: 0.02 };

function entry(hash: string, s: number, parents: string[] = [], extra: Partial<PoolEntry> = {}): PoolEntry {
  return { hash, origin: hash, step: 0, parents, hard: s, soft: s, score: s, tokens: 100, status: "member", ...extra };
}

/** A state whose pool holds the given entries with per-item hard scores (1 = passed). */
function stateWith(
  entries: PoolEntry[],
  items: Record<string, number[]>,
): Pick<LoopState, "pool" | "selItems" | "baseline" | "best"> {
  const lineage: Record<string, string> = {};
  for (const e of entries) if (e.parents[0]) lineage[e.hash] = e.parents[0];
  return {
    pool: { entries, lineage, merged: [], log: [] },
    selItems: Object.fromEntries(Object.entries(items).map(([h, xs]) => [h, xs.map((x) => [x, x] as const)])),
    baseline: { hash: entries[0]!.hash, hard: 0, soft: 0, score: 0, origin: "initial_skill" },
    best: { hash: entries[0]!.hash, hard: 0, soft: 0, score: 0, origin: "initial_skill", step: 0 },
  };
}

describe("the per-item Pareto frontier", () => {
  // base passes item 0; a passes 0–2; b passes 0, 3, 4; c passes 0, 1 (a dominates it).
  const st = stateWith(
    [entry("base", 0.2), entry("a", 0.6, ["base"]), entry("b", 0.6, ["base"]), entry("c", 0.4, ["base"])],
    {
      base: [1, 0, 0, 0, 0],
      a: [1, 1, 1, 0, 0],
      b: [1, 0, 0, 1, 1],
      c: [1, 1, 0, 0, 0],
    },
  );

  test("keeps a candidate best on some item and drops the dominated ones", () => {
    const f = itemFrontier(st, HARD);
    expect([...f.keys()].sort()).toEqual(["a", "b"]);
    // Item 0 is a tie every member wins; a is also best on 1–2, b on 3–4.
    expect(f.get("a")).toBe(3);
    expect(f.get("b")).toBe(3);
  });

  test("the parent is drawn from the frontier, the same one for the same seed and step", () => {
    const f = itemFrontier(st, HARD);
    const seen = new Map<string, number>();
    for (let step = 1; step <= 400; step++) {
      const p = pickParent(f, 7, step)!;
      expect(f.has(p)).toBe(true);
      expect(pickParent(f, 7, step)).toBe(p);
      seen.set(p, (seen.get(p) ?? 0) + 1);
    }
    // Equal wins, equal chances: both are drawn often.
    expect(seen.get("a")!).toBeGreaterThan(150);
    expect(seen.get("b")!).toBeGreaterThan(150);
  });

  test("a merge pairs two frontier members that win different items, once", () => {
    const s = structuredClone(st);
    const pair = mergePair(s, HARD, score)!;
    expect([pair.a.hash, pair.b.hash].sort()).toEqual(["a", "b"]);
    expect(pair.ancestor).toBe("base");
    expect(mergePair(s, HARD, score)).toBeUndefined();
  });

  test("no merge of a candidate with its own descendant", () => {
    const s = stateWith([entry("base", 0.2), entry("a", 0.6, ["base"]), entry("a2", 0.6, ["a"])], {
      base: [0, 0, 0],
      a: [1, 0, 0],
      a2: [0, 1, 1],
    });
    expect(mergePair(s, HARD, score)).toBeUndefined();
  });

  test("a full pool drops undecided entries first and keeps the baseline and the best", () => {
    const s = structuredClone(st);
    s.pool!.entries.push(entry("u", 0.5, ["a"], { status: "undecided" }));
    const dropped = admit(s, entry("d", 0.7, ["a"]), 5, HARD, score);
    expect(dropped).toEqual(["u"]);
    s.selItems!.e = [1, 0, 0, 0, 0].map((x) => [x, x] as const);
    const dropped2 = admit(s, entry("e", 0.45, ["a"]), 5, HARD, score);
    // c and e are off the frontier; c is lower on the objective: it goes, before any frontier member.
    expect(dropped2).toEqual(["c"]);
    expect(s.pool!.entries.map((e) => e.hash)).toContain("base");
    expect(poolBest(s.pool!, score).hash).toBe("d");
  });
});

describe("the pool decides the best", () => {
  test("a candidate the step's gate called a new best is not the best unless it beats the best so far under the run's rule", async () => {
    const cfg = quickConfig(["optimizer.search=pool", "optimizer.merge=false", "evaluation.gate_rule=paired"]);
    const gate = gateSettings(cfg.evaluation);
    const n = 12;
    const row = (wins: number) => Array.from({ length: n }, (_, i) => (i < wins ? 1 : 0));
    // a: the best so far (8 of 12); p: the step's parent; x: its candidate, accepted by the step's
    // gate at 9 of 12 (above a's mean), but not significantly better than a on the same items.
    const entries = [entry("a", 8 / n), entry("p", 6 / n, ["a"])];
    const base = stateWith(entries, { a: row(8), p: row(6), x: row(9) });
    const state = {
      ...base,
      selCache: {},
      current: { hash: "x", hard: 9 / n, soft: 9 / n, score: 9 / n, origin: "step_0003" },
      best: { hash: "x", hard: 9 / n, soft: 9 / n, score: 9 / n, origin: "step_0003", step: 3 },
    } as unknown as LoopState;
    const env = {
      cfg,
      sc: undefined as never,
      ev: undefined as never,
      gate,
      decider: makeGate("paired", gate.sequential),
      objective: score,
      pairedOrder: { selection: [], order: Array.from({ length: n }, (_, i) => i) },
      skills: new Map([
        ["a", "A"],
        ["p", "P"],
        ["x", "X"],
      ]),
    };
    await afterPoolStep(env, state, 3, entries[1]!, {
      action: "accept_new_best",
      candidate: "x",
      bestBefore: { hash: "a", step: 1 },
    });
    // x joined the pool from its parent, and the best is still a: one item more is no proof.
    expect(state.pool!.entries.find((e) => e.hash === "x")).toMatchObject({ status: "member", parents: ["p"] });
    expect(state.best.hash).toBe("a");
    expect(state.current.hash).toBe("a");
  });
});

describe("the weighted objective picks the best", () => {
  const n = 12;
  /**
   * A pool whose best so far is `a` (400 tokens) and whose step just admitted `x` (100 tokens), as
   * good on selection on other items. Fresh answer samples (resample) of each skill text come from
   * `fresh` (per item, 1 = passed); the evaluator records what it was asked.
   */
  async function settleWith(
    objective: "score" | "weighted",
    fresh: Record<string, number[]> = {},
    more: { entry: PoolEntry; items: number[] }[] = [],
  ) {
    const cfg = quickConfig([
      "optimizer.search=pool",
      "optimizer.merge=false",
      "evaluation.gate_rule=paired",
      `evaluation.objective=${objective}`,
      "evaluation.token_weight=0.1",
    ]);
    const gate = gateSettings(cfg.evaluation);
    const a = Array.from({ length: n }, (_, i) => (i < 8 ? 1 : 0));
    const x = Array.from({ length: n }, (_, i) => (i >= 1 && i < 9 ? 1 : 0));
    const entries = [entry("a", 8 / n, [], { tokens: 400 }), ...more.map((m) => m.entry)];
    const base = stateWith(entries, { a, x, ...Object.fromEntries(more.map((m) => [m.entry.hash, m.items])) });
    const state = {
      ...base,
      selCache: {},
      current: { hash: "x", hard: 8 / n, soft: 8 / n, score: 8 / n, origin: "step_0002" },
      best: { ...base.best, hash: "a", score: 8 / n, step: 1 },
    } as unknown as LoopState;
    const texts = new Map([
      ["a", "A ".repeat(800)],
      ["x", "X ".repeat(200)],
      ...more.map((m) => [m.entry.hash, `${m.entry.hash} `.repeat(2 * m.entry.tokens)] as [string, string]),
    ]);
    const asked: { text: string; sample: number }[] = [];
    const ev = {
      run: async (text: string, _items: unknown, _label: string, _e: unknown, _b: unknown, sample: number) => {
        asked.push({ text, sample });
        const h = [...texts].find(([, t]) => t === text)![0];
        const xs = fresh[h]!;
        return {
          results: xs.map((v) => ({ id: "i", hard: v, soft: v })),
          errored: [],
          complete: true,
          evaluated: n,
          total: n,
          launched: n,
        };
      },
    };
    const env = {
      cfg,
      sc: undefined as never,
      ev: ev as never,
      gate,
      decider: makeGate("paired", gate.sequential),
      objective: { kind: objective, tokenWeight: 0.1 },
      pairedOrder: {
        selection: Array.from({ length: n }, (_, i) => ({ id: `s${i}` })),
        order: Array.from({ length: n }, (_, i) => i),
      },
      skills: texts,
    };
    await afterPoolStep(env, state, 2, entries[0]!, {
      action: "accept",
      candidate: "x",
      bestBefore: { hash: "a", step: 1 },
    });
    return { state, asked };
  }

  test("weighted: before a shorter member replaces a longer best, both get one more sample; still ahead, it replaces the best", async () => {
    const same = Array.from({ length: n }, (_, i) => (i < 8 ? 1 : 0));
    const { state, asked } = await settleWith("weighted", { a: same, x: same });
    // One fresh sample each, on sample indices apart from the re-decisions'.
    expect(asked.map((q) => q.sample).sort()).toEqual([101, 101]);
    expect(state.pool!.entries.find((e) => e.hash === "x")).toMatchObject({ resampled: 1 });
    expect(state.pool!.entries.find((e) => e.hash === "x")?.tokens).toBeLessThan(200);
    expect(state.best.hash).toBe("x");
  });

  test("weighted: a shorter member ahead on one lucky sample falls behind on two and the longer best stays", async () => {
    const { state } = await settleWith("weighted", {
      a: Array.from({ length: n }, (_, i) => (i < 9 ? 1 : 0)),
      x: Array.from({ length: n }, (_, i) => (i < 4 ? 1 : 0)),
    });
    // x's record is now the mean of 8 and 4 passes of 12 (0.5): behind a's 8.5 of 12 by more than its 300 tokens are worth.
    expect(state.pool!.entries.find((e) => e.hash === "x")?.hard).toBeCloseTo(0.5, 9);
    expect(state.best.hash).toBe("a");
  });

  test("weighted: a longer member on top that cannot prove it is better does not hide a shorter one ahead of the best", async () => {
    // y (600 tokens, 9 of 12) is the pool's top on the objective but longer than the best a (400
    // tokens, 8 of 12) and cannot prove one item better; x (100 tokens, 8 of 12) is ahead of a by
    // its saving. Both x and a get one more sample (the same 8 of 12) and x replaces the best.
    const y = entry("y", 9 / n, ["a"], { tokens: 600, step: 1, resampled: 1 });
    const same = Array.from({ length: n }, (_, i) => (i < 8 ? 1 : 0));
    const { state, asked } = await settleWith("weighted", { a: same, x: same }, [
      { entry: y, items: Array.from({ length: n }, (_, i) => (i < 9 ? 1 : 0)) },
    ]);
    expect(poolBest(state.pool!, { kind: "weighted", tokenWeight: 0.1 }).hash).toBe("y");
    expect(asked).toHaveLength(2);
    expect(state.best.hash).toBe("x");
  });

  test("score: the same member must prove it is better, and does not (no extra samples)", async () => {
    const { state, asked } = await settleWith("score");
    expect(asked).toHaveLength(0);
    expect(state.best.hash).toBe("a");
  });
});

describe("the objective", () => {
  test("weighted gives up token_weight per 1000 tokens; the cost frontier drops what is longer and no better", () => {
    expect(objectiveValue(score, 0.8, 2000)).toBe(0.8);
    expect(objectiveValue({ kind: "weighted", tokenWeight: 0.05 }, 0.8, 2000)).toBeCloseTo(0.7, 12);
    const pool = {
      entries: [
        entry("short", 0.7, [], { tokens: 50 }),
        entry("long", 0.8, [], { tokens: 400 }),
        entry("worse", 0.7, [], { tokens: 300 }),
      ],
      lineage: {},
      merged: [],
      log: [],
    };
    expect(tokenFrontier(pool, score).map((e) => e.hash)).toEqual(["short", "long"]);
    expect(poolBest(pool, score).hash).toBe("long");
    expect(poolBest(pool, { kind: "weighted", tokenWeight: 0.5 }).hash).toBe("short");
  });
});

describe("merging two skills", () => {
  const base = "# Skill\n\n## Conventions\n\n- be careful\n";
  test("takes the other parent's added lines into the first", () => {
    const a = "# Skill\n\n## Conventions\n\n- **Dates:** ISO dates.\n- be careful\n";
    const b = "# Skill\n\n## Conventions\n\n- be careful\n- **Numbers:** two decimals.\n";
    const m = mergeSkills(base, a, b);
    expect(m.text).toBe(
      "# Skill\n\n## Conventions\n\n- **Dates:** ISO dates.\n- be careful\n- **Numbers:** two decimals.\n",
    );
    expect(m).toMatchObject({ taken: 1, conflicts: 0 });
  });
  test("on a conflict the first parent's wording stays", () => {
    const a = "# Skill\n\n## Conventions\n\n- be careful with ISO dates\n";
    const b = "# Skill\n\n## Conventions\n\n- be careful with US dates\n";
    expect(mergeSkills(base, a, b)).toEqual({ text: a, taken: 0, conflicts: 1 });
  });
});

describe("search: pool on the simulator", () => {
  test("the default stays single: no pool in the state, summary.search says single", async () => {
    const r = await trainOnSim(quickConfig(["train.num_epochs=1"]));
    expect(r.result.state.pool).toBeUndefined();
    expect(r.result.summary.search?.mode).toBe("single");
    expect(r.result.summary.search?.frontier.some((f) => f.chosen && f.hash === r.result.state.best.hash)).toBe(true);
  });

  test("every member came through the gate from a pool parent; best_skill is the pool's best; a merge combines two parents", async () => {
    const r = await trainOnSim(quickConfig(["train.num_epochs=2", "optimizer.search=pool"]));
    const { state, summary } = r.result;
    const pool = state.pool!;
    const admitted = new Map<string, string[]>();
    for (const l of pool.log) if (l.hash && l.verdict === "accept") admitted.set(l.hash, l.parents);
    for (const e of pool.entries.filter((x) => x.step > 0)) {
      expect(admitted.get(e.hash)).toEqual(e.parents);
    }
    // Each step's parent was in the pool when the step ran (it is still there, or was admitted before that step).
    for (const l of pool.log.filter((x) => x.kind === "step")) {
      const p = l.parents[0]!;
      expect(p === state.baseline.hash || [...pool.log].some((x) => x.hash === p && x.step < l.step)).toBe(true);
    }
    // The best is a member; a member above it on the objective did not beat it under the run's rule
    // (here: a later skill one token shorter at the same selection score does not replace it).
    const best = pool.entries.find((e) => e.hash === state.best.hash && e.status === "member")!;
    expect(best).toBeDefined();
    const top = poolBest(pool, score);
    expect(top.score - best.score).toBeLessThan(0.05);
    expect(top.step).toBeGreaterThanOrEqual(best.step);
    expect(r.result.bestSkill).toBe(r.recorder.skills[state.best.hash]!);
    // The best moves only to the pool's top on the objective (a step's gate alone does not crown its candidate).
    let prevBest = r.recorder.checkpoints[0]!.state.best.hash;
    let moves = 0;
    for (const cp of r.recorder.checkpoints.filter((c) => c.kind === "step")) {
      if (cp.state.best.hash !== prevBest) {
        moves += 1;
        expect(cp.state.best.hash).toBe(poolBest(cp.state.pool!, score).hash);
      }
      prevBest = cp.state.best.hash;
    }
    expect(moves).toBeGreaterThan(0);
    expect(summary.search?.mode).toBe("pool");
    expect(summary.search?.chosen).toBe(state.best.hash);
    expect(summary.search?.pool?.length).toBe(pool.entries.length);
    const merge = pool.log.find((l) => l.kind === "merge" && l.hash);
    expect(merge).toBeDefined();
    const [a, b, m] = [merge!.parents[0]!, merge!.parents[1]!, merge!.hash!].map((h) => r.recorder.skills[h]!);
    expect(m).not.toBe(a);
    expect(m).not.toBe(b);
    const lines = (t: string) => new Set(t.split("\n").filter((x) => x.trim()));
    // The merged skill keeps the first parent's lines and takes at least one line only the second had.
    for (const x of lines(a!)) expect(lines(m!).has(x)).toBe(true);
    expect([...lines(b!)].some((x) => !lines(a!).has(x) && lines(m!).has(x))).toBe(true);
  });

  test("a kept slow update joins the pool as a member proposed from the skill it was built on", async () => {
    const r = await trainOnSim(quickConfig(["train.num_epochs=2", "optimizer.search=pool", "train.seed=7"]));
    const { state } = r.result;
    const pool = state.pool!;
    const su = pool.log.filter((l) => l.kind === "slow_update");
    expect(su.length).toBeGreaterThan(0);
    const kept = su.find((l) => l.verdict === "accept")!;
    expect(kept).toBeDefined();
    // The boundary's record names the same candidate, and the boundary's commit holds it in the pool.
    const cp = r.recorder.checkpoints.find(
      (c) =>
        c.kind === "boundary" &&
        (c.record as { slow_update?: { candidate_hash?: string } }).slow_update?.candidate_hash === kept.hash,
    )!;
    expect(cp).toBeDefined();
    const e = cp.state.pool!.entries.find((x) => x.hash === kept.hash)!;
    expect(e).toMatchObject({
      status: "member",
      parents: kept.parents,
      origin: expect.stringMatching(/^slow_update_epoch_/),
    });
    expect(r.recorder.skills[kept.parents[0]!]).toBeDefined();
    // Its per-item scores are known, so it competes on the frontier and can be drawn as a parent.
    expect(cp.state.selItems?.[kept.hash!]?.filter((x) => x !== null).length).toBeGreaterThan(0);
  });

  test("an undecided candidate stays in the pool and is decided on more answer samples", async () => {
    const r = await trainOnSim(
      quickConfig([
        "train.num_epochs=2",
        "optimizer.search=pool",
        "evaluation.gate_rule=paired",
        "env.sim_temperature=0.5",
      ]),
    );
    const log = r.result.state.pool!.log;
    const undecided = log.filter((l) => l.kind === "step" && l.verdict === "undecided");
    expect(undecided.length).toBeGreaterThan(0);
    const redecided = log.filter((l) => l.kind === "redecide");
    expect(redecided.length).toBeGreaterThan(0);
    for (const l of redecided) {
      const first = undecided.find((u) => u.hash === l.hash)!;
      expect(first.step).toBeLessThan(l.step);
    }
    // An entry whose re-decision accepted it is a member with the extra samples counted.
    for (const l of redecided.filter((x) => x.verdict === "accept")) {
      const e = r.result.state.pool!.entries.find((x) => x.hash === l.hash);
      if (e) expect(e).toMatchObject({ status: "member" });
    }
  });

  test("a member that turned down two candidates in a row gets one more answer sample, averaged into its record", async () => {
    const r = await trainOnSim(
      quickConfig(["train.num_epochs=3", "optimizer.search=pool", "env.sim_temperature=0.5", "train.seed=2"]),
    );
    const log = r.result.state.pool!.log;
    const resampled = log.filter((l) => l.kind === "resample");
    expect(resampled.length).toBeGreaterThan(0);
    for (const l of resampled) {
      // The two steps before it that drew this member as the parent were turned down.
      const steps = log.filter((x) => x.kind === "step" && x.parents[0] === l.hash && x.step <= l.step);
      expect(steps.slice(-2).every((x) => x.verdict !== "accept")).toBe(true);
      expect(steps.length).toBeGreaterThanOrEqual(2);
    }
    // In the commit of the step that resampled it: its record is a mean of two samples (halves
    // appear on items where they disagreed) and its scores are the record's means.
    const first = resampled[0]!;
    const cp = r.recorder.checkpoints.find((c) => c.kind === "step" && c.state.lastStep === first.step)!;
    const e = cp.state.pool!.entries.find((x) => x.hash === first.hash)!;
    expect(e.resampled).toBe(1);
    const rec = (cp.state.selItems?.[first.hash!] ?? []).flatMap((x) => (x ? [x[0]] : []));
    expect(rec.length).toBeGreaterThan(0);
    for (const x of rec) expect([0, 0.5, 1]).toContain(x);
    expect(e.hard).toBeCloseTo(rec.reduce((a, x) => a + x, 0) / rec.length, 9);
    // Never more than MAX_RESAMPLES (2) per member.
    const per = new Map<string, number>();
    for (const l of resampled) per.set(l.hash!, (per.get(l.hash!) ?? 0) + 1);
    expect(Math.max(...per.values())).toBeLessThanOrEqual(2);
  });
});

describe("the deployed cost per task (measured usage)", () => {
  /** A pool state whose selection usage rows (tokens per item; null = not measured) are given per hash. */
  function measured(rows: Record<string, (number | null)[]>, members = Object.keys(rows)): LoopState {
    const entries = members.map((h, i) => entry(h, 0.5 + i * 0.1, [], { tokens: 50 * (i + 1) }));
    return {
      ...stateWith(entries, {}),
      selUsage: Object.fromEntries(
        Object.entries(rows).map(([h, xs]) => [
          h,
          xs.map((x) => (x === null ? null : ([x, x / 1e6] as [number, number]))),
        ]),
      ),
    } as LoopState;
  }

  test("a skill measured on part of the split is compared with the baseline on those items, not on an easier subset", () => {
    // Item 0 is a long task (1000 tokens), items 1–3 short (100). The candidate adds 20 tokens per
    // task and was measured only on the short items (the gate stopped early).
    const state = measured({ base: [1000, 100, 100, 100], cand: [null, 120, 120, 120] });
    expect(taskCostOf(state, "base")!.tokens).toBe(325);
    expect(taskCostOf(state, "cand")!.tokens).toBe(345);
    expect(taskCostOf(state, "cand")!.costUsd).toBeCloseTo(345e-6, 9);
  });

  test("measured and estimated costs never mix: one member without usage sends every comparison back to skill sizes", () => {
    const all = measured({ base: [100, 100], a: [400, 400] });
    const o = { kind: "weighted" as const, tokenWeight: 1, state: () => all };
    expect(costOf(o, { hash: "a", tokens: 100 })).toBe(400);
    const part = measured({ base: [100, 100] }, ["base", "a"]);
    const p = { kind: "weighted" as const, tokenWeight: 1, state: () => part };
    expect(costOf(p, { hash: "a", tokens: 100 })).toBe(100);
    expect(taskCosts(part)).toBeUndefined();
    // The weighted best follows the measured cost: a's 0.1 higher score does not pay for 300 tokens at 1 point per 1000.
    expect(poolBest(all.pool!, o).hash).toBe("base");
    expect(poolBest(part.pool!, p).hash).toBe("a");
  });
});
