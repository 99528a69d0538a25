import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { readRunWarnings } from "../../src/run/index.ts";
import { refusedUrl } from "../support/net.ts";
import { tempDir } from "../support/tmp.ts";

// A steady 500 with retry-after-ms: 0, so the model layer's five attempts per rollout are back to back.
const DOWN: FakeReply = { fault: "status", status: 500, message: "upstream model server unavailable", retryAfterMs: 0 };
const OPTIMIZER = JSON.stringify({
  reasoning: "r",
  patch: { reasoning: "r", edits: [{ op: "append", content: "- Answer with the exact span." }] },
  edits: [{ op: "append", content: "- Answer with the exact span." }],
  selected_indices: [0],
  slow_update_content: "Keep answers exact.",
  meta_skill_content: "Prefer exact spans.",
});
const isTarget = (req: FakeRequest) => req.model === "target-model";
/** A target that answers wrongly once and rightly after (so candidates differ), deterministic by content. */
const answer = (req: FakeRequest) =>
  req.systemText.includes("exact span") ? "<answer>Leonardo da Vinci</answer>" : "<answer>no idea</answer>";

const SEARCHQA = ["--config", "searchqa", "--set", `env.split_dir=${join(FIXTURES, "searchqa")}`, "--no-cache"];

function lines(path: string): Record<string, unknown>[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** History records without accounting (timings, calls, tokens, cost depend on the machine and the cache). */
function decisions(out: string): unknown[] {
  return lines(join(out, "history.jsonl")).map(
    ({ timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved, ...rest }) => {
      void [timing, wall_time_s, calls, tokens, cost_usd, selection_calls_saved];
      return rest;
    },
  );
}

function runMeta(out: string, key: string): string | undefined {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    return (db.query("SELECT value FROM run_meta WHERE key = ?").get(key) as { value: string } | null)?.value;
  } finally {
    db.close();
  }
}

