// Issue 11 §6: the reference implementation's tested request contracts, each through a real seam
// (fake OpenAI server, fake codex CLI, the real config loader, the real CLI process).
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { heuristicTask } from "../../src/sleep/mine/index.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { fakeBinEnv } from "../support/fake-bins/index.ts";
import { ask } from "./support.ts";

async function qwenBody(env: Record<string, string>, model: Record<string, unknown> = {}) {
  await using server = await startFakeOpenAI({ reply: "ok" });
  const client = await createModelClient(
    { model: { backend: "qwen_chat", optimizer: "o", target: "t", ...model } },
    { noCache: true, roles: ["target"], env: { ...env, QWEN_CHAT_BASE_URL: server.url } },
  );
  await client.chat("target", ask("hi"));
  await client.close();
  return server.requests[0]!.body;
}

describe("retired options warn once and continue", () => {
  test("--max_analyst_rounds N, --cfg-options max_analyst_rounds=3 and the YAML key: one warning, no error", () => {
    using dir = tempDir();
    const file = join(dir.path, "c.yaml");
    writeFileSync(
      file,
      "_base_: quickstart\ngradient:\n  max_analyst_rounds: 2\n".replace(
        "quickstart",
        join(import.meta.dir, "..", "..", "configs", "quickstart", "default.yaml"),
      ),
    );
    for (const opts of [
      { legacy: { max_analyst_rounds: "5" } },
      { legacy: { max_analyst_rounds: "0" } },
      { cfgOptions: ["max_analyst_rounds=3"] },
      { cfgOptions: ["gradient.max_analyst_rounds=3"] },
    ]) {
      const loaded = loadConfig({ config: "quickstart", ...opts });
      const w = loaded.warnings.filter((x) => x.includes("max_analyst_rounds"));
      expect(w).toHaveLength(1);
      expect(w[0]).toContain("max_analyst_rounds is retired and ignored");
      expect(JSON.stringify(loaded.config)).not.toContain("max_analyst_rounds");
    }
    const all = loadConfig({ config: file, legacy: { max_analyst_rounds: "5" }, cfgOptions: ["max_analyst_rounds=3"] });
    const w = all.warnings.filter((x) => x.includes("max_analyst_rounds"));
    expect(w).toHaveLength(1);
    expect(w[0]).toContain("--max_analyst_rounds");
    expect(w[0]).toContain("c.yaml");
  });

  test("a misspelt key's hint never points at the retired key", () => {
    for (const set of ["gradient.max_analyst_round=3", "env.max_analyst_rounds=3"]) {
      let err: unknown;
      try {
        loadConfig({ config: "quickstart", set: [set] });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      expect(`${(err as ConfigError).message} ${(err as ConfigError).hint ?? ""}`).not.toContain(
        'did you mean "gradient.max_analyst_rounds"',
      );
      expect((err as ConfigError).message).not.toContain('(did you mean "max_analyst_rounds"');
    }
  });

  test("through the CLI: exit 0 with one [warn] line", async () => {
    const r = await runCli([
      "train",
      "--config",
      "quickstart",
      "--max_analyst_rounds",
      "5",
      "--cfg-options",
      "max_analyst_rounds=3",
      "--dry-run",
      "--json",
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n").filter((l) => l.includes("max_analyst_rounds"))).toHaveLength(1);
  });
});

describe("secret-valued flags name the environment variable to use", () => {
  test("--azure_openai_api_key, role forms and --cfg-options", () => {
    const cases: [Parameters<typeof loadConfig>[0], string][] = [
      [
        { config: "quickstart", legacy: { azure_openai_api_key: "abc123abc123" } },
        "--azure_openai_api_key: a secret on the command line can leak (shell history, process list); set AZURE_OPENAI_API_KEY",
      ],
      [{ config: "quickstart", legacy: { azure_api_key: "abc123abc123" } }, "set AZURE_OPENAI_API_KEY"],
      [{ config: "quickstart", legacy: { target_qwen_chat_api_key: "abc123abc123" } }, "set TARGET_QWEN_CHAT_API_KEY"],
      [
        { config: "quickstart", cfgOptions: ["model.optimizer_openai_compatible_api_key=abc123abc123"] },
        "set OPTIMIZER_OPENAI_COMPATIBLE_API_KEY",
      ],
      [{ config: "quickstart", set: ["model.minimax_api_key=abc123abc123"] }, "set MINIMAX_API_KEY"],
    ];
    for (const [opts, want] of cases) {
      const w = loadConfig(opts).warnings.join("\n");
      expect(w).toContain(want);
      expect(w).not.toContain("abc123abc123");
    }
  });
});

describe("qwen_chat and minimax_chat spellings", () => {
  test("QWEN_CHAT_THINKING_MODE=true|false|auto|server-default mean enabled|disabled|server default", async () => {
    expect((await qwenBody({ QWEN_CHAT_THINKING_MODE: "true" })).chat_template_kwargs).toEqual({
      enable_thinking: true,
    });
    expect((await qwenBody({ QWEN_CHAT_THINKING_MODE: "false" })).chat_template_kwargs).toEqual({
      enable_thinking: false,
    });
    expect((await qwenBody({ TARGET_QWEN_CHAT_THINKING_MODE: "Enabled" })).chat_template_kwargs).toEqual({
      enable_thinking: true,
    });
    expect((await qwenBody({ QWEN_CHAT_THINKING_MODE: "auto" })).chat_template_kwargs).toBeUndefined();
    expect((await qwenBody({ QWEN_CHAT_THINKING_MODE: "server-default" })).chat_template_kwargs).toBeUndefined();
    await expect(qwenBody({ QWEN_CHAT_THINKING_MODE: "fasle" })).rejects.toThrow(
      /QWEN_CHAT_THINKING_MODE: unknown Qwen thinking mode "fasle"/,
    );
  });

  test("a blank TARGET_QWEN_CHAT_TEMPERATURE= omits the field; unset is 0.7", async () => {
    expect((await qwenBody({ TARGET_QWEN_CHAT_TEMPERATURE: "" })).temperature).toBeUndefined();
    expect(
      (await qwenBody({ TARGET_QWEN_CHAT_TEMPERATURE: "", QWEN_CHAT_TEMPERATURE: "0.3" })).temperature,
    ).toBeUndefined();
    expect((await qwenBody({ TARGET_QWEN_CHAT_TEMPERATURE: "off" })).temperature).toBeUndefined();
    expect((await qwenBody({})).temperature).toBe(0.7);
    expect((await qwenBody({ TARGET_QWEN_CHAT_TEMPERATURE: "0.2" })).temperature).toBe(0.2);
  });

  test("MINIMAX_REGION=cn-zh selects the China endpoint", async () => {
    for (const region of ["cn-zh", "CN_ZH", "cn_zh"]) {
      const client = await createModelClient(
        { model: { backend: "minimax_chat", optimizer: "o", target: "t", minimax_model: "MiniMax-M3" } },
        { noCache: true, roles: ["target"], env: { MINIMAX_REGION: region } },
      );
      expect(client.info.target?.endpoint).toBe("https://api.minimaxi.com/v1");
      await client.close();
    }
    await expect(
      createModelClient(
        { model: { backend: "minimax_chat", optimizer: "o", target: "t" } },
        { noCache: true, roles: ["target"], env: { MINIMAX_REGION: "mars" } },
      ),
    ).rejects.toThrow(/unknown MiniMax region/);
  });
});

describe("codex", () => {
  test("as optimizer it forwards web_search and network settings, so codex_exec_web_search: false is enforced", async () => {
    using bins = fakeBinEnv({ reply: "ok" });
    const argvFor = async (model: Record<string, unknown>, env: Record<string, string> = {}) => {
      const client = await createModelClient(
        {
          model: {
            backend: "azure_openai",
            optimizer_backend: "codex_exec",
            optimizer: "gpt-5.5",
            target: "t",
            ...model,
          },
        },
        {
          noCache: true,
          roles: ["optimizer"],
          env: (n) => env[n] ?? bins.env(n),
        },
      );
      await client.chat("optimizer", ask(`q${Math.random()}`));
      await client.close();
      return bins.calls().at(-1)!.argv;
    };
    const off = await argvFor({ codex_exec_web_search: false });
    expect(off).toContain('web_search="disabled"');
    expect(off).toContain("sandbox_workspace_write.network_access=false");
    const byDefault = await argvFor({});
    expect(byDefault).toContain('web_search="disabled"');
    const on = await argvFor({}, { CODEX_EXEC_WEB_SEARCH: "true", CODEX_EXEC_NETWORK_ACCESS: "true" });
    expect(on).toContain('web_search="live"');
    expect(on).toContain("sandbox_workspace_write.network_access=true");
    // The config key wins over the environment (false stays false).
    expect(await argvFor({ codex_exec_web_search: false }, { CODEX_EXEC_WEB_SEARCH: "true" })).toContain(
      'web_search="disabled"',
    );
  });

  test("CODEX_EXEC_FULL_AUTO=true gives the deprecation warning and is ignored", async () => {
    using bins = fakeBinEnv();
    const r = await runCli(["train", "--config", "quickstart", "--backend", "codex", "--dry-run", "--json"], {
      env: { ...bins.vars, CODEX_EXEC_FULL_AUTO: "true" },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("CODEX_EXEC_FULL_AUTO is deprecated and ignored");
    expect(r.stderr.split("\n").filter((l) => l.includes("FULL_AUTO"))).toHaveLength(1);
    expect(bins.calls()).toEqual([]);
  });
});

describe("redaction happens before the clip", () => {
  test("a key straddling the 800-character intent clip leaves no fragment", () => {
    for (const pad of [790, 795, 798, 799]) {
      const prompt = `${"x".repeat(pad)} sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd and more`;
      const task = heuristicTask({
        session_id: "s",
        project: "/p",
        git_branch: "",
        user_prompts: [prompt, "thanks"],
        assistant_finals: [`done with sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd ${"y".repeat(600)}`],
        tools_used: [],
        skills_used: [],
        feedback_signals: [],
        n_user_turns: 2,
      })!;
      expect(task.intent).not.toMatch(/sk-[A-Za-z0-9]/);
      expect(task.intent).not.toContain("ABCDEFG");
      expect(task.attempted_solution).not.toContain("ABCDEFG");
    }
  });
});
