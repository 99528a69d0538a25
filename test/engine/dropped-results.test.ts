import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { simAnswer } from "../../src/backends/sim/index.ts";
import type { ChatMessage } from "../../src/engine/index.ts";
import { runCli } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

const SIM = { seed: 42, lapseRate: 0.05, noiseRate: 0.3, latencyMs: 0 };
const asSim = (msgs: Array<{ role: string; content: unknown }>) =>
  simAnswer(
    msgs.map((m) => ({ role: m.role as ChatMessage["role"], content: String(m.content) })),
    0,
    SIM,
  );
const isRanking = (req: FakeRequest) => req.messages.some((m) => String(m.content).includes('"stage": "ranking"'));

interface Calls {
  total: number;
  dropped?: Record<string, number>;
  by_stage: Record<string, { calls: number; dropped?: number }>;
}

describe("dropped structured results in the run outputs", () => {
  test("a malformed ranking answer (and its re-ask) is counted in summary.json and in the step's history record", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    // The first ranking call and the model layer's one re-ask both get prose: that result is dropped.
    server.match(isRanking, "I ranked them carefully; the best edit is the first one.", { times: 2 });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--out",
      out,
      "--no-cache",
      "--quiet",
      "--set",
      "train.num_epochs=1",
      "--set",
      "model.backend=sim",
      "--set",
      "model.optimizer_backend=openai_compatible",
      "--set",
      `model.optimizer_openai_compatible_base_url=${server.url}`,
      "--set",
      "model.optimizer_openai_compatible_api_key=test-key",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { calls: Calls };
    expect(summary.calls.dropped?.ranking).toBeGreaterThanOrEqual(1);
    expect(summary.calls.by_stage.ranking!.dropped).toBe(summary.calls.dropped!.ranking!);
    // Stages without drops show 0 per stage and are left out of the dropped map.
    expect(summary.calls.by_stage.rollout!.dropped).toBe(0);
    expect(summary.calls.dropped?.rollout).toBeUndefined();

    const steps = readFileSync(join(out, "history.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { step: number; calls: Calls });
    const perStep = steps.map((s) => s.calls.dropped?.ranking ?? 0);
    expect(steps.every((s) => s.calls.dropped !== undefined)).toBe(true);
    expect(perStep.reduce((a, b) => a + b, 0)).toBe(summary.calls.dropped!.ranking!);
    const hit = steps.find((s) => (s.calls.dropped?.ranking ?? 0) > 0)!;
    expect(hit.calls.by_stage.ranking!.dropped).toBe(hit.calls.dropped!.ranking!);
    expect(hit.step).toBe(1);
  }, 60_000);
});