/** Steps committed in the run's store (read-only; 0 before the store exists). */
function committedSteps(out: string): number {
  if (!existsSync(join(out, "state.sqlite"))) return 0;
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    return (db.query("SELECT count(*) AS n FROM steps").get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

describe("a call that got no answer is never a score (CLI spawned)", () => {
  test("eval where one item's first call is refused (HTTP 400): a typed reask warning in --json and warnings.jsonl, a [warn] line on the console", async () => {
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, "# Skill\n\nAnswer with the exact span.\n");
    for (const json of [true, false]) {
      await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? answer(req) : OPTIMIZER) });
      server.match(isTarget, { fault: "status", status: 400, message: "this prompt is refused" }, { times: 1 });
      const out = join(dir.path, json ? "eval-json" : "eval-text");
      const r = await runCli(
        [
          "eval",
          ...SEARCHQA,
          ...compatFlags(server.url),
          "--skill",
          skill,
          "--split",
          "val",
          "--out",
          out,
          ...(json ? ["--json"] : []),
        ],
        { env: KEY_ENV },
      );
      expect(r.code, r.stderr).toBe(0);
      const { warnings, issues } = readRunWarnings(out);
      expect(issues).toEqual([]);
      expect(warnings).toHaveLength(1);
      const w = warnings[0]!;
      expect(w).toMatchObject({ schema: "skillopt.warning/1", code: "reask", label: "eval val", errored: 1, total: 2 });
      if (w.code !== "reask") throw new Error("unreachable");
      expect(w.reason).toContain("this prompt is refused");
      if (json) expect(JSON.parse(r.stdout).warnings).toEqual(warnings);
      else
        expect(r.stderr.split("\n")).toContain(
          `  [warn] eval val: 1 of 2 item(s) got no answer (${w.reason.slice(0, 160)}); asking them once more`,
        );
    }
  });

  test("target endpoint refusing connections: train stops before any optimizer call, exit 1, one line; runs, report: failed with the reason", async () => {
    await using optimizer = await startFakeOpenAI({ reply: OPTIMIZER });
    const target = await refusedUrl();
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(
      [
        "train",
        ...SEARCHQA,
        ...compatFlags(optimizer.url),
        "--set",
        `model.target_openai_compatible_base_url=${target}`,
        "--out",
        out,
      ],
      { env: KEY_ENV },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("gave no answer");
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    const host = new URL(target).host;
    expect(errors[0]).toContain(
      `error: target (openai_compatible, model target-model, endpoint ${host}) gave no answer for 2 of 2 items of the baseline selection pass (stopped before any optimizer call); last error: `,
    );
    expect(errors[0]).not.toContain("/v1");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(optimizer.requests).toHaveLength(0);
    expect(runMeta(out, "status")).toBe("failed");
    expect(runMeta(out, "reason")).toContain("gave no answer for 2 of 2 items");

    const runs = await runCli(["runs", dir.path, "--json"]);
    expect(JSON.parse(runs.stdout)).toEqual([
      expect.objectContaining({ status: "failed", reason: expect.stringContaining(`endpoint ${host}`) }),
    ]);
    const table = await runCli(["runs", dir.path]);
    expect(table.stdout).toMatch(
      /\n {4}failed: target \(openai_compatible, model target-model, endpoint [^)]+\) gave no answer for 2 of 2 items/,
    );

    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html.includes('<span class="badge b-failed">failed</span>')).toBe(true);
    expect(html.includes("gave no answer for 2 of 2 items")).toBe(true);
    expect(html.includes('class="badge b-finished"')).toBe(false);
  }, 90_000);

  test("eval against a steady 500: exit 1 naming the endpoint, no score; --fail-under says the items got no answer", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? DOWN : OPTIMIZER) });
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, "# Skill\n\nAnswer with the exact span.\n");
    const out = join(dir.path, "eval");
    const r = await runCli(
      [
        "eval",
        ...SEARCHQA,
        ...compatFlags(server.url),
        "--skill",
        skill,
        "--split",
        "val",
        "--out",
        out,
        "--fail-under",
        "0.5",
      ],
      { env: KEY_ENV },
    );
    expect(r.code).toBe(1);
    const host = new URL(server.url).host;
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(
          `^error: target \\(openai_compatible, model target-model, endpoint ${host.replace(/\./g, "\\.")}\\) gave no answer for 2 of 2 items of the evaluation of split val; last error: .*HTTP 500`,
        ),
      ),
    ]);
    expect(r.stderr).toContain("[fail-under] not checked: 2 of 2 items got no answer");
    expect(r.stdout).not.toMatch(/hard=/);
    const summary = JSON.parse(readFileSync(join(out, "eval_summary.json"), "utf8"));
    expect(summary).toMatchObject({ status: "failed", hard: null, soft: null, errored: 2, answered: 0, passed: false });
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html.includes('<span class="badge b-failed">failed</span>')).toBe(true);
    expect(html.includes("gave no answer for 2 of 2 items")).toBe(true);
    expect(html.includes('class="badge b-finished"')).toBe(false);
    const runs = await runCli(["runs", dir.path, "--json"]);
    expect(JSON.parse(runs.stdout)).toEqual([
      expect.objectContaining({ kind: "eval", status: "failed", reason: expect.stringContaining(`endpoint ${host}`) }),
    ]);

    // The same eval with the target answering (wrongly): a score, and --fail-under blames the score.
    await using up = await startFakeOpenAI({
      reply: (req) => (isTarget(req) ? "<answer>no idea</answer>" : OPTIMIZER),
    });
    const ok = await runCli(
      [
        "eval",
        ...SEARCHQA,
        ...compatFlags(up.url),
        "--skill",
        skill,
        "--split",
        "val",
        "--out",
        join(dir.path, "eval2"),
        "--fail-under",
        "0.5",
      ],
      { env: KEY_ENV },
    );
    expect(ok.code).toBe(1);
    expect(ok.stdout).toContain("Results: hard=0.0000");
    expect(ok.stderr).toContain("[fail-under] hard=0.0000 is below 0.5: all 2 items were answered");
  }, 90_000);

  test("a target that hangs: each rollout times out (env.exec_timeout), and eval exits 1 naming the endpoint instead of scoring 0", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? { fault: "hang" } : OPTIMIZER) });
    using dir = tempDir();
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, "# Skill\n\nAnswer with the exact span.\n");
    const r = await runCli(
      [
        "eval",
        ...SEARCHQA,
        ...compatFlags(server.url),
        "--set",
        "env.exec_timeout=1",
        "--skill",
        skill,
        "--split",
        "val",
        "--out",
        join(dir.path, "eval"),
      ],
      { env: KEY_ENV },
    );
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("error: "))).toEqual([
      expect.stringMatching(
        /gave no answer for 2 of 2 items of the evaluation of split val; last error: .*task-timeout-1s/,
      ),
    ]);
  }, 90_000);

  test("the endpoint dies mid-run: the run stops at its last committed step as failed; --resume after it is back makes the same decisions", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? answer(req) : OPTIMIZER) });
    using dir = tempDir();
    const flags = [...SEARCHQA, ...compatFlags(server.url), "--set", "train.num_epochs=2"];

    const reference = join(dir.path, "reference");
    const ref = await runCli(["train", ...flags, "--out", reference], { env: KEY_ENV });
    expect(ref.code, ref.stderr).toBe(0);
    const refDecisions = decisions(reference);
    expect(refDecisions.length).toBe(2);

    // The target goes down once step 1 is committed (the store holds its row): step 2's rollouts get no answer.
    const out = join(dir.path, "run");
    const history = join(out, "history.jsonl");
    await using dying = await startFakeOpenAI({
      reply: (req) => {
        if (!isTarget(req)) return OPTIMIZER;
        if (committedSteps(out) >= 1) return DOWN;
        return answer(req);
      },
    });
    const dyingFlags = [...SEARCHQA, ...compatFlags(dying.url), "--set", "train.num_epochs=2"];
    const r = await runCli(["train", ...dyingFlags, "--out", out], { env: KEY_ENV });
    expect(r.code).toBe(1);
    expect(r.stderr.split("\n").filter((l) => l.startsWith("error: "))).toEqual([
      expect.stringContaining("gave no answer for 3 of 3 items of the training batch 0 of step 2"),
    ]);
    expect(runMeta(out, "status")).toBe("failed");
    expect(lines(history)).toHaveLength(1);
    expect(existsSync(join(out, "summary.json"))).toBe(false);
    const listed = await runCli(["runs", out, "--json"]);
    expect(JSON.parse(listed.stdout)[0]).toMatchObject({ status: "failed", steps: 1 });

    // Back up: resume against the healthy server finishes with the uninterrupted run's decisions.
    const resumed = await runCli(
      ["train", "--resume", out, "--set", `model.openai_compatible_base_url=${server.url}`],
      { env: KEY_ENV },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(decisions(out)).toEqual(refDecisions);
    expect(runMeta(out, "status")).toBe("finished");
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    const refSummary = JSON.parse(readFileSync(join(reference, "summary.json"), "utf8"));
    expect(summary.status).toBe("finished");
    for (const k of ["baseline", "best", "final", "accepted", "rejected", "skipped", "errored"])
      expect(summary[k]).toEqual(refSummary[k]);
    expect(readFileSync(join(out, "report.html"), "utf8").includes('<span class="badge b-failed">')).toBe(false);
  }, 180_000);
});
