import { afterAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  editsFromArtifacts,
  loadRunView,
  normalizeAction,
  normalizeStep,
  renderDiff,
  renderReportHtml,
  writeRunReport,
} from "../../src/report/html/index.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { commitSyntheticStep, writeSyntheticRun } from "../run/support.ts";

describe("report.html", () => {
  test("has one decision marker per step, each with the step's recorded action", () => {
    using dir = tempDir();
    const records = writeSyntheticRun(dir.path, { steps: 7 });
    const html = renderReportHtml(loadRunView(dir.path));
    const markers = [...html.matchAll(/data-series="decision" data-step="(\d+)" data-action="([a-z_]+)"/g)].map((m) => [
      Number(m[1]),
      String(m[2]),
    ]);
    expect(markers).toEqual(records.map((r) => [Number(r.step), String(r.action)]));
  });

  test("is self-contained: no script, no external URL, a CSP that forbids the network", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path);
    const html = renderReportHtml(loadRunView(dir.path));
    expect(html).not.toContain("<script");
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(html).toContain("default-src 'none'");
  });

  test("escapes skill text and edit text", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    const html = renderReportHtml(loadRunView(dir.path));
    expect(html).toContain("Use format &lt;1&gt; &amp; keep &quot;quotes&quot;.");
    expect(html).not.toContain("<1>");
  });

  test("shows lr budget bars, epoch boundaries and the test-score lines", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 6 });
    const html = renderReportHtml(loadRunView(dir.path));
    expect([...html.matchAll(/class="lr-bar" data-step="\d+" data-lr="(\d+)"/g)].map((m) => Number(m[1]))).toEqual([
      4, 3, 2, 1, 1, 1,
    ]);
    expect(html).toContain("epoch 2");
    expect(html).toContain('data-hline="baseline-test"');
    expect(html).toContain('data-hline="best-test"');
  });

  test("writeRunReport writes <out>/report.html and a torn history line is skipped", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 3 });
    writeFileSync(
      join(dir.path, "history.jsonl"),
      `${readFileSync(join(dir.path, "history.jsonl"), "utf8")}{"step": 4, "epo`,
    );
    const path = writeRunReport(dir.path);
    expect(path).toBe(join(dir.path, "report.html"));
    const view = loadRunView(dir.path);
    expect(view.steps.map((s) => s.step)).toEqual([1, 2, 3]);
    expect(view.warnings).toEqual([]);
  });

  test("a secret in the run's config file never reaches the report", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 1 });
    const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789";
    writeFileSync(
      join(dir.path, "config.resolved.yaml"),
      `model:\n  backend: openai_compatible\n  openai_compatible_api_key: ${key}\nenv:\n  name: conventions\n`,
    );
    const html = renderReportHtml(loadRunView(dir.path));
    expect(html).not.toContain(key);
    expect(html).toContain("openai_compatible_api_key: [REDACTED");
  });

  test("a corrupt summary.json becomes a warning on the page, not a crash", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    writeFileSync(join(dir.path, "summary.json"), "{ not json");
    const view = loadRunView(dir.path);
    expect(view.summary).toBeNull();
    expect(view.warnings[0]).toStartWith("summary.json is not valid JSON");
    expect(renderReportHtml(view)).toContain("summary.json is not valid JSON");
  });
});

