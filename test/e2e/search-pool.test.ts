import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { storedAnswers } from "../support/call-cache.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/** history.jsonl without what legitimately differs between two runs (timings and call accounting). */
function comparable(dir: string): Record<string, unknown>[] {
  const p = join(dir, "history.jsonl");
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const { timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved, ...rest } = JSON.parse(l);
      void [timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved];
      return rest as Record<string, unknown>;
    });
}

const summary = (dir: string) => JSON.parse(readFileSync(join(dir, "summary.json"), "utf8"));

/**
 * Start a run (10 ms per simulated call) and kill it with SIGKILL inside step `k`: once the step
 * has begun and four more answers are in the call cache.
 */
async function killInside(k: number, args: string[], out: string, cache: string): Promise<void> {
  const proc = Bun.spawn(
    [
      process.execPath,
      join(REPO_ROOT, "src", "main.ts"),
      "train",
      ...args,
      "--out",
      out,
      "--set",
      `model.cache_dir=${cache}`,
      "--set",
      "model.sim_latency_ms=10",
    ],
    {
      cwd: REPO_ROOT,
      env: Object.fromEntries(
        Object.entries({ ...process.env, NO_COLOR: "1" }).filter(
          ([key, v]) => v !== undefined && key !== "SKILLOPT_LOG_LEVEL",
        ),
      ) as Record<string, string>,
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  let text = "";
  const reader = proc.stderr.getReader();
  const marker = new RegExp(`\\[STEP ${k}/\\d+\\]`);
  while (!marker.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  expect(marker.test(text)).toBe(true);
  const start = storedAnswers(join(cache, "calls.sqlite"));
  while (storedAnswers(join(cache, "calls.sqlite")) < start + 4 && proc.exitCode === null) await Bun.sleep(5);
  proc.kill(9);
  await proc.exited;
}

const POOL = ["--config", "quickstart", "--set", "train.num_epochs=2", "--set", "optimizer.search=pool"];

describe("search: pool through the CLI", () => {
  test("kill -9 inside a step that merges, then --resume: the same pool decisions, frontier and best skill", async () => {
    using dir = tempDir();
    const ref = join(dir.path, "ref");
    const cut = join(dir.path, "cut");
    const r0 = await runCli(["train", ...POOL, "--out", ref, "--quiet"]);
    expect(r0.code, r0.stderr).toBe(0);
    const s0 = summary(ref);
    expect(s0.search.mode).toBe("pool");
    expect(s0.search.merges.tried).toBeGreaterThan(0);
    const members = s0.search.pool.filter((p: { status: string }) => p.status === "member").length;
    expect(`${r0.stdout}${r0.stderr}`).toContain(`pool: ${members} members, `);
    // The step whose commit holds the first merge: the run is killed inside it.
    const k = Number(
      s0.search.decisions.find((d: { kind: string; hash?: string }) => d.kind === "merge" && d.hash).step,
    );
    expect(k).toBeGreaterThan(1);

    await killInside(k, POOL, cut, join(dir.path, "cache"));
    expect(comparable(cut).some((h) => h.step === k)).toBe(false);

    const r = await runCli(["train", "--resume", cut, "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expect(comparable(cut)).toEqual(comparable(ref));
    const s1 = summary(cut);
    expect(s1.search).toEqual(s0.search);
    expect(readFileSync(join(cut, "best_skill.md"), "utf8")).toBe(readFileSync(join(ref, "best_skill.md"), "utf8"));

    // The report draws the frontier with the chosen skill ringed, and lists the pool.
    const html = readFileSync(join(cut, "report.html"), "utf8");
    expect(html).toContain('id="frontier-chart"');
    expect(html).toContain(`id="frontier-chosen" data-hash="${s1.search.chosen}"`);
    for (const f of s1.search.frontier) expect(html).toContain(`data-hash="${f.hash}"`);
    expect(html).toContain('id="pool-table"');
    expect(
      s1.search.frontier.filter((f: { chosen: boolean }) => f.chosen).map((f: { hash: string }) => f.hash),
    ).toEqual([s1.best.hash]);
  }, 120_000);

  test("weighted: the optimizer shortens the pool's best once; the shorter skill joins, and a kill -9 inside that step resumes to the same pool", async () => {
    using dir = tempDir();
    // Rules said twice and a line that instructs nothing: what a shortening takes out.
    const skill = join(dir.path, "skill.md");
    writeFileSync(
      skill,
      [
        "---",
        "name: house-style",
        "description: How to answer the team's reporting questions.",
        "---",
        "# House style",
        "",
        "## Conventions",
        "",
        "- **Dates:** Dates use the ISO 8601 form YYYY-MM-DD.",
        "- **Dates:** Write dates as YYYY-MM-DD (ISO 8601).",
        "- **Identifiers:** Name identifiers in kebab-case.",
        "- **Identifiers:** Identifiers are lowercase words joined by hyphens (kebab-case).",
        "- **Yes/no answers:** Be consistent with yes/no replies.",
        "",
      ].join("\n"),
    );
    const args = [...POOL, "--set", "evaluation.objective=weighted", "--set", "evaluation.token_weight=0.1"];
    args.push("--set", "optimizer.shorten=true");
    args.push("--set", `env.skill_init=${skill}`);
    const ref = join(dir.path, "ref");
    const r0 = await runCli(["train", ...args, "--out", ref]);
    expect(r0.code, r0.stderr).toBe(0);
    const s0 = summary(ref);
    // The simulator reports usage: the objective charged the measured tokens per task, which a
    // resumed run reads back from the call cache (below: the same pool and frontier).
    expect(s0.search.cost_basis).toBe("task");
    const asked = s0.search.decisions.filter((d: { kind: string }) => d.kind === "shorten");
    // Once per member: no member is offered twice.
    expect(new Set(asked.map((d: { parents: string[] }) => d.parents[0])).size).toBe(asked.length);
    // An accepted shortening still in the pool beside the member it shortened (a full pool evicts some).
    const inPool = (h: string) => s0.search.pool.find((p: { hash: string }) => p.hash === h);
    const first = asked.find(
      (d: { verdict: string; hash: string; parents: string[] }) =>
        d.verdict === "accept" && inPool(d.hash) && inPool(d.parents[0]!),
    );
    expect(first).toBeDefined();
    expect(inPool(first.hash).skill_tokens).toBeLessThan(inPool(first.parents[0]).skill_tokens);
    expect(s0.search.shortened.accepted).toBeGreaterThan(0);
    expect(`${r0.stdout}${r0.stderr}`).toContain(
      `shortened ${s0.search.shortened.accepted}/${s0.search.shortened.tried}`,
    );
    const html = readFileSync(join(ref, "report.html"), "utf8");
    expect(html).toContain(`joined the pool ${s0.search.shortened.accepted}`);

    const cut = join(dir.path, "cut");
    await killInside(Number(first.step), args, cut, join(dir.path, "cache"));
    expect(comparable(cut).some((h) => h.step === Number(first.step))).toBe(false);
    const r = await runCli(["train", "--resume", cut, "--quiet"]);
    expect(r.code, r.stderr).toBe(0);
    expect(comparable(cut)).toEqual(comparable(ref));
    expect(summary(cut).search).toEqual(s0.search);
    expect(readFileSync(join(cut, "best_skill.md"), "utf8")).toBe(readFileSync(join(ref, "best_skill.md"), "utf8"));
  }, 120_000);
});
