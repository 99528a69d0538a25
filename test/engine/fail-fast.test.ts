import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MOSTLY_ERRORED, noAnswerReason, requireAnswers } from "../../src/engine/evaluate.ts";
import type { RolloutResult } from "../../src/engine/index.ts";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";

// retry-after-ms: 0 makes the model layer's five rollout attempts back-to-back (no backoff wait).
const DOWN: FakeReply = { fault: "status", status: 500, message: "upstream model server unavailable", retryAfterMs: 0 };
const OPTIMIZER = JSON.stringify({
  reasoning: "r",
  patch: { reasoning: "r", edits: [{ op: "append", content: "- Answer with the exact span." }] },
  edits: [{ op: "append", content: "- Answer with the exact span." }],
  selected_indices: [0],
});

function train(url: string, out: string) {
  return runCli(
    [
      "train",
      "--config",
      "searchqa",
      "--set",
      `env.split_dir=${join(FIXTURES, "searchqa")}`,
      ...compatFlags(url),
      "--set",
      "train.num_epochs=1",
      "--out",
      out,
      "--no-cache",
    ],
    { env: KEY_ENV },
  );
}

const isTarget = (req: FakeRequest) => req.model === "target-model";

describe("SearchQA fail-fast: a training batch the target never answered stops the run", () => {
  test("every rollout answered 500: the baseline is the canary — exit 1 with one line naming role, backend, model and host, before any optimizer call", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? DOWN : OPTIMIZER) });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await train(server.url, out);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    const errors = lines.filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    const host = new URL(server.url).host;
    const val = (JSON.parse(readFileSync(join(FIXTURES, "searchqa", "val", "items.json"), "utf8")) as unknown[]).length;
    expect(errors[0]).toMatch(
      new RegExp(
        `^error: target \\(openai_compatible, model target-model, endpoint ${host.replace(".", "\\.")}\\) gave no answer for ${val} of ${val} items of the baseline selection pass \\(stopped before any optimizer call\\); last error: .*500.*$`,
      ),
    );
    expect(errors[0]).not.toContain("/v1");
    expect(r.stderr).toMatch(/continue with: skillopt train --resume \S*\/run\n/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // Nothing spent on the optimizer, nothing committed; the run is failed (never finished) and resumable.
    expect(server.requests.filter((q) => !isTarget(q))).toHaveLength(0);
    expect(existsSync(join(out, "history.jsonl")) ? readFileSync(join(out, "history.jsonl"), "utf8") : "").toBe("");
    expect(existsSync(join(out, "summary.json"))).toBe(false);
    // baseline selection only, five attempts each, no re-ask when nothing answered
    expect(server.requests.length).toBe(val * 5);
  }, 60_000);

  test("a batch where a few items got no answer trains on: they are re-asked once, then recorded as errored, never scored", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        !isTarget(req) ? OPTIMIZER : req.lastUserText.includes("Mona Lisa") ? DOWN : "<answer>no idea</answer>",
    });
    using dir = tempDir();
    const r = await train(server.url, join(dir.path, "run"));
    expect(r.code, r.stderr).toBe(0);
    const history = readFileSync(join(dir.path, "run", "history.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(history).toHaveLength(1);
    expect(server.requests.some((q) => !isTarget(q))).toBe(true);
    const rec = JSON.parse(history[0]!) as Record<string, unknown>;
    const monaLisa = server.requests.filter((q) => isTarget(q) && q.lastUserText.includes("Mona Lisa"));
    const k = monaLisa.length / 10; // five attempts, then one re-ask of five attempts
    expect(k).toBeGreaterThanOrEqual(1);
    expect(rec.errored).toEqual({ rollout: k });
    expect(rec.rollout_errored).toBe(k);
    expect((rec.errored_items as { reason: string }[])[0]!.reason).toContain("500");
    const summary = JSON.parse(readFileSync(join(dir.path, "run", "summary.json"), "utf8")) as Record<string, unknown>;
    expect(summary.status).toBe("finished");
    expect(summary.errored).toEqual({ rollout: k });
  }, 60_000);

  test("the rule: agent_ok === false is no answer; a stage stops when more than half errored, a gate pass on any", () => {
    const row = (id: string, extra: Partial<RolloutResult>): RolloutResult => ({
      id,
      hard: 0,
      soft: 0,
      trajectory: [],
      ...extra,
    });
    expect(noAnswerReason(row("a", { agent_ok: false, fail_reason: "llm-call-failed: HTTP 500" }))).toBe(
      "llm-call-failed: HTTP 500",
    );
    expect(noAnswerReason(row("b", { agent_ok: true, fail_reason: "wrong answer" }))).toBeUndefined();
    expect(noAnswerReason(row("c", {}))).toBeUndefined();
    const err = (id: string) => ({ id, reason: `HTTP 500 (${id})`, role: "target" as const });
    const answered = [row("x", {}), row("y", {})];
    expect(MOSTLY_ERRORED).toBe(0.5);
    // 2 of 4 errored: half is not "mostly" — recorded, the stage goes on; a gate pass stops.
    expect(() =>
      requireAnswers({ results: answered, errored: [err("p"), err("q")] }, "training batch 0 of step 1"),
    ).not.toThrow();
    expect(() =>
      requireAnswers({ results: answered, errored: [err("p"), err("q")] }, "selection pass of step 1", {
        strict: true,
      }),
    ).toThrow(
      "no answer for 2 of 4 items of the selection pass of step 1 (a gate decision never counts a missing answer as a zero); last error: HTTP 500 (q)",
    );
    expect(() =>
      requireAnswers({ results: answered, errored: [err("p"), err("q"), err("r")] }, "training batch 0 of step 1"),
    ).toThrow("no answer for 3 of 5 items of the training batch 0 of step 1; last error: HTTP 500 (r)");
    expect(() => requireAnswers({ results: answered, errored: [] }, "any", { strict: true })).not.toThrow();
  });
});
