// Issue 11 §3: a money cap with an unknown price refuses to start (exit 2), never runs uncapped.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { builtinPrices, createModelClient } from "../../src/backends/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { endpointSets, REPO_ROOT, runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { fakeBinEnv } from "../support/fake-bins/index.ts";
import { compatConfig } from "./support.ts";

async function refusal(
  config: ReturnType<typeof compatConfig>,
  opts: Parameters<typeof createModelClient>[1] = {},
): Promise<ConfigError | undefined> {
  using dir = tempDir("calls-");
  try {
    const client = await createModelClient(config, { cacheDir: dir.path, ...opts });
    await client.close();
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
}

describe("built-in price table", () => {
  test("the default models are priced, and every price says where it came from", () => {
    const table = builtinPrices();
    for (const m of ["gpt-5.5", "claude-sonnet-5-5", "gpt-4o", "gpt-4o-mini"]) expect(table[m]).toBeDefined();
    expect(table["gpt-5.5"]).toMatchObject({ input_per_mtok: 5, output_per_mtok: 30, cached_input_per_mtok: 0.5 });
    for (const [model, p] of Object.entries(table)) {
      expect(p.source.length, model).toBeGreaterThan(20);
      expect(/checked 20\d\d-\d\d-\d\d|not re-checked/.test(p.source), model).toBe(true);
    }
    // Never guessed: no verifiable public price → unknown.
    for (const m of ["composer-2.5", "Qwen/Qwen3.5-4B", "MiniMax-M3"]) expect(table[m]).toBeUndefined();
  });
});

describe("a money cap needs a known cost for every role", () => {
  test("an unpriced model refuses to start with exit 2, naming the model and how to price it", async () => {
    const err = await refusal(compatConfig("http://127.0.0.1:9/v1", { target: "my-local-model" }), { maxCostUsd: 5 });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.exitCode).toBe(2);
    expect(err!.message).toContain(
      '--max-cost: no price is known for the target model "my-local-model" (openai_compatible)',
    );
    expect(err!.hint).toContain("model.pricing.my-local-model.input_per_mtok");
    expect(err!.hint).toContain("pricing.yaml");
  });

  test("model.max_cost_usd is named when the cap comes from the config", async () => {
    const err = await refusal(compatConfig("http://127.0.0.1:9/v1", { optimizer: "mystery", max_cost_usd: 2 }));
    expect(err?.message).toContain('model.max_cost_usd: no price is known for the optimizer model "mystery"');
  });

  test("a price from model.pricing, the user pricing file or XDG_CONFIG_HOME lifts the refusal", async () => {
    const priced = { "my-local-model": { input_per_mtok: 0.1, output_per_mtok: 0.2 } };
    expect(
      await refusal(compatConfig("http://127.0.0.1:9/v1", { target: "my-local-model", pricing: priced }), {
        maxCostUsd: 5,
      }),
    ).toBeUndefined();
    using dir = tempDir("pricing-");
    const file = join(dir.path, "prices.yaml");
    writeFileSync(file, "my-local-model:\n  input_per_mtok: 0.1\n  output_per_mtok: 0.2\n");
    const env = { SKILLOPT_PRICING_FILE: file };
    expect(
      await refusal(compatConfig("http://127.0.0.1:9/v1", { target: "my-local-model" }), { maxCostUsd: 5, env }),
    ).toBeUndefined();
    mkdirSync(join(dir.path, "xdg", "skillopt"), { recursive: true });
    writeFileSync(
      join(dir.path, "xdg", "skillopt", "pricing.yaml"),
      "my-local-model: {input_per_mtok: 1, output_per_mtok: 2}\n",
    );
    expect(
      await refusal(compatConfig("http://127.0.0.1:9/v1", { target: "my-local-model" }), {
        maxCostUsd: 5,
        env: { XDG_CONFIG_HOME: join(dir.path, "xdg") },
      }),
    ).toBeUndefined();
  });

  test("a broken or missing user pricing file is a config error naming the file", async () => {
    using dir = tempDir("pricing-");
    const file = join(dir.path, "prices.yaml");
    writeFileSync(file, "my-local-model:\n  input_per_mtok: cheap\n");
    const bad = await refusal(compatConfig("http://127.0.0.1:9/v1"), { env: { SKILLOPT_PRICING_FILE: file } });
    expect(bad?.message).toBe(
      `${file}: my-local-model: expected non-negative numbers input_per_mtok and output_per_mtok`,
    );
    const missing = await refusal(compatConfig("http://127.0.0.1:9/v1"), {
      env: { SKILLOPT_PRICING_FILE: join(dir.path, "nope.yaml") },
    });
    expect(missing?.message).toContain("SKILLOPT_PRICING_FILE:");
  });

  test("copilot reports no usage: a money cap refuses; claude reports its own cost: allowed", async () => {
    using bins = fakeBinEnv();
    const copilot = await refusal(
      { model: { backend: "copilot_chat", optimizer: "x", target: "x" }, env: {}, gradient: {} } as never,
      { maxCostUsd: 1, env: bins.env },
    );
    expect(copilot?.message).toContain("copilot_chat reports no token usage");
    expect(copilot?.hint).toContain("model.max_calls");
    const claude = await refusal(
      {
        model: { backend: "claude_chat", optimizer: "claude-unknown-9", target: "claude-unknown-9" },
        env: {},
        gradient: {},
      } as never,
      { maxCostUsd: 1, env: bins.env },
    );
    expect(claude).toBeUndefined();
  });

  test("a cap the caller enforces itself (Sleep's nightly ceiling) is checked the same way", async () => {
    const err = await refusal(compatConfig("http://127.0.0.1:9/v1", { target: "my-local-model" }), {
      requirePricesFor: "max_cost_usd_per_night",
    });
    expect(err?.message).toContain('max_cost_usd_per_night: no price is known for the target model "my-local-model"');
  });
});

