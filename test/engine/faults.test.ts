import { describe, expect, test } from "bun:test";
import { simAnswer } from "../../src/backends/sim/index.ts";
import type { ChatMessage } from "../../src/engine/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { quickConfig, trainOnSim } from "./support.ts";

const SIM = { seed: 42, lapseRate: 0.05, noiseRate: 0.3, latencyMs: 0 };
const asSim = (msgs: Array<{ role: string; content: unknown }>) =>
  simAnswer(
    msgs.map((m) => ({ role: m.role as ChatMessage["role"], content: String(m.content) })),
    0,
    SIM,
  );

function optimizerOn(url: string, extra: string[] = []) {
  return quickConfig([
    "model.backend=sim",
    "model.optimizer_backend=openai_compatible",
    `model.optimizer_openai_compatible_base_url=${url}`,
    "model.optimizer_openai_compatible_api_key=test-key",
    "train.num_epochs=1",
    ...extra,
  ]);
}

describe("the engine through a real HTTP optimizer (fake OpenAI server)", () => {
  test("a merge answer that is not JSON falls back to concatenation and the step still evaluates a candidate", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    server.match((req) => req.lastUserText.includes('"stage": "merge"'), "I merged them nicely, trust me.");
    const { recorder } = await trainOnSim(optimizerOn(server.url));
    const merged = recorder.checkpoints
      .filter((c) => c.kind === "step")
      .map((c) => c.artifacts?.merged_patch as { reasoning?: string } | undefined);
    expect(merged.some((m) => m?.reasoning === "fallback concatenation")).toBe(true);
    expect(
      recorder.records().some((r) => typeof r.candidate_hash === "string" && !String(r.action).startsWith("skip")),
    ).toBe(true);
    // The model layer re-asked once with the validation error before giving up on each merge.
    const mergeAsks = server.requests.filter(
      (r) =>
        r.lastUserText.includes('"stage": "merge"') ||
        r.messages.some((m) => String(m.content).includes('"stage": "merge"')),
    );
    expect(mergeAsks.length).toBeGreaterThanOrEqual(2);
  });

  test("a transient 500 on an analyst call is retried and the run is unchanged", async () => {
    await using clean = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    const ref = await trainOnSim(optimizerOn(clean.url));
    await using flaky = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    flaky.match(
      (req) => req.lastUserText.includes('"stage": "analyst"'),
      { fault: "status", status: 500 },
      { times: 1 },
    );
    const run = await trainOnSim(optimizerOn(flaky.url));
    expect(run.recorder.records().map((r) => r.action)).toEqual(ref.recorder.records().map((r) => r.action));
    expect(run.result.bestSkill).toBe(ref.result.bestSkill);
  });

  test("an optimizer that rejects the key stops the run with an auth error instead of skipping every step", async () => {
    await using server = await startFakeOpenAI({ reply: { fault: "status", status: 401, message: "bad key" } });
    await expect(trainOnSim(optimizerOn(server.url))).rejects.toMatchObject({ code: "backend", kind: "auth" });
  });
});
