import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { simLoads } from "../../src/backends/sim/trigger.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { importSkillCreator, importTriggerEvals } from "../../src/benchmarks/tasks/import-skill-creator.ts";
import { BUNDLED_DISTRACTORS, readDistractorDir } from "../../src/benchmarks/trigger/distractors.ts";
import { triggerMetrics } from "../../src/benchmarks/trigger/metrics.ts";
import { DESCRIPTION_SCOPE } from "../../src/benchmarks/trigger/scope.ts";
import { generateTriggerSplits, INITIAL_SKILL } from "../../src/benchmarks/trigger/world.ts";
import { applyScopedEdits, type RolloutResult, scopeViolation } from "../../src/engine/index.ts";
import { formatViolation } from "../../src/engine/skill-format.ts";
import { skillCard } from "../../src/lib/index.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { benchContext, FIXTURES } from "./support/context.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const POSTMORTEM = join(FIXTURES, "trigger", "incident-postmortem");
const EVAL_SET = join(POSTMORTEM, "evals", "trigger_evals.json");
const SKILL = readFileSync(join(POSTMORTEM, "SKILL.md"), "utf8");

/** The body of a SKILL.md (everything after its front matter), byte for byte. */
const body = (skill: string) => skill.slice(skill.indexOf("\n---\n", 4) + 5);

describe("trigger rollouts against a real HTTP server", () => {
  test("a load decision is scored per item, the prompt shows the description beside 20 distractors, a failed call is no decision", async () => {
    const bench = (await getBenchmark("trigger"))!;
    await using server = await startFakeOpenAI();
    using dir = tempDir();
    await using ctx = await benchContext(server.url, { split_mode: "ratio", data_path: "" }, dir.path);
    const item = (id: string, should: boolean) => ({
      id,
      query: `query ${id} about an outage`,
      should_trigger: should,
    });
    server.enqueue("I would load <answer>incident-postmortem, xlsx-analysis</answer>");
    const hit = await bench.rollout(item("a", true), SKILL, ctx, 0);
    const prompt = server.requests[0]!.lastUserText;
    expect(prompt).toContain("- incident-postmortem: Helps write documents for the engineering team.");
    expect(prompt.match(/^- [a-z0-9-]+: /gm)?.length).toBe(21);
    expect(server.requests[0]!.systemText).toContain("<answer>none</answer>");
    server.enqueue("<answer>none</answer>");
    const miss = await bench.rollout(item("b", true), SKILL, ctx, 0);
    server.enqueue("<answer>Incident-Postmortem</answer>");
    const falseHit = await bench.rollout(item("c", false), SKILL, ctx, 0);
    server.enqueue("<answer>release-notes</answer>");
    const reject = await bench.rollout(item("d", false), SKILL, ctx, 0);
    server.enqueue({ fault: "status", status: 400, message: "context too long" });
    const failed = await bench.rollout(item("e", true), SKILL, ctx, 0);

    expect([hit, miss, falseHit, reject].map((r) => [r.hard, r.trigger_expected, r.trigger_loaded])).toEqual([
      [1, true, true],
      [0, true, false],
      [0, false, true],
      [1, false, false],
    ]);
    expect(miss.fail_reason).toStartWith("missed trigger: incident-postmortem should load");
    expect(falseHit.fail_reason).toStartWith("false trigger: incident-postmortem loaded");
    expect(hit.task_type).toBe("should_trigger");
    // The optimizer reads the query and the verdict, not the 21-skill list again.
    expect(JSON.stringify(hit.trajectory)).not.toContain("xlsx-analysis:");
    expect(JSON.stringify(miss.trajectory)).toContain("should_load: yes");
    // Without a tag, a bare list of installed names (or "none") is a decision; prose is none.
    server.enqueue("incident-postmortem");
    const bare = await bench.rollout(item("f", true), SKILL, ctx, 0);
    server.enqueue("None.");
    const bareNone = await bench.rollout(item("g", false), SKILL, ctx, 0);
    server.enqueue("### Example createServer(s)");
    const prose = await bench.rollout(item("h", false), SKILL, ctx, 0);
    expect([bare.trigger_loaded, bare.hard, bareNone.trigger_loaded, bareNone.hard]).toEqual([true, 1, false, 1]);
    expect(prose.agent_ok).toBe(false);
    expect(prose.trigger_loaded).toBeUndefined();
    expect(prose.fail_reason).toStartWith("no decision: the reply has no <answer> tag");
    expect(failed.hard).toBe(0);
    expect(failed.trigger_loaded).toBeUndefined();
    expect(failed.fail_reason).toStartWith("error:");

    const m = triggerMetrics([hit, miss, falseHit, reject, failed, prose] as RolloutResult[]);
    expect(m).toEqual({ n: 4, tp: 1, fp: 1, fn: 1, tn: 1, precision: 0.5, recall: 0.5, f1: 0.5, accuracy: 0.5 });
    expect(bench.splitMetrics?.([hit, reject])).toMatchObject({ tp: 1, tn: 1, f1: 1 });
  });

  test("a skill without front matter stops the run with the key named; distractors come from a folder when given", async () => {
    const bench = (await getBenchmark("trigger"))!;
    await using server = await startFakeOpenAI({ reply: "<answer>none</answer>" });
    using dir = tempDir();
    const it = { id: "x", query: "q", should_trigger: true };
    await using ctx = await benchContext(
      server.url,
      { distractors_dir: join(FIXTURES, "trigger", "distractors") },
      dir.path,
    );
    await expect(bench.rollout(it, "# no front matter\n", ctx, 0)).rejects.toThrow(/env\.skill_init|front matter/);
    await bench.rollout(it, SKILL, ctx, 0);
    const listed = server.requests.at(-1)!.lastUserText.match(/^- [a-z0-9-]+: .*$/gm)!;
    expect(listed.map((l) => l.split(":")[0]).sort()).toEqual([
      "- incident-postmortem",
      "- meeting-notes",
      "- release-notes",
      "- sql-review",
    ]);
    expect(listed.find((l) => l.startsWith("- sql-review"))).toBe(
      "- sql-review: Review SQL queries and schema migrations: slow query plans, indexes and PostgreSQL schema design.",
    );
    expect(() => readDistractorDir(join(FIXTURES, "trigger", "incident-postmortem", "evals"))).toThrow(
      /holds no skill/,
    );
  });
});