describe("train --max-cost with an unpriced model", () => {
  test("exits 2 before any call; priced, the same command starts", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    using dir = tempDir("run-");
    const args = [
      "train",
      "--config",
      "quickstart",
      ...endpointSets(server.url),
      "--set",
      "model.target=local-7b",
      "--max-cost",
      "5",
      "--out",
      join(dir.path, "run"),
    ];
    const r = await runCli(args, { env: { OPENAI_COMPATIBLE_API_KEY: "sk-fake-e2e-key-0000" }, cwd: REPO_ROOT });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-cost: no price is known for the target model "local-7b" (openai_compatible)');
    expect(r.stderr).toContain("model.pricing.local-7b.input_per_mtok");
    expect(server.requests.length).toBe(0);
    // The dry run refuses the same way: it shows what the run would do.
    const dry = await runCli([...args.slice(0, -2), "--dry-run"], {
      env: { OPENAI_COMPATIBLE_API_KEY: "sk-fake-e2e-key-0000" },
    });
    expect(dry.code).toBe(2);
    const priced = await runCli(
      [
        ...args.slice(0, -2),
        "--set",
        "model.pricing.local-7b.input_per_mtok=0.1",
        "--set",
        "model.pricing.local-7b.output_per_mtok=0.2",
        "--dry-run",
        "--json",
      ],
      { env: { OPENAI_COMPATIBLE_API_KEY: "sk-fake-e2e-key-0000" } },
    );
    expect(priced.code).toBe(0);
    expect(JSON.parse(priced.stdout).prices_per_mtok.target).toEqual({ input_per_mtok: 0.1, output_per_mtok: 0.2 });
  }, 60_000);
});

describe("Sleep's nightly money ceiling", () => {
  test("max_cost_usd_per_night with an unpriced model refuses the night (exit 2) before any call", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    using dir = tempDir();
    const home = join(dir.path, "home");
    const project = join(dir.path, "proj");
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(home, ".skillopt-sleep", "config.json"),
      JSON.stringify({
        azure_endpoint: server.url,
        api_key_env: "SLEEP_FAKE_KEY",
        model: "local-7b",
        max_cost_usd_per_night: 1,
      }),
    );
    const r = await runCli(["sleep", "review", "--backend", "openai", "--project", project], {
      env: {
        HOME: home,
        SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
        SLEEP_FAKE_KEY: "sk-fake-not-a-secret-123456",
        SKILLOPT_CACHE_DIR: join(dir.path, "cache"),
      },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/max_cost_usd_per_night: no price is known for the (optimizer|target) model "local-7b"/);
    // Sleep has no model.pricing: the hint names the user pricing file only.
    expect(r.stderr).not.toContain("--set model.pricing");
    expect(r.stderr).toContain("pricing.yaml");
    expect(server.requests.length).toBe(0);
  }, 60_000);
});
