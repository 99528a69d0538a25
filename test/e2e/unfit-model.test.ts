import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { SMALL_QUICKSTART } from "../support/real-llm.ts";
import { tempDir } from "../support/tmp.ts";

const isTarget = (req: FakeRequest) => req.model === "target-model";

function runMeta(out: string, key: string): string | undefined {
  const db = new Database(join(out, "state.sqlite"), { readonly: true });
  try {
    return (db.query("SELECT value FROM run_meta WHERE key = ?").get(key) as { value: string } | null)?.value;
  } finally {
    db.close();
  }
}

function history(out: string): { step: number; action: string }[] {
  const path = join(out, "history.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe("a run whose optimizer cannot do the job stops and says so (CLI spawned, fake server)", () => {
  test("prose for every analyst answer: exit 1 after 2 steps with one line naming role, model, endpoint, cause and a sample; failed, not finished; --resume with the sim optimizer finishes", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        isTarget(req) ? "TODO fix it later" : "I think the skill is fine as it is, sk-proj-abcdefghijklmnop1234.",
    });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", out], { env: KEY_ENV });
    expect(r.code, r.stderr).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    const host = new URL(server.url).host;
    expect(errors).toEqual([
      `error: optimizer (openai_compatible, model opt-model, endpoint ${host}) gave no usable analyst answer in 2 consecutive steps (1 of 1 calls in the last; invalid_json: no JSON object was found in the reply); it answered: "I think the skill is fine as it is, [REDACTED_OPENAI_KEY]."`,
    ]);
    expect(r.stderr).toContain("hint: use a stronger optimizer model");
    expect(r.stderr).toMatch(/continue with: skillopt train --resume \S*run --set model.optimizer_backend=…/);
    expect(r.stderr).not.toContain("sk-proj-abcdefghijklmnop1234");
    expect(r.stdout).not.toContain("Training finished");
    expect(runMeta(out, "status")).toBe("failed");
    expect(runMeta(out, "reason")).toContain("gave no usable analyst answer in 2 consecutive steps");
    // The first step is committed (skipped); the second, which tripped the stop, is not.
    expect(history(out).map((h) => [h.step, h.action])).toEqual([[1, "skip_no_patches"]]);
    const html = readFileSync(join(out, "report.html"), "utf8");
    expect(html.includes('<span class="badge b-failed">failed</span>')).toBe(true);
    expect(html.includes('class="badge b-finished"')).toBe(false);

    const resumed = await runCli(["train", "--resume", out, "--set", "model.optimizer_backend=sim"], { env: KEY_ENV });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Training finished");
    expect(runMeta(out, "status")).toBe("finished");
    expect(history(out).map((h) => h.step)).toEqual([1, 2]);
  }, 120_000);

  test("an empty object for every analyst answer (what a schema-constrained small model can produce) stops the same way", async () => {
    await using server = await startFakeOpenAI({ reply: (req) => (isTarget(req) ? "TODO fix it later" : "{}") });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", out], { env: KEY_ENV });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      'gave no usable analyst answer in 2 consecutive steps (1 of 1 calls in the last; empty: neither a patch nor appendix notes); it answered: "{}"',
    );
    expect(runMeta(out, "status")).toBe("failed");
  }, 120_000);

  test("a prompt refused as longer than the context (vLLM's 400): exit 1 at the first analyst call, naming prompt size against the limit; nothing retried", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        isTarget(req)
          ? "TODO fix it later"
          : {
              fault: "status",
              status: 400,
              type: "BadRequestError",
              message:
                "This model's maximum context length is 256 tokens. However, you requested 3100 tokens (2700 in the messages, 400 in the completion). Please reduce the length of the messages or completion.",
              fields: { code: "context_length_exceeded" },
            },
    });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", out], { env: KEY_ENV });
    expect(r.code, r.stderr).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^error: optimizer \(openai_compatible, model opt-model, endpoint [^)]+\) cannot hold the analyst prompt \(2700 tokens against a context of 256\)$/,
    );
    expect(server.requests.filter((q) => !isTarget(q))).toHaveLength(1);
    expect(runMeta(out, "status")).toBe("failed");
    expect(history(out)).toEqual([]);
  }, 120_000);

  test("llama.cpp's refusal (exceed_context_size_error with n_prompt_tokens and n_ctx) reads the same", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        isTarget(req)
          ? "TODO fix it later"
          : {
              fault: "status",
              status: 400,
              type: "exceed_context_size_error",
              message: "the request exceeds the available context size, try increasing it",
              fields: { code: 400, n_prompt_tokens: 2890, n_ctx: 512 },
            },
    });
    using dir = tempDir();
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", join(dir.path, "run")], {
      env: KEY_ENV,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("cannot hold the analyst prompt (2890 tokens against a context of 512)");
  }, 120_000);
});

describe("a judge evaluator whose model cannot hold the prompt (CLI spawned, fake server)", () => {
  test("train on a tasks file with env.evaluator=judge: exit 1 at the baseline, naming the judge prompt against the context", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        isTarget(req)
          ? "<answer>144</answer>"
          : {
              fault: "status",
              status: 400,
              type: "exceed_context_size_error",
              message: "the request exceeds the available context size, try increasing it",
              fields: { n_prompt_tokens: 700, n_ctx: 512 },
            },
    });
    using dir = tempDir();
    const out = join(dir.path, "run");
    const r = await runCli(
      [
        "train",
        "--config",
        "tasks",
        "--set",
        `env.data_path=${join(REPO_ROOT, "fixtures", "benchmarks", "tasks", "my_tasks.jsonl")}`,
        "--set",
        "env.evaluator=judge",
        "--set",
        "env.judge_rubric=The answer must be correct.",
        ...compatFlags(server.url),
        "--out",
        out,
      ],
      { env: KEY_ENV },
    );
    expect(r.code, r.stderr).toBe(1);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^error: optimizer \(openai_compatible, model opt-model, endpoint [^)]+\) cannot hold the judge prompt \(700 tokens against a context of 512\)$/,
    );
    expect(runMeta(out, "status")).toBe("failed");
  }, 60_000);
});