describe("only the description is trained", () => {
  test("edits apply inside the description; an edit anchored in the body is refused with its reason; the body stays byte-exact", () => {
    const r = applyScopedEdits(
      SKILL,
      [
        { op: "append", content: "Use it for incident postmortems: outage timeline, root cause." },
        { op: "replace", target: "engineering team", content: "on-call engineers" },
        { op: "insert_after", target: "# Incident postmortems", content: "Always load me." },
        { op: "replace", target: "Blameless", content: "Blameful" },
      ],
      DESCRIPTION_SCOPE,
    );
    expect(r.report.map((x) => x.status)).toEqual([
      "applied_append",
      "applied_replace",
      "skipped_out_of_scope",
      "skipped_out_of_scope",
    ]);
    expect(r.report[2]!.reason).toBe(
      "this benchmark trains only the description in the SKILL.md front matter; the target lies outside it",
    );
    expect(skillCard(r.skill).description).toBe(
      "Helps write documents for the on-call engineers. Use it for incident postmortems: outage timeline, root cause.",
    );
    expect(body(r.skill)).toBe(body(SKILL));
    expect(r.skill.split("\n---\n")[0]).toContain('description: "Helps write documents'); // quoted: it holds ": "
    expect(formatViolation(r.skill, SKILL, null)).toBeUndefined();
  });

  test("a candidate that changes anything but the description is out of scope; a folded description is rewritten to one line", () => {
    const folded = "---\nname: x\ndescription: >\n  first line\n  second line\nlicense: MIT\n---\nbody\n";
    expect(DESCRIPTION_SCOPE.read(folded)).toBe("first line second line");
    expect(DESCRIPTION_SCOPE.write(folded, "new  words")).toBe(
      "---\nname: x\ndescription: new words\nlicense: MIT\n---\nbody\n",
    );
    expect(scopeViolation(DESCRIPTION_SCOPE.write(folded, "other"), folded, DESCRIPTION_SCOPE)).toBeUndefined();
    expect(scopeViolation(`${folded}more body\n`, folded, DESCRIPTION_SCOPE)).toEqual({
      kind: "out_of_scope",
      scope: "the description in the SKILL.md front matter",
    });
    expect(scopeViolation("no front matter\n", folded, DESCRIPTION_SCOPE)?.kind).toBe("out_of_scope");
    // Whatever the optimizer writes reads back the same, and the front matter stays valid.
    for (const text of [
      'Use for: "quoted" words # not a comment',
      "- starts like a list item",
      "ends with a colon:",
      "'single' and \\backslash\\ and ü",
      "[brackets] {braces} & *stars*",
    ]) {
      const w = DESCRIPTION_SCOPE.write(folded, text);
      expect(DESCRIPTION_SCOPE.read(w)).toBe(text);
      expect(skillCard(w).name).toBe("x");
      expect(w.endsWith("license: MIT\n---\nbody\n")).toBe(true);
    }
    const none = applyScopedEdits("plain\n", [{ op: "append", content: "x" }], DESCRIPTION_SCOPE);
    expect(none.report[0]!.status).toBe("skipped_out_of_scope");
    expect(none.skill).toBe("plain\n");
  });
});

