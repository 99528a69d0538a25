import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { endpointSets, REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

function history(dir: string): Record<string, unknown>[] {
  return readFileSync(join(dir, "history.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** A history without its accounting: timings, call counts, tokens, cost, and how many selection
 * rollouts early rejection spared (rollouts already in flight when it stops depend on timing). */
function comparable(dir: string): unknown[] {
  return history(dir).map(({ timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved, ...rest }) => {
    void [timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved];
    return rest;
  });
}

function spawnCli(args: string[]) {
  return Bun.spawn([process.execPath, join(REPO_ROOT, "src", "main.ts"), ...args], {
    cwd: REPO_ROOT,
    env: Object.fromEntries(
      Object.entries({ ...process.env, NO_COLOR: "1" }).filter(
        ([k, v]) => v !== undefined && k !== "SKILLOPT_LOG_LEVEL",
      ),
    ) as Record<string, string>,
    stdout: "pipe",
    stderr: "pipe",
  });
}

describe("skillopt train --config quickstart (sim)", () => {
  test("trains end to end, names the simulator, and writes the run folder and the store", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", "--config", "quickstart", "--out", out, "--json"]);
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n")[0]).toContain("sim (offline simulator");
    const s = JSON.parse(r.stdout);
    expect(s.status).toBe("finished");
    expect(s.backend).toContain("simulator");
    expect(s.baseline.selection).toBeLessThanOrEqual(0.3);
    expect(s.best.selection).toBeGreaterThanOrEqual(0.8);
    expect(s.rejected).toBeGreaterThanOrEqual(1);
    // The bundled configs choose the rule (auto): 24 selection items are too few for the paired
    // test to accept a typical gain, so the posterior rule decides, and the summary says why.
    expect(s.gate_rule).toBe("posterior");
    expect(s.gate_choice.configured).toBe("auto");
    expect(s.gate_choice.why).toContain("24 selection items");
    expect(s.accepted_evidence.length).toBe(s.accepted);
    expect(s.noise_floor).toMatchObject({ items: 24, selection_items: 24 });
    expect(Object.keys(s.calls.by_stage)).toEqual(expect.arrayContaining(["analyst", "merge", "rollout"]));
    for (const f of [
      "best_skill.md",
      "skills/skill_v0000.md",
      "skills/skill_v0012.md",
      "summary.json",
      "config.resolved.yaml",
      "state.sqlite",
    ]) {
      expect(existsSync(join(out, f))).toBe(true);
    }
    expect(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")).best).toEqual(s.best);
    // The deployed cost: each skill's size by the documented estimate (≈4 chars/token, skill-format.ts).
    const tokensOf = (f: string) => Math.ceil(readFileSync(join(out, f), "utf8").length / 4);
    const best = tokensOf("best_skill.md");
    expect(s.skill_tokens).toEqual({
      baseline: tokensOf("skills/skill_v0000.md"),
      best,
      final: s.final.hash === s.best.hash ? best : expect.any(Number),
    });
    expect(s.skill_tokens.best).toBeGreaterThan(s.skill_tokens.baseline);
    // The report shows the same figures in its summary cards.
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html).toContain(
      `<div class="k">deployed skill</div><div class="v">${best.toLocaleString("en-US")} tokens</div>`,
    );
    expect(html).toContain(
      `baseline ${s.skill_tokens.baseline.toLocaleString("en-US")} · final ${s.skill_tokens.final.toLocaleString("en-US")}`,
    );
    const h = history(out);
    expect(h).toHaveLength(12);
    for (const step of h.filter((x) =>
      ["accept", "accept_new_best", "reject", "undecided"].includes(String(x.action)),
    )) {
      const g = step.gate as {
        verdict: string;
        delta: number;
        ci: [number, number];
        n_used: number;
        flips: { gained: number; lost: number };
      };
      expect(["accept", "reject", "undecided"]).toContain(g.verdict);
      expect(g.ci[0]).toBeLessThanOrEqual(g.delta);
      expect(g.ci[1]).toBeGreaterThanOrEqual(g.delta);
      expect(g.n_used).toBeGreaterThan(0);
      expect(g.flips.gained + g.flips.lost).toBeLessThanOrEqual(g.n_used);
    }
    expect(Object.keys(h[0]!)).toEqual(
      expect.arrayContaining([
        "epoch",
        "step",
        "learning_rate",
        "rollout_hard",
        "candidate_gate_score",
        "current_score",
        "action",
        "outcome",
        "calls",
        "tokens",
        "cost_usd",
        "wall_time_s",
      ]),
    );
    const db = new Database(join(out, "state.sqlite"), { readonly: true });
    expect((db.query("SELECT count(*) AS n FROM steps").get() as { n: number }).n).toBe(12);
    expect((db.query("SELECT value FROM run_meta WHERE key = 'status'").get() as { value: string }).value).toBe(
      "finished",
    );
    expect((db.query("SELECT count(*) AS n FROM skill_versions").get() as { n: number }).n).toBeGreaterThan(5);
    db.close();
    const runs = await runCli(["runs", dir.path, "--json"]);
    expect(runs.code).toBe(0);
    expect(JSON.parse(runs.stdout)).toEqual([
      expect.objectContaining({ dir: out, status: "finished", steps: 12, benchmark: "conventions" }),
    ]);
  });

  test("a key passed on the command line reaches no file of the run", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const secret = "sk-test-abcdefghijklmnopqrstuvwxyz0123";
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--out",
      out,
      "--quiet",
      "--set",
      "train.num_epochs=1",
      "--set",
      "model.backend=sim",
      "--set",
      `model.openai_compatible_api_key=${secret}`,
    ]);
    expect(r.code).toBe(0);
    const leaks = (await Array.fromAsync(new Bun.Glob("**/*").scan({ cwd: out, dot: true }))).filter((f) =>
      readFileSync(join(out, f)).includes(secret.slice(8)),
    );
    expect(leaks).toEqual([]);
    expect(r.stdout + r.stderr).not.toContain(secret.slice(8));
  });

  test("--dry-run prints the plan and predicted calls without calling a model or creating a store", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", "--config", "quickstart", "--out", out, "--dry-run", "--json"]);
    expect(r.code).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.total_steps).toBe(12);
    expect(plan.edit_budgets).toHaveLength(12);
    expect(plan.predicted_calls.target.train_rollouts).toBe(96);
    expect(existsSync(join(out, "state.sqlite"))).toBe(false);
  });

  test("bad input exits 2 with one clear line", async () => {
    const cases: [string[], string][] = [
      [["--set", "train.batch_size=0"], "train.batch_size"],
      [["--set", "env.name=nope"], 'unknown benchmark "nope"'],
      [["--set", "env.skill_init=does/not/exist.md"], "env.skill_init: file not found: does/not/exist.md"],
    ];
    for (const [extra, msg] of cases) {
      const r = await runCli(["train", "--config", "quickstart", "--dry-run", ...extra]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(msg);
      expect(r.stderr).not.toContain("    at ");
    }
  });

  test("an upstream-layout skill_init that is absent falls back to the embedded initial skill, and says so", async () => {
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--dry-run",
      "--json",
      "--set",
      "env.skill_init=skillopt/envs/conventions/skills/initial.md",
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).initial_skill).toContain("embedded");
  });

  test("kill -9 at a random step, then --resume, ends with the same history and best skill", async () => {
    using dir = tempDir();
    const ref = join(dir.path, "ref");
    const cut = join(dir.path, "cut");
    // A step-buffer window of 2 (quickstart has 4 steps per epoch): the store's loop state then
    // holds older steps folded into their summary, which the resumed run must carry on from.
    const window = ["--set", "optimizer.step_buffer_window=2"];
    expect(
      (
        await runCli([
          "train",
          "--config",
          "quickstart",
          "--out",
          ref,
          "--quiet",
          "--set",
          `model.cache_dir=${join(dir.path, "ref-cache")}`,
          ...window,
        ])
      ).code,
    ).toBe(0);
    const k = 2 + Math.floor(Math.random() * 8);
    const cache = join(dir.path, "cache");
    const proc = spawnCli([
      "train",
      "--config",
      "quickstart",
      "--out",
      cut,
      "--quiet",
      "--set",
      `model.cache_dir=${cache}`,
      "--set",
      "model.sim_latency_ms=15",
      ...window,
    ]);
    const hist = join(cut, "history.jsonl");
    while (!(existsSync(hist) && readFileSync(hist, "utf8").split("\n").filter(Boolean).length >= k)) {
      if (proc.exitCode !== null) break;
      await Bun.sleep(20);
    }
    proc.kill(9);
    await proc.exited;
    expect(history(cut).length).toBeLessThan(12);
    const listed = await runCli(["runs", dir.path, "--json"]);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ dir: cut, status: "interrupted" })]),
    );
    const r = await runCli(["train", "--resume", cut, "--json"]);
    expect(r.code).toBe(0);
    expect(comparable(cut)).toEqual(comparable(ref));
    // Every call was paid once: calls completed before the kill came back from the call cache.
    const refCalls = JSON.parse(readFileSync(join(ref, "summary.json"), "utf8")).calls;
    const cutCalls = JSON.parse(r.stdout).calls;
    expect(cutCalls.total - cutCalls.cached).toBe(refCalls.total - refCalls.cached);
    expect(readFileSync(join(cut, "best_skill.md"), "utf8")).toBe(readFileSync(join(ref, "best_skill.md"), "utf8"));
    // The steps' artifacts and candidates: one line a step, the same as the uninterrupted run's
    // (a line the kill cut short rewritten from the store), and no folder of files per step.
    expect(readFileSync(join(cut, "steps.jsonl"), "utf8")).toBe(readFileSync(join(ref, "steps.jsonl"), "utf8"));
    expect(existsSync(join(cut, "steps"))).toBe(false);
  }, 60_000);

  test("the same quickstart through openai_compatible against `skillopt sim serve` gives the same result", async () => {
    using dir = tempDir();
    const serve = spawnCli(["sim", "serve", "--port", "0"]);
    try {
      const reader = serve.stdout.getReader();
      let banner = "";
      while (!banner.includes("\n")) {
        const { value, done } = await reader.read();
        if (done) break;
        banner += new TextDecoder().decode(value);
      }
      const url = /(http:\/\/\S+\/v1)/.exec(banner)?.[1];
      expect(url).toBeDefined();
      const a = join(dir.path, "inproc");
      const b = join(dir.path, "http");
      expect((await runCli(["train", "--config", "quickstart", "--out", a, "--quiet", "--no-cache"])).code).toBe(0);
      const r = await runCli(
        ["train", "--config", "quickstart", "--out", b, "--json", "--no-cache", ...endpointSets(url!)],
        {
          env: { OPENAI_COMPATIBLE_API_KEY: "sim-local" },
        },
      );
      expect(r.code).toBe(0);
      expect(r.stderr.split("\n")[0]).toContain("openai_compatible");
      expect(comparable(b)).toEqual(comparable(a));
      expect(readFileSync(join(b, "best_skill.md"), "utf8")).toBe(readFileSync(join(a, "best_skill.md"), "utf8"));
    } finally {
      serve.kill();
      await serve.exited;
    }
  }, 60_000);
});
