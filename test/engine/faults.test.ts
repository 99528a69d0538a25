import { describe, expect, test } from "bun:test";
import { simAnswer } from "../../src/backends/sim/index.ts";
import { getBenchmark } from "../../src/benchmarks/index.ts";
import { type ChatMessage, formatViolation } from "../../src/engine/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { consoleLines } from "../report/support.ts";
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
    const { recorder, events } = await trainOnSim(optimizerOn(server.url));
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
    // Each fallback is a typed warning (the unusable answer, then the concatenation), worded by the console.
    const warnings = events.filter((e) => e.type === "warning");
    const unusable = warnings.find((w) => w.code === "optimizer_unusable");
    expect(unusable).toMatchObject({ type: "warning", code: "optimizer_unusable", stage: "merge" });
    if (unusable?.code !== "optimizer_unusable") throw new Error("no optimizer_unusable warning");
    expect(unusable.reason).toMatch(/^[a-z_]+: /);
    const fallback = warnings.find((w) => w.code === "merge_fallback");
    if (fallback?.code !== "merge_fallback") throw new Error("no merge_fallback warning");
    expect(fallback.level).toBe(1);
    expect(["failure", "success"]).toContain(fallback.side);
    expect(fallback.patches).toBeGreaterThanOrEqual(2);
    const lines = consoleLines(events, true);
    expect(lines).toContain(`  [warn] merge: unusable optimizer answer (${unusable.reason})`);
    expect(lines).toContain(`  [warn] merge level 1 (${fallback.side}): falling back to concatenation`);
  });

  test("a final merge answer that is not JSON puts failure items first, then success items, with one typed warning", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    server.match((req) => req.lastUserText.includes('"stage": "merge_final"'), "Both groups look fine to me.");
    const { recorder, events } = await trainOnSim(optimizerOn(server.url));
    const finals = events.filter((e) => e.type === "warning" && e.code === "final_merge_fallback");
    expect(finals.length).toBeGreaterThan(0);
    const merged = recorder.checkpoints
      .filter((c) => c.kind === "step")
      .map((c) => c.artifacts?.merged_patch as { reasoning?: string } | undefined);
    // One fallback patch per warning: the final merge's own, not a level merge's.
    expect(merged.filter((m) => m?.reasoning === "fallback: failure first, then success").length).toBe(finals.length);
    for (const w of finals) {
      if (w.type !== "warning" || w.code !== "final_merge_fallback") continue;
      expect(w.failure_items).toBeGreaterThan(0);
      expect(w.success_items).toBeGreaterThan(0);
    }
    expect(consoleLines(events, true)).toContain(
      "  [warn] final merge: falling back to failure items first, then success items",
    );
  });

  test("an optimizer call refused with HTTP 400 loses that call only: a typed optimizer_failed warning", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => asSim(req.messages) });
    server.match(
      (req) => req.lastUserText.includes('"stage": "analyst"'),
      { fault: "status", status: 400, message: "this prompt is not accepted" },
      { times: 1 },
    );
    // Without a response schema on the wire: a 400 to a schema is asked again without it
    // (test/backends/structured-outputs.test.ts); here the prompt itself is refused.
    const { events } = await trainOnSim(optimizerOn(server.url, ["model.structured_outputs=false"]));
    const failed = events.filter((e) => e.type === "warning" && e.code === "optimizer_failed");
    expect(failed).toHaveLength(1);
    const w = failed[0]!;
    if (w.type !== "warning" || w.code !== "optimizer_failed") throw new Error("unreachable");
    expect(w.stage).toBe("analyst");
    expect(w.kind).toBe("bad_request");
    expect(w.error).toContain("this prompt is not accepted");
    expect(consoleLines(events, true)).toContain(`  [warn] analyst: optimizer call failed (${w.error})`);
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

describe("a candidate that breaks the skill format (sim backend)", () => {
  test("is rejected with a typed violation in its decision event and record, worded by the console", async () => {
    const bench = (await getBenchmark("conventions"))!;
    // The initial skill's body size, from the check itself (any positive cap below it reports it).
    const initial = formatViolation(bench.initialSkill, bench.initialSkill, 1);
    if (initial?.kind !== "too_many_tokens") throw new Error("the initial skill has a body");
    const run = await trainOnSim(quickConfig(["train.num_epochs=1", `optimizer.max_skill_tokens=${initial.tokens}`]));
    const rejected = run.recorder.records().filter((r) => r.action === "reject_format");
    expect(rejected.length).toBeGreaterThan(0);
    const decisions = run.events.filter((e) => e.type === "decision" && e.rule === "format");
    expect(decisions).toHaveLength(rejected.length);
    const lines = consoleLines(run.events);
    for (const [i, r] of rejected.entries()) {
      const v = r.format_violation;
      if (typeof v !== "object" || v.kind !== "too_many_tokens") throw new Error(`untyped violation: ${String(v)}`);
      expect(v.max).toBe(initial.tokens);
      expect(v.tokens).toBeGreaterThan(initial.tokens);
      expect(decisions[i]).toMatchObject({ step: r.step, action: "reject_format", violation: v });
      expect(lines).toContain(
        `    [6/6 EVALUATE] REJECT (format) the skill body is about ${v.tokens} tokens, over optimizer.max_skill_tokens=${initial.tokens}`,
      );
    }
  });
});