describe("run store", () => {
  test("step records, edit fates, candidate texts and status come from state.sqlite", () => {
    using dir = tempDir();
    commitSyntheticStep(
      dir.path,
      { step: 1, epoch: 1, action: "accept_new_best", outcome: "accepted", current_score: 0.5 },
      "# skill\nrule 1\n",
    );
    commitSyntheticStep(
      dir.path,
      { step: 2, epoch: 1, action: "reject", outcome: "rejected", current_score: 0.5 },
      "# skill\nrule 2\n",
    );
    const view = loadRunView(dir.path);
    expect(view.steps.map((s) => [s.step, s.action, s.candidate])).toEqual([
      [1, "accepted", "# skill\nrule 1\n"],
      [2, "rejected", "# skill\nrule 2\n"],
    ]);
    expect(view.steps[1]!.edits.map((e) => [e.text, e.status, e.rationale])).toEqual([
      ["rule 2", "rejected", "failures on dates"],
      ["clipped rule", "clipped", ""],
    ]);
    expect(view.baselineSelection).toBeNull();
    expect({
      status: view.status,
      planned: view.plannedSteps,
      started: view.startedAt,
      sim: view.simulator,
      benchmark: view.benchmark,
    }).toEqual({
      status: "running",
      planned: 6,
      started: "2023-11-14T22:13:20.000Z",
      sim: true,
      benchmark: "conventions",
    });
  });

  test("a half-written state file is an error on the view and the files still render", () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    writeFileSync(join(dir.path, "state.sqlite"), "SQLite format 3\u0000 cut off");
    const view = loadRunView(dir.path);
    expect(view.storeError).toContain("state.sqlite");
    expect(view.steps).toHaveLength(2);
  });
});

