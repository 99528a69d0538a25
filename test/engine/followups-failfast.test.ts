import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { systemicFailure } from "../../src/engine/evaluate.ts";
import type { RolloutResult } from "../../src/engine/index.ts";
import { runCli } from "../support/cli.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { compatFlags, KEY_ENV } from "../benchmarks/e2e-support.ts";
import { FIXTURES } from "../benchmarks/support.ts";

// retry-after-ms: 0 makes the model layer's five rollout attempts back-to-back (no backoff wait).
const DOWN: FakeReply = { fault: "status", status: 500, message: "upstream model server unavailable", retryAfterMs: 0 };
const OPTIMIZER = JSON.stringify({ reasoning: "r", patch: { reasoning: "r", edits: [{ op: "append", content: "- Answer with the exact span." }] }, edits: [{ op: "append", content: "- Answer with the exact span." }], selected_indices: [0] });

function train(url: string, out: string) {
  return runCli(
    ["train", "--config", "searchqa", "--set", `env.split_dir=${join(FIXTURES, "searchqa")}`, ...compatFlags(url), "--set", "train.num_epochs=1", "--out", out, "--no-cache"],
    { env: KEY_ENV },
  );
}

const isTarget = (req: FakeRequest) => req.model === "target-model";

describe("SearchQA fail-fast: a training batch the target never answered stops the run", () => {
  test("every rollout answered 500: exit 1 with one error naming the target endpoint, before any optimizer call", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? DOWN : OPTIMIZER) });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await train(server.url, out);
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split("\n");
    const error = lines.find((l) => l.startsWith("error: "));
    expect(error).toMatch(/^error: the target endpoint is failing: rollout failed for all \d+ items before an agent response \(most common reason, (\d+) of \1: .*500.*\) — training batch 0 of step 1$/);
    expect(r.stderr).toContain("hint: check the target's endpoint");
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // Nothing spent on reflection, nothing recorded for step 1; the baseline stays committed (resumable).
    expect(server.requests.filter((q) => !isTarget(q))).toHaveLength(0);
    expect(existsSync(join(out, "history.jsonl")) ? readFileSync(join(out, "history.jsonl"), "utf8") : "").toBe("");
    expect(existsSync(join(out, "state.sqlite"))).toBe(true);
    const items = (JSON.parse(readFileSync(join(FIXTURES, "searchqa", "train", "items.json"), "utf8")) as unknown[]).length;
    const val = (JSON.parse(readFileSync(join(FIXTURES, "searchqa", "val", "items.json"), "utf8")) as unknown[]).length;
    expect(error).toContain(`for all ${items} items`);
    // baseline selection + the first training batch, five attempts each
    expect(server.requests.length).toBe((val + items) * 5);
  }, 60_000);

  test("a batch where some items were answered (even wrongly) trains on", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) => (!isTarget(req) ? OPTIMIZER : req.lastUserText.includes("Mona Lisa") ? DOWN : "<answer>no idea</answer>"),
    });
    using dir = tempDir();
    const r = await train(server.url, join(dir.path, "run"));
    expect(r.code, r.stderr).toBe(0);
    const history = readFileSync(join(dir.path, "run", "history.jsonl"), "utf8").trim().split("\n");
    expect(history).toHaveLength(1);
    expect(server.requests.some((q) => !isTarget(q))).toBe(true);
  }, 60_000);

  test("the rule: all results agent_ok === false; benchmarks that do not report agent_ok never trigger it", () => {
    const row = (id: string, extra: Partial<RolloutResult>): RolloutResult => ({ id, hard: 0, soft: 0, trajectory: [], ...extra });
    const down = [row("a", { agent_ok: false, fail_reason: "error: HTTP 500" }), row("b", { agent_ok: false, fail_reason: "error: HTTP 500" }), row("c", { agent_ok: false, fail_reason: "task-timeout-180s" })];
    expect(systemicFailure(down)).toBe("rollout failed for all 3 items before an agent response (most common reason, 2 of 3: error: HTTP 500)");
    expect(systemicFailure([...down, row("d", { agent_ok: true })])).toBeUndefined();
    expect(systemicFailure([row("e", {}), row("f", {})])).toBeUndefined();
    expect(systemicFailure([])).toBeUndefined();
  });
});
