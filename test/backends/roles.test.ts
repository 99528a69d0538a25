import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createModelClient, resolveRoles, Settings, sleepModelConfig } from "../../src/backends/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

const roles = (model: Record<string, unknown>, env: Record<string, string> = {}) => {
  const r = resolveRoles(new Settings({ model }, (n) => env[n]));
  return [r.optimizer, r.target];
};

describe("role resolution (spec §7.2)", () => {
  test("labels map onto roles left at default", () => {
    expect(roles({ backend: "azure_openai", optimizer_backend: "openai_chat", target_backend: "openai_chat" })).toEqual(
      ["openai_chat", "openai_chat"],
    );
    expect(roles({ backend: "claude_code_exec" })).toEqual(["openai_chat", "claude_code_exec"]);
    expect(roles({ backend: "codex" })).toEqual(["codex_exec", "codex_exec"]);
    expect(roles({ backend: "qwen" })).toEqual(["openai_chat", "qwen_chat"]);
    expect(roles({ backend: "Anthropic" })).toEqual(["claude_chat", "claude_chat"]);
    expect(roles({ backend: "compat" })).toEqual(["openai_compatible", "openai_compatible"]);
    expect(roles({ backend: "sim" })).toEqual(["sim", "sim"]);
  });

  test("an explicit role backend wins over the label", () => {
    expect(roles({ backend: "claude_code_exec", optimizer_backend: "qwen_chat" })).toEqual([
      "qwen_chat",
      "claude_code_exec",
    ]);
  });

  test("auto picks openai_compatible when an endpoint or key is configured, else sim, and says why", () => {
    const s = (model: Record<string, unknown>, env: Record<string, string> = {}) =>
      resolveRoles(new Settings({ model }, (n) => env[n]));
    expect(s({ backend: "auto" })).toMatchObject({ optimizer: "sim", target: "sim", auto: { chose: "sim" } });
    expect(s({ backend: "auto" }, { OPENAI_COMPATIBLE_BASE_URL: "http://x/v1" })).toMatchObject({
      optimizer: "openai_compatible",
      auto: { chose: "openai_compatible", reason: "found OPENAI_COMPATIBLE_BASE_URL" },
    });
    expect(s({ backend: "auto", target_openai_compatible_api_key: "k" }).auto?.reason).toBe(
      "found model.target_openai_compatible_api_key",
    );
  });

  test("an exec harness as optimizer is a config error (exit 2) naming the key", () => {
    let err: unknown;
    try {
      roles({ backend: "azure_openai", optimizer_backend: "claude_code_exec" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).exitCode).toBe(2);
    expect((err as ConfigError).message).toContain("model.optimizer_backend");
  });

  test("codex_exec as optimizer is a chat use, allowed", () => {
    expect(roles({ optimizer_backend: "codex_exec" })).toEqual(["codex_exec", "openai_chat"]);
  });

  test("an unknown backend name is a config error listing the choices", () => {
    expect(() => roles({ target_backend: "gpt" })).toThrow(/unknown backend "gpt"/);
  });
});

const UPSTREAM = join(import.meta.dir, "..", "..", "..", "shared", "upstream", "configs", "searchqa", "default.yaml");

describe("with the real config loader", () => {
  test.skipIf(!existsSync(UPSTREAM))(
    "an upstream config with backend auto and an env endpoint talks to that endpoint",
    async () => {
      await using server = await startFakeOpenAI({ reply: "from upstream config" });
      using dir = tempDir("cfg-");
      const loaded = loadConfig({
        config: UPSTREAM,
        set: ["model.backend=auto", "model.target=gpt-4o-mini"],
        environ: { OPENAI_COMPATIBLE_BASE_URL: server.url },
      });
      const client = await createModelClient(loaded.config, { env: loaded.environ, cacheDir: dir.path });
      expect(client.resolved.auto).toEqual({ chose: "openai_compatible", reason: "found OPENAI_COMPATIBLE_BASE_URL" });
      expect(client.info.target).toMatchObject({
        backend: "openai_compatible",
        model: "gpt-4o-mini",
        endpoint: server.url,
      });
      const res = await client.chat("target", { stage: "rollout", messages: [{ role: "user", content: "q" }] });
      expect(res.text).toBe("from upstream config");
      await client.close();
    },
  );

  test.skipIf(!existsSync(UPSTREAM))(
    "the default upstream backend without an Azure endpoint fails at start-up with exit 2",
    async () => {
      const loaded = loadConfig({ config: UPSTREAM, environ: {} });
      const err = await createModelClient(loaded.config, { env: loaded.environ, noCache: true }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toContain("azure_openai_endpoint");
    },
  );
});

describe("sleep backends through the layer", () => {
  test("sleep names map onto layer backends; unsupported ones are refused by name", async () => {
    expect(resolveRoles(new Settings(sleepModelConfig("Claude", { model: "sonnet" }), () => undefined))).toMatchObject({
      optimizer: "claude_chat",
      target: "claude_chat",
    });
    expect(sleepModelConfig("codex").model.target_backend).toBe("codex_exec");
    expect(sleepModelConfig("opencode").model.target_backend).toBe("opencode_chat");
    expect(sleepModelConfig("pi").model.target_backend).toBe("pi_chat");
    expect(sleepModelConfig("cursor").model.target_backend).toBe("cursor_chat");
    expect(() => sleepModelConfig("gemini")).toThrow(/not available through the model layer/);
  });
});

describe("sim through the layer", () => {
  test("sim answers are cached per seed: another seed never reads them", async () => {
    using dir = tempDir("simcache-");
    const cfg = (seed: number) => ({
      model: { backend: "sim" },
      train: { seed },
      env: { sim_lapse_rate: 0.05, sim_noise_rate: 0.3 },
    });
    const req = { stage: "rollout", messages: [{ role: "user" as const, content: "hello sim" }] };
    const a = await createModelClient(cfg(1), { cacheDir: dir.path });
    await a.chat("target", req);
    expect((await a.chat("target", req)).cached).toBe(true);
    await a.close();
    const b = await createModelClient(cfg(2), { cacheDir: dir.path });
    expect((await b.chat("target", req)).cached).toBe(false);
    await b.close();
  });
});
