import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endpointSets, runCli } from "../support/cli.ts";
import { type FakeRequest, type FakeUsage, startFakeOpenAI } from "../support/fake-openai.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

interface FrontierPoint {
  origin: string;
  hash: string;
  score: number;
  skill_tokens: number;
  task_tokens?: number;
  task_cost_usd?: number | null;
  objective: number;
  chosen: boolean;
}

const searchOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, "summary.json"), "utf8")).search as {
    cost_basis?: string;
    frontier: FrontierPoint[];
    pool?: FrontierPoint[];
  };

const RUN = [
  "--config",
  "quickstart",
  "--set",
  "train.num_epochs=2",
  "--set",
  "optimizer.search=pool",
  "--set",
  "evaluation.objective=weighted",
  "--set",
  "model.target=tgt",
  "--set",
  "model.optimizer=opt",
  "--json",
];

/** The simulator's answers over HTTP; the target's usage as `usage` says (default: the fake's count of the prompt's characters). */
function server(usage?: (req: FakeRequest) => FakeUsage | null) {
  const sim = simReply();
  return startFakeOpenAI({
    reply: (req) => (req.model === "tgt" && usage ? { text: sim(req), usage: usage(req) } : sim(req)),
  });
}

describe("the deployed cost per task, from the target's usage", () => {
  test("the objective charges the tokens the target reported per selection task, priced; a cached re-run measures the same", async () => {
    using dir = tempDir();
    // Every target call reports 300 prompt and 20 completion tokens; one call per task here.
    await using fake = await server(() => ({ prompt_tokens: 300, completion_tokens: 20 }));
    const env = { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    const priced = [
      "--set",
      "model.pricing.tgt.input_per_mtok=1",
      "--set",
      "model.pricing.tgt.output_per_mtok=2",
      ...endpointSets(fake.url),
    ];
    const first = await runCli(["train", ...RUN, ...priced, "--out", join(dir.path, "a")], { env });
    expect(first.code, first.stderr).toBe(0);
    const a = searchOf(join(dir.path, "a"));
    expect(a.cost_basis).toBe("task");
    for (const p of [...a.frontier, ...(a.pool ?? [])]) {
      expect(p.task_tokens).toBe(320);
      expect(p.task_cost_usd).toBeCloseTo(300e-6 + 40e-6, 10);
    }
    const chosen = a.frontier.find((p) => p.chosen)!;

    // The same run again from the call cache: no target call is paid, and the cost is the same.
    const seen = fake.requests.filter((r) => r.model === "tgt").length;
    const human = RUN.filter((x) => x !== "--json");
    const again = await runCli(["train", ...human, ...priced, "--out", join(dir.path, "b")], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr + again.stdout).toContain("deployed per task: 320 tokens, $0.00034");
    expect(fake.requests.filter((r) => r.model === "tgt").length).toBe(seen);
    const b = searchOf(join(dir.path, "b"));
    expect(b.cost_basis).toBe("task");
    expect(b.frontier).toEqual(a.frontier);
    expect(b.frontier.find((p) => p.chosen)!.hash).toBe(chosen.hash);
  });

  test("measured tokens follow the skill's length; a target that reports no usage falls back to the skills' sizes", async () => {
    using dir = tempDir();
    // The fake's default usage: its own count of the prompt's and the answer's characters.
    await using counted = await server();
    const env = { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, "cache-1") };
    const r = await runCli(["train", ...RUN, ...endpointSets(counted.url), "--out", join(dir.path, "c")], { env });
    expect(r.code, r.stderr).toBe(0);
    const c = searchOf(join(dir.path, "c"));
    expect(c.cost_basis).toBe("task");
    const points = [...c.frontier, ...(c.pool ?? [])];
    const base = points.find((p) => p.origin === "initial_skill")!;
    const longer = points.filter((p) => p.skill_tokens > base.skill_tokens + 40);
    expect(longer.length).toBeGreaterThan(0);
    for (const p of longer) {
      // The skill rides in every target prompt: a longer skill costs its extra tokens on each task.
      const extra = p.task_tokens! - base.task_tokens!;
      const grew = p.skill_tokens - base.skill_tokens;
      expect(extra).toBeGreaterThan(grew * 0.8);
      expect(extra).toBeLessThan(grew * 1.25 + 10);
    }
    for (const p of c.frontier) expect(p.objective).toBeCloseTo(p.score - (0.02 * p.task_tokens!) / 1000, 3);

    await using silent = await server(() => null);
    const env2 = { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, "cache-2") };
    const s = await runCli(["train", ...RUN, ...endpointSets(silent.url), "--out", join(dir.path, "d")], { env: env2 });
    expect(s.code, s.stderr).toBe(0);
    const d = searchOf(join(dir.path, "d"));
    expect(d.cost_basis).toBe("skill");
    for (const p of d.frontier) {
      expect(p.task_tokens).toBeUndefined();
      expect(p.objective).toBeCloseTo(p.score - (0.02 * p.skill_tokens) / 1000, 3);
    }
    expect(readFileSync(join(dir.path, "d", "report.html"), "utf8")).toContain("the target reported no usage");
    expect(readFileSync(join(dir.path, "c", "report.html"), "utf8")).toContain("tokens per selection task");
  });
});

describe("eval: what a task cost with the skill", () => {
  test("eval_summary.json has per_task tokens and dollars from the target's usage, and none when it reports none", async () => {
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, "# House style\n\n- Dates are YYYY-MM-DD.\n");
    const args = (url: string, out: string) => [
      "eval",
      "--config",
      "quickstart",
      "--skill",
      skill,
      "--set",
      "model.target=tgt",
      "--set",
      "model.optimizer=opt",
      "--set",
      "model.pricing.tgt.input_per_mtok=1",
      "--set",
      "model.pricing.tgt.output_per_mtok=2",
      ...endpointSets(url),
      "--out",
      join(dir.path, out),
    ];
    await using reported = await server(() => ({ prompt_tokens: 300, completion_tokens: 20 }));
    const env = { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, "cache-1") };
    const r = await runCli(args(reported.url, "a"), { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).toContain("Per task: 320 tokens, $0.00034");
    const a = JSON.parse(readFileSync(join(dir.path, "a", "eval_summary.json"), "utf8"));
    expect(a.per_task.tokens).toBe(320);
    expect(a.per_task.cost_usd).toBeCloseTo(340e-6, 10);

    await using silent = await server(() => null);
    const env2 = { OPENAI_COMPATIBLE_API_KEY: "sk-fake", SKILLOPT_CACHE_DIR: join(dir.path, "cache-2") };
    const s = await runCli(args(silent.url, "b"), { env: env2 });
    expect(s.code, s.stderr).toBe(0);
    expect(s.stdout + s.stderr).not.toContain("Per task:");
    expect(JSON.parse(readFileSync(join(dir.path, "b", "eval_summary.json"), "utf8")).per_task).toBeUndefined();
  });
});
