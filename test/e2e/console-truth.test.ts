import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { endpointSets, runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

// What the training console says must add up and agree with itself within one run.
describe("the console tells the truth", () => {
  test("the step counts add up to the steps run, and the gate's minimum effect reads the same everywhere", async () => {
    using dir = tempDir();
    // The paired rule: its verdicts word the minimum effect, and on this split some end undecided.
    const r = await runCli(
      ["train", "--config", "quickstart", "--set", "evaluation.gate_rule=paired", "--out", join(dir.path, "run")],
      { cwd: dir.path, env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") } },
    );
    expect(r.code).toBe(0);
    const m = /steps (\d+)\/\d+: accepted (\d+), rejected (\d+) \(early \d+\), undecided (\d+), skipped (\d+)/.exec(
      r.stdout,
    );
    expect(m).not.toBeNull();
    const [steps, accepted, rejected, undecided, skipped] = m!.slice(1).map(Number) as number[];
    expect(accepted! + rejected! + undecided! + skipped!).toBe(steps!);
    // The same counts from the per-step lines.
    const actions = [...r.stderr.matchAll(/\[STEP \d+\/\d+ done\] epoch=\d+ action=(\w+)/g)].map((x) => x[1]!);
    expect(actions).toHaveLength(steps!);
    expect(actions.filter((a) => a === "undecided")).toHaveLength(undecided!);
    expect(actions.filter((a) => a.startsWith("skip"))).toHaveLength(skipped!);
    // One minimum effect, in one unit: the plan line, the noise-floor advice and the gate's reasons.
    const plan = /min_effect=([\d.]+) \(([\d.]+) pts\)/.exec(r.stderr);
    expect(plan).not.toBeNull();
    const [fraction, points] = [plan![1]!, plan![2]!];
    expect((Number(fraction) * 100).toFixed(1)).toBe(points);
    const advice = /evaluation\.gate_min_effect is ([\d.]+), ([\d.]+) pts/.exec(r.stderr);
    expect(advice?.slice(1)).toEqual([fraction, points]);
    const reasons = [...r.stderr.matchAll(/minimum effect \(([\d.]+) pts\)/g)].map((x) => x[1]);
    expect(reasons.length).toBeGreaterThan(0);
    expect(new Set(reasons)).toEqual(new Set([points]));
  });

  test("a run whose best skill is still the initial one says it learned nothing, never a plain 'finished'", async () => {
    using dir = tempDir();
    // Under the paired rule no gain reaches a minimum effect of 100 points, and no slow update runs.
    const sets = ["evaluation.gate_rule=paired", "evaluation.gate_min_effect=1", "optimizer.use_slow_update=false"];
    const r = await runCli(
      ["train", "--config", "quickstart", ...sets.flatMap((s) => ["--set", s]), "--out", join(dir.path, "run")],
      { cwd: dir.path, env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") } },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toStartWith("Training finished without improvement — ");
    expect(r.stdout).toContain("  nothing learned: no candidate beat the initial skill on selection");
    expect(r.stdout).toContain("accepted 0,");
    // A run that improved keeps the plain heading and no such line.
    const ok = await runCli(["train", "--config", "quickstart", "--out", join(dir.path, "ok")], {
      cwd: dir.path,
      env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") },
    });
    expect(ok.stdout).toStartWith("Training finished — ");
    expect(ok.stdout).not.toContain("nothing learned");
  });

  test("a mistyped, unpriced model name is named at start, before the first step, with the likely intended name", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply() });
    const r = await runCli(
      [
        "train",
        "--config",
        "quickstart",
        "--out",
        join(dir.path, "run"),
        ...endpointSets(server.url),
        "--set",
        "model.target=gpt-5.4-mnii",
        "--set",
        "train.num_epochs=1",
      ],
      { cwd: dir.path },
    );
    expect(r.code).toBe(0);
    const warn = r.stderr.indexOf('[warn] no price is known for the target model "gpt-5.4-mnii" (openai_compatible)');
    expect(warn).toBeGreaterThan(-1);
    expect(r.stderr).toContain('(did you mean "gpt-5.4-mini"?)');
    expect(warn).toBeLessThan(r.stderr.indexOf("[STEP 1/"));
    expect(r.stdout).toContain("cost unknown");
    // The priced optimizer model gets no such line.
    expect(r.stderr).not.toContain("no price is known for the optimizer model");
    // `eval` says the same before it scores.
    const ev = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--skill",
        join(dir.path, "run", "best_skill.md"),
        "--out",
        join(dir.path, "eval"),
        ...endpointSets(server.url),
        "--set",
        "model.target=gpt-5.4-mnii",
      ],
      { cwd: dir.path },
    );
    expect(ev.code).toBe(0);
    expect(ev.stderr).toContain('[warn] no price is known for the target model "gpt-5.4-mnii" (openai_compatible)');
  });
});