describe("the quickstart fixture (a real run)", () => {
  const tmp = tempDir("skillopt-fixture-");
  const dir = join(tmp.path, "quickstart");
  cpSync(join(REPO_ROOT, "fixtures", "runs", "quickstart"), dir, { recursive: true });
  afterAll(() => tmp[Symbol.dispose]());

  test("every step of history.jsonl is on the chart with its outcome, from the store", () => {
    const lines = readFileSync(join(dir, "history.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const view = loadRunView(dir);
    expect(view.storeError).toBeNull();
    expect(view.steps.map((s) => [s.step, s.action])).toEqual(
      lines.map((r) => [Number(r.step), normalizeAction(String(r.outcome))]),
    );
    const html = renderReportHtml(view);
    expect([...html.matchAll(/data-series="decision" data-step="(\d+)"/g)]).toHaveLength(lines.length);
  });

  test("a step's edits carry their fate and the optimizer's reasoning, and its candidate diff renders", () => {
    const view = loadRunView(dir);
    const s1 = view.steps[0]!;
    expect(s1.reasoning.length).toBeGreaterThan(0);
    expect(s1.edits.length).toBeGreaterThan(0);
    expect(s1.edits.every((e) => ["applied", "failed", "clipped", "rejected"].includes(e.status))).toBe(true);
    expect(s1.edits[0]!.rationale).toMatch(/support \d+/);
    expect(s1.candidate).not.toBeNull();
    expect(s1.skillBefore).toBe(view.initialSkill);
    const early = view.steps.find((s) => s.action === "rejected_early")!;
    expect(early.earlyAt).toMatch(/^\d+\/\d+$/);
    expect(early.edits.some((e) => e.status === "rejected")).toBe(true);
  });
});

describe("epoch boundaries", () => {
  test("slow updates of the quickstart fixture are on the chart and in their own table", () => {
    using tmp = tempDir();
    cpSync(join(REPO_ROOT, "fixtures", "runs", "quickstart"), tmp.path, { recursive: true });
    const view = loadRunView(tmp.path);
    expect(view.baselineSelection).toBe(0.25);
    expect(view.boundaries.map((b) => [b.epoch, b.slowAction, b.slowScore === null])).toEqual([
      [1, "inject_placeholder", true],
      [2, "force_accept", false],
      [3, "force_accept", false],
    ]);
    const html = renderReportHtml(view);
    expect([...html.matchAll(/data-series="boundary" data-epoch="(\d)"/g)].map((m) => m[1])).toEqual(["2", "3"]);
    expect(html).toContain('<table id="boundary-table">');
  });
});

describe("upstream run folders", () => {
  test("history.json (one array) and upstream's flat summary keys render", () => {
    using dir = tempDir();
    const steps = [
      {
        step: 1,
        epoch: 1,
        rollout_hard: 0.3,
        edit_budget: 4,
        candidate_gate_score: 0.5,
        action: "accept_new_best",
        current_score: 0.5,
        best_score: 0.5,
        tokens: { analyst: { calls: 2, prompt_tokens: 100, completion_tokens: 10 } },
        wall_time_s: 3.2,
      },
      {
        step: 2,
        epoch: 1,
        rollout_hard: 0.4,
        edit_budget: 3,
        candidate_gate_score: 0.4,
        action: "reject",
        current_score: 0.5,
        best_score: 0.5,
        tokens: {},
        wall_time_s: 2.1,
      },
    ];
    writeFileSync(join(dir.path, "history.json"), JSON.stringify(steps));
    writeFileSync(
      join(dir.path, "config.json"),
      JSON.stringify({
        env: "searchqa",
        optimizer_model: "gpt-5.5",
        target_model: "gpt-5.4-mini",
        backend: "azure_openai",
        num_epochs: 4,
      }),
    );
    writeFileSync(
      join(dir.path, "summary.json"),
      JSON.stringify({
        baseline_selection_hard: 0.2,
        best_selection_hard: 0.5,
        best_step: 1,
        test_hard: 0.45,
        baseline_test_hard: 0.2,
        total_steps: 2,
        total_accepts: 1,
        total_rejects: 1,
      }),
    );
    const view = loadRunView(dir.path);
    expect(view.steps.map((s) => [s.step, s.action, s.lr, s.rolloutScore, s.tokens])).toEqual([
      [1, "accepted", 4, 0.3, 110],
      [2, "rejected", 3, 0.4, 0],
    ]);
    expect([view.benchmark, view.optimizerModel, view.targetModel, view.backend, view.epochs]).toEqual([
      "searchqa",
      "gpt-5.5",
      "gpt-5.4-mini",
      "azure_openai",
      4,
    ]);
    expect(view.summary).toMatchObject({
      baseline: { selection: 0.2, test: 0.2 },
      best: { selection: 0.5, test: 0.45, step: 1 },
      steps: 2,
      accepted: 1,
      rejected: 1,
    });
  });
});

describe("eval report", () => {
  test("an eval directory renders its summary and per-group scores", () => {
    using dir = tempDir();
    writeFileSync(
      join(dir.path, "eval_summary.json"),
      JSON.stringify({
        split: "test",
        score: 0.8125,
        n: 16,
        by_type: { dates: { total: 10, hard_acc: 0.9 }, units: { total: 6, hard_acc: 0.6667 } },
      }),
    );
    const view = loadRunView(dir.path);
    expect(view.evaluation).toEqual({
      fields: [
        ["split", "test"],
        ["score", "0.8125"],
        ["n", "16"],
      ],
      groups: [
        { name: "dates", total: 10, score: 0.9 },
        { name: "units", total: 6, score: 0.6667 },
      ],
    });
    const html = renderReportHtml(view);
    expect(html).toContain('<table id="eval-groups">');
    expect(html).toContain('<td>units</td><td class="n">6</td><td class="n">0.667</td>');
  });
});

describe("history records", () => {
  test("upstream and engine action words map onto four outcomes", () => {
    expect(
      [
        "accept_new_best",
        "accept",
        "force_accept",
        "reject",
        "reject_format",
        "reject_early",
        "skip_no_patches",
        "skip_no_change",
      ].map(normalizeAction),
    ).toEqual(["accepted", "accepted", "accepted", "rejected", "rejected", "rejected_early", "skipped", "skipped"]);
  });

  test("an engine step record reads calls, tokens by stage, early rejection point and failed edits", () => {
    const s = normalizeStep(
      {
        step: 3,
        epoch: 1,
        learning_rate: 2,
        rollout_hard: 0.4,
        candidate_gate_score: null,
        current_score: 0.5,
        action: "reject_early",
        outcome: "rejected_early",
        selection_evaluated: 5,
        selection_total: 20,
        edit_apply_summary: { total: 3, applied: 2, skipped: 1, errors: 0 },
        edits_failed: [{ op: "replace", target: "x", status: "skipped_anchor_not_found" }],
        calls: {
          total: 30,
          cached: 2,
          by_stage: {
            rollout: { calls: 25, cached: 0, prompt_tokens: 100, completion_tokens: 20 },
            analyst: { calls: 5, cached: 2, prompt_tokens: 50, completion_tokens: 10 },
          },
        },
        tokens: { prompt: 150, completion: 30 },
        cost_usd: 0.002,
        wall_time_s: 1.5,
      },
      0,
    )!;
    expect({
      action: s.action,
      earlyAt: s.earlyAt,
      lr: s.lr,
      calls: s.calls,
      tokens: s.tokens,
      tokensByStage: s.tokensByStage,
      applied: s.editsApplied,
      failed: s.editsFailed,
      seconds: s.seconds,
    }).toEqual({
      action: "rejected_early",
      earlyAt: "5/20",
      lr: 2,
      calls: 30,
      tokens: 180,
      tokensByStage: { rollout: 120, analyst: 60 },
      applied: 2,
      failed: 1,
      seconds: 1.5,
    });
  });

  test("edits from step artifacts: applied, failed with its reason, clipped by the lr, rejected with the candidate", () => {
    const merged = {
      edits: [
        { op: "append", content: "A" },
        { op: "replace", target: "old", content: "B" },
        { op: "append", content: "C" },
      ],
    };
    const ranked = {
      edits: [
        { op: "append", content: "A" },
        { op: "replace", target: "old", content: "B" },
      ],
    };
    const report = [
      { index: 1, op: "append", target: "", content_preview: "A", status: "applied_append" },
      {
        index: 2,
        op: "replace",
        target: "old",
        content_preview: "B",
        status: "skipped_anchor_not_found",
        reason: "no line matches old",
      },
    ];
    const fate = (action: "accepted" | "rejected") =>
      editsFromArtifacts({ merged, ranked, report }, action).map((e) => [e.text, e.status, e.error]);
    expect(fate("accepted")).toEqual([
      ["A", "applied", ""],
      ["B", "failed", "no line matches old"],
      ["C", "clipped", "beyond this step's learning-rate budget"],
    ]);
    expect(fate("rejected")[0]).toEqual(["A", "rejected", ""]);
  });

  test("rewrite-mode items: a suggestion shows its title and instruction, a full rewrite its change summary", () => {
    const fate = (ranked: unknown) =>
      editsFromArtifacts({ ranked }, "accepted").map((e) => [e.op, e.section, e.text, e.rationale]);
    expect(
      fate({
        revise_suggestions: [
          { type: "add_rule", title: "Dates", instruction: "Use ISO dates", motivation: "3 failures" },
        ],
      }),
    ).toEqual([["add_rule", "Dates", "Use ISO dates", "3 failures"]]);
    expect(
      fate({
        skill_candidates: [{ title: "All rules", change_summary: ["dates", "money"], new_skill: "# whole skill" }],
      }),
    ).toEqual([["rewrite", "All rules", "dates\nmoney", ""]]);
  });

  test("the diff shows added and removed lines in both layouts", () => {
    const html = renderDiff("a\nb\nc\n", "a\nB\nc\nd\n");
    expect(html).toContain("+2</span>");
    expect(html).toContain("−1</span>");
    expect(html).toContain('class="diff diff-unified"');
    expect(html).toContain('class="diff diff-split"');
    expect(renderDiff("same\n", "same\n")).toContain("No change.");
  });
});

describe("skillopt report", () => {
  test("writes report.html into the run directory and prints its path", async () => {
    using dir = tempDir();
    writeSyntheticRun(dir.path, { steps: 2 });
    const r = await runCli(["report", dir.path]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(join(dir.path, "report.html"));
    expect(existsSync(join(dir.path, "report.html"))).toBe(true);
  });

  test("a directory that is not a run exits 2 with one line", async () => {
    using dir = tempDir();
    const r = await runCli(["report", dir.path]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("not a run directory");
    expect(r.stderr).not.toContain("    at ");
  });
});
