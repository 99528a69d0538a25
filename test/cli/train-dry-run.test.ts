import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { endpointSets, REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

interface Plan {
  prices_per_mtok: Record<"optimizer" | "target", { input_per_mtok: number; output_per_mtok: number } | null>;
  estimated_cost_usd: { target: number | null; optimizer: number | null; total: number | null };
}

// A real endpoint setting (never called: --dry-run calls no model).
const ENDPOINT = endpointSets("http://127.0.0.1:9/v1");

async function dryRun(args: string[]): Promise<Plan> {
  const r = await runCli(["train", "--dry-run", "--json", ...args]);
  if (r.code !== 0) throw new Error(`dry run exited ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Plan;
}

describe("train --dry-run prices with model.pricing", () => {
  test("a --set override replaces a built-in price and changes the estimate", async () => {
    const models = ["--set", "model.optimizer=gpt-4o-mini", "--set", "model.target=gpt-4o-mini"];
    const builtin = await dryRun(["--config", "quickstart", ...ENDPOINT, ...models]);
    expect(builtin.prices_per_mtok.target).toMatchObject({ input_per_mtok: 0.15, output_per_mtok: 0.6 });
    const over = await dryRun([
      "--config",
      "quickstart",
      ...ENDPOINT,
      ...models,
      "--set",
      "model.pricing.gpt-4o-mini.input_per_mtok=1.5",
      "--set",
      "model.pricing.gpt-4o-mini.output_per_mtok=6",
    ]);
    expect(over.prices_per_mtok.target).toMatchObject({ input_per_mtok: 1.5, output_per_mtok: 6 });
    // Ten times the price per token: ten times the estimate (up to the 4-decimal rounding).
    expect(over.estimated_cost_usd.total!).toBeCloseTo(builtin.estimated_cost_usd.total! * 10, 2);
    expect(over.estimated_cost_usd.total!).toBeGreaterThan(builtin.estimated_cost_usd.total!);
  });

  test("a YAML pricing entry prices a model the built-in table does not know", async () => {
    using dir = tempDir();
    const models = ["--set", "model.optimizer=house-model-7b", "--set", "model.target=house-model-7b"];
    const unknown = await dryRun(["--config", "quickstart", ...ENDPOINT, ...models]);
    expect(unknown.estimated_cost_usd.total).toBeNull();
    const cfg = join(dir.path, "priced.yaml");
    writeFileSync(
      cfg,
      `_base_: ${join(REPO_ROOT, "configs", "quickstart", "default.yaml")}\nmodel:\n  pricing:\n    house-model-7b:\n      input_per_mtok: 0.5\n      output_per_mtok: 1\n`,
    );
    const priced = await dryRun(["--config", cfg, ...ENDPOINT, ...models]);
    expect(priced.prices_per_mtok.optimizer).toMatchObject({ input_per_mtok: 0.5, output_per_mtok: 1 });
    expect(priced.estimated_cost_usd.total).toBeGreaterThan(0);
  });

  test("the optimizer's prompt tokens grow with the epoch's step buffer, and the estimate follows them", async () => {
    using dir = tempDir();
    type Estimate = {
      predicted_calls: { optimizer: Record<string, number> };
      estimated_cost_usd: {
        assumes_tokens_per_call: { optimizer: { prompt: number } };
        assumes_step_buffer: { stages: string[]; extra_prompt_tokens_per_call: number };
      };
    };
    type Summary = { steps: number; calls: { by_stage: Record<string, { prompt_tokens: number }> } };
    // 4 and 64 steps per epoch with the default window of 16 entries in full, and 64 with every
    // entry in full (the reference's prompts).
    const cases = [
      { items: 32, window: "16" },
      { items: 512, window: "16" },
      { items: 512, window: "null" },
    ];
    const extra: Record<string, number> = {};
    for (const { items, window } of cases) {
      const name = `x${items}-w${window}`;
      const args = [
        "--config",
        "quickstart",
        "--set",
        "model.backend=sim",
        "--set",
        `env.train_items=${items}`,
        "--set",
        `optimizer.step_buffer_window=${window}`,
        // The rule that decides changes how much the optimizer is asked (a skill learned early
        // leaves later steps little to propose); this test is about the step buffer's tokens.
        "--set",
        "evaluation.gate_rule=paired",
      ];
      const plan = (await dryRun(args)) as unknown as Estimate;
      extra[name] = plan.estimated_cost_usd.assumes_step_buffer.extra_prompt_tokens_per_call;
      const run = await runCli(["train", ...args, "--out", join(dir.path, name), "--json"], {
        env: { SKILLOPT_CACHE_DIR: join(dir.path, `cache-${name}`) },
      });
      expect(run.code).toBe(0);
      const summary = JSON.parse(run.stdout) as Summary;
      const actual = Object.entries(summary.calls.by_stage)
        .filter(([stage]) => stage !== "rollout")
        .reduce((n, [, s]) => n + s.prompt_tokens, 0);
      const { assumes_tokens_per_call: per, assumes_step_buffer: buffer } = plan.estimated_cost_usd;
      const estimated = Object.entries(plan.predicted_calls.optimizer)
        .filter(([stage]) => stage !== "total")
        .reduce(
          (n, [stage, calls]) =>
            n +
            calls * (per.optimizer.prompt + (buffer.stages.includes(stage) ? buffer.extra_prompt_tokens_per_call : 0)),
          0,
        );
      // Calls are upper bounds, so the estimate may be high, never low; and not wildly high either.
      expect(estimated).toBeGreaterThanOrEqual(actual);
      expect(estimated).toBeLessThan(3 * actual);
    }
    // The window bounds what a long epoch adds to each call; without it the buffer keeps growing.
    expect(extra["x512-w16"]!).toBeGreaterThan(extra["x32-w16"]!);
    expect(extra["x512-wnull"]!).toBeGreaterThan(extra["x512-w16"]!);
  }, 120_000);
});