describe("whole-document rewrites under the description scope", () => {
  test("a rewrite keeps only its description: the simulator's body rewrite is dropped and the step says why", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(
      [
        "train",
        "--config",
        "trigger",
        "--set",
        "model.backend=sim",
        "--set",
        "optimizer.skill_update_mode=rewrite_from_suggestions",
        "--set",
        "train.num_epochs=1",
        "--out",
        out,
      ],
      { env: { SKILLOPT_CACHE_DIR: join(dir.path, "cache") } },
    );
    expect({ code: r.code, stderr: r.code ? r.stderr : "" }).toEqual({ code: 0, stderr: "" });
    expect(readFileSync(join(out, "best_skill.md"), "utf8")).toBe(INITIAL_SKILL);
    expect(readFileSync(join(out, "history.jsonl"), "utf8")).toContain(
      "refused: changes outside the description in the SKILL.md front matter were dropped",
    );
  }, 60_000);
});

describe("settings that would write outside the description", () => {
  test("the slow update, the skill-aware appendix and a skill without a description stop train with one line, exit 2, nothing written", async () => {
    using dir = tempDir();
    const noFm = join(dir.path, "plain.md");
    await Bun.write(noFm, "# Plain skill\n");
    const cases: Array<[string, RegExp]> = [
      ["optimizer.use_slow_update=true", /optimizer\.use_slow_update writes outside the description/],
      ["optimizer.use_skill_aware_reflection=true", /optimizer\.use_skill_aware_reflection writes outside/],
      [`env.skill_init=${noFm}`, /plain\.md: trigger trains the description .* has none \(env\.skill_init\)/],
    ];
    for (const [set, line] of cases) {
      const out = join(dir.path, set.split("=")[0]!);
      const r = await runCli([
        "train",
        "--config",
        "trigger",
        "--set",
        "model.backend=sim",
        "--set",
        set,
        "--out",
        out,
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(line);
      expect(r.stderr.trim().split("\n").length).toBe(1);
      expect(await Bun.file(join(out, "state.sqlite")).exists()).toBe(false);
    }
  });
});

describe("the simulated target and world", () => {
  test("loads a skill whose description covers the query's words, and not when a 'Not for' word occurs", () => {
    const skills = [
      { name: "expense-reports", description: "Use it for receipts, mileage and reimbursement. Not for: insurance." },
      ...BUNDLED_DISTRACTORS,
    ];
    expect(simLoads("the taxi receipts and getting reimbursed", skills)).toEqual(["expense-reports"]);
    expect(simLoads("my insurance policy and the receipt for the repair", skills)).not.toContain("expense-reports");
    const git = simLoads("rebase my feature branch onto main and fix the merge conflicts", skills);
    expect(git).toContain("git-workflow");
    expect(git).not.toContain("expense-reports");
  });

  test("the generated world is seeded, mixes positives, near misses and far misses, and starts below F1 0.6", () => {
    const a = generateTriggerSplits(3, { train: 40, val: 30, test: 60 });
    expect(generateTriggerSplits(3, { train: 40, val: 30, test: 60 })).toEqual(a);
    const kinds = new Set(a.test.map((t) => t.kind));
    expect([...kinds].sort()).toEqual(["far", "near_miss", "positive"]);
    const d = skillCard(INITIAL_SKILL).description!;
    const results = a.test.map((t) => ({
      id: t.id,
      hard: 0,
      soft: 0,
      trajectory: [],
      trigger_expected: t.should_trigger,
      trigger_loaded: simLoads(String(t.query), [
        { name: "expense-reports", description: d },
        ...BUNDLED_DISTRACTORS,
      ]).includes("expense-reports"),
    }));
    expect(triggerMetrics(results).f1!).toBeLessThan(0.6);
  });
});

describe("skill-creator trigger evals", () => {
  test("the real eval-set shape imports; an evals.json with should_trigger entries too; bad entries are named", () => {
    const raw = JSON.parse(readFileSync(EVAL_SET, "utf8")) as unknown[];
    const tasks = importTriggerEvals(EVAL_SET, raw);
    expect(tasks.length).toBe(40);
    expect(tasks.filter((t) => t.should_trigger).length).toBe(20);
    expect(tasks[0]).toEqual({ id: "trigger-1", query: (raw[0] as { query: string }).query, should_trigger: true });
    expect(
      importTriggerEvals("e.json", { skill_name: "s", evals: [{ id: 4, prompt: "p", should_trigger: false }] }),
    ).toEqual([{ id: "4", query: "p", should_trigger: false }]);
    const refusal = (data: unknown) => {
      try {
        importTriggerEvals("t.json", data);
      } catch (err) {
        return (err as Error).message;
      }
      return "";
    };
    // Graded and trigger evals in one file ask for body and trigger training in one run: not built, refused by name.
    const mixed = {
      skill_name: "s",
      evals: [
        { prompt: "p", expectations: ["e"] },
        { prompt: "q", should_trigger: true },
      ],
    };
    const both =
      't.json: holds graded evals (evals[0] has "expectations") and trigger evals (evals[1] has "should_trigger"); ' +
      "training the body and the trigger in one run is not built: split the file, train the body with --config tasks, " +
      "then the description with --config trigger and env.skill_init set to that run's best_skill/ (docs/packages.md)";
    expect(refusal(mixed)).toBe(both);
    expect(() => importSkillCreator("t.json", mixed)).toThrow(both);
    expect(refusal([{ query: "q", should_trigger: "yes" }])).toBe(
      't.json: [0]: "should_trigger" must be true or false',
    );
    expect(refusal([{ query: "q" }])).toStartWith('t.json: [0]: "should_trigger" must be true or false (missing');
    expect(refusal([{ should_trigger: true }])).toBe('t.json: [0]: missing "query" (a non-empty string)');
    expect(refusal({ nope: 1 })).toStartWith("t.json: expected skill-creator's trigger eval set");
  });

  test("e2e: the fixture's eval set trains the description on the simulator, and eval prints precision/recall/F1", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const env = { SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    // 40 queries split 2:1:2 leave 8 selection items: too few for the paired gate, so strict.
    const args = ["--config", "trigger", "--set", "model.backend=sim", "--set", `env.data_path=${EVAL_SET}`];
    const train = await runCli(
      [
        "train",
        ...args,
        "--set",
        `env.skill_init=${join(POSTMORTEM, "SKILL.md")}`,
        "--set",
        "evaluation.gate_rule=strict",
        "--set",
        "train.batch_size=8",
        "--set",
        "train.num_epochs=4",
        "--out",
        out,
        "--json",
      ],
      { env },
    );
    expect({ code: train.code, stderr: train.code ? train.stderr : "" }).toEqual({ code: 0, stderr: "" });
    const s = JSON.parse(train.stdout) as { accepted: number; baseline: { test: number }; best: { test: number } };
    expect(s.accepted).toBeGreaterThanOrEqual(1);
    expect(s.best.test).toBeGreaterThan(s.baseline.test);
    const best = readFileSync(join(out, "best_skill.md"), "utf8");
    expect(body(best)).toBe(body(SKILL));
    expect(skillCard(best).description).not.toBe(skillCard(SKILL).description);
    const ev = await runCli(
      ["eval", ...args, "--skill", join(out, "best_skill.md"), "--split", "test", "--out", join(dir.path, "ev")],
      { env },
    );
    expect(ev.code).toBe(0);
    expect(ev.stdout).toMatch(/\nn=16 tp=\d+ fp=\d+ fn=\d+ tn=\d+ precision=\S+ recall=\S+ f1=\S+ accuracy=\S+\n/);
  }, 60_000);
});

describe("trigger training on the simulator's generated world", () => {
  test("raises held-out F1 from below 0.6; body edits are refused and the body never changes", async () => {
    using dir = tempDir();
    const out = join(dir.path, "run");
    const env = { SKILLOPT_CACHE_DIR: join(dir.path, "cache") };
    const sets = ["--config", "trigger", "--set", "model.backend=sim", "--set", "env.split_seed=3"];
    const train = await runCli(["train", ...sets, "--set", "train.seed=3", "--out", out, "--json"], { env });
    expect({ code: train.code, stderr: train.code ? train.stderr : "" }).toEqual({ code: 0, stderr: "" });
    const f1 = async (skill: string, name: string) => {
      const ev = await runCli(
        ["eval", ...sets, "--skill", skill, "--split", "test", "--out", join(dir.path, name), "--json"],
        { env },
      );
      expect(ev.code).toBe(0);
      return (JSON.parse(ev.stdout) as { metrics: { f1: number } }).metrics.f1;
    };
    const initial = join(dir.path, "initial.md");
    await Bun.write(initial, INITIAL_SKILL);
    const before = await f1(initial, "ev0");
    const after = await f1(join(out, "best_skill.md"), "ev1");
    expect(before).toBeLessThan(0.6);
    expect(after).toBeGreaterThan(before + 0.25);
    const best = readFileSync(join(out, "best_skill.md"), "utf8");
    expect(body(best)).toBe(body(INITIAL_SKILL));
    // One line of steps.jsonl per step, with its edit_apply_report.
    const statuses = readFileSync(join(out, "steps.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .flatMap((l) =>
        ((JSON.parse(l) as { edit_apply_report?: { status: string }[] }).edit_apply_report ?? []).map((r) => r.status),
      );
    expect(statuses).toContain("skipped_out_of_scope");
  }, 60_000);
});
