// Issue 11 §2: each backend gets a model it can call. The base config's placeholder model (gpt-5.5)
// is replaced per backend; a model the user chose is passed unchanged. Real CLI processes, fake agent
// CLIs on PATH that record their argv and refuse model names they do not serve.
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fakeBinEnv } from "../support/fake-bins/index.ts";
import { FIXTURES } from "../benchmarks/support/context.ts";
import { REPO_ROOT, runCli } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";

const CLAUDE_MODELS = ["claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5"];
const AZURE = {
  AZURE_OPENAI_ENDPOINT: "https://example.openai.azure.com",
  AZURE_OPENAI_AUTH_MODE: "api_key",
  AZURE_OPENAI_API_KEY: "k-test-1234567890",
};
const small = ["--set", "train.num_epochs=1", "--set", "env.limit=4"];

function modelsOf(argvs: string[][]): (string | undefined)[] {
  return argvs.map((a) => {
    const i = a.findIndex((x) => x === "--model" || x === "-m");
    return i >= 0 ? a[i + 1] : undefined;
  });
}

describe("placeholder models are resolved per backend", () => {
  test("train --backend claude passes a Claude model the CLI serves, and finishes", async () => {
    using bins = fakeBinEnv({ models: CLAUDE_MODELS, reply: "ok" });
    using dir = tempDir();
    const r = await runCli(
      ["train", "--config", "quickstart", "--backend", "claude", ...small, "--out", join(dir.path, "run"), "--json"],
      { env: bins.vars },
    );
    expect(r.code).toBe(0);
    expect(r.stderr.split("\n")[0]).toContain(
      "[model config] optimizer=claude-sonnet-5-5 (claude_chat) target=claude-sonnet-5-5 (claude_chat)",
    );
    const calls = bins.calls().filter((c) => c.name === "claude");
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(modelsOf(calls.map((c) => c.argv)))).toEqual(new Set(["claude-sonnet-5-5"]));
    expect(JSON.parse(r.stdout).status).toBe("finished");
  }, 60_000);

  test("--dry-run shows the resolved backend and model of each role and calls nothing", async () => {
    using bins = fakeBinEnv({ models: CLAUDE_MODELS });
    const cases: [string, { optimizer: unknown; target: unknown }][] = [
      [
        "claude",
        {
          optimizer: { backend: "claude_chat", model: "claude-sonnet-5-5" },
          target: { backend: "claude_chat", model: "claude-sonnet-5-5" },
        },
      ],
      [
        "claude_code_exec",
        {
          optimizer: { backend: "openai_chat", model: "gpt-5.5" },
          target: { backend: "claude_code_exec", model: "claude-sonnet-5-5" },
        },
      ],
      [
        "cursor",
        {
          optimizer: { backend: "openai_chat", model: "gpt-5.5" },
          target: { backend: "cursor_exec", model: "composer-2.5" },
        },
      ],
      [
        "copilot_exec",
        { optimizer: { backend: "openai_chat", model: "gpt-5.5" }, target: { backend: "copilot_exec" } },
      ],
      [
        "qwen",
        {
          optimizer: { backend: "openai_chat", model: "gpt-5.5" },
          target: { backend: "qwen_chat", model: "Qwen/Qwen3.5-4B" },
        },
      ],
    ];
    for (const [backend, want] of cases) {
      const r = await runCli(["train", "--config", "quickstart", "--backend", backend, "--dry-run", "--json"], {
        env: { ...bins.vars, ...AZURE },
      });
      expect(r.code).toBe(0);
      const plan = JSON.parse(r.stdout) as { backends: Record<string, { model?: string }> };
      expect(plan.backends).toMatchObject(want);
      if (backend === "copilot_exec") {
        expect(plan.backends.target!.model).toBeUndefined();
        expect(r.stderr).toContain("target=(the CLI's default model) (copilot_exec)");
      }
    }
    expect(bins.calls()).toEqual([]);
  }, 60_000);

  test("copilot_exec gets no --model (its own default); cursor gets composer-2.5", async () => {
    using bins = fakeBinEnv({ reply: "<answer>x</answer>" });
    using dir = tempDir();
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    for (const backend of ["copilot_exec", "cursor"]) {
      const args = [
        "eval",
        "--config",
        "searchqa",
        "--set",
        `env.split_dir=${join(FIXTURES, "searchqa")}`,
        "--backend",
        backend,
        "--skill",
        skill,
        "--split",
        "test",
        "--out",
        join(dir.path, backend),
        "--json",
      ];
      const r = await runCli(args, { env: { ...bins.vars, ...AZURE } });
      expect(r.code).toBe(0);
    }
    const copilot = bins.calls().filter((c) => c.name === "copilot");
    const cursor = bins.calls().filter((c) => c.name === "cursor-agent");
    expect(copilot.length).toBeGreaterThan(0);
    expect(modelsOf(copilot.map((c) => c.argv)).every((m) => m === undefined)).toBe(true);
    expect(cursor.length).toBeGreaterThan(0);
    expect(new Set(modelsOf(cursor.map((c) => c.argv)))).toEqual(new Set(["composer-2.5"]));
  }, 60_000);
});

describe("a model the user chose is passed unchanged", () => {
  test("from a flag, --set, the user's own config file and the environment", async () => {
    using bins = fakeBinEnv({ models: CLAUDE_MODELS });
    using dir = tempDir();
    // The user's own file, inheriting the bundled base, naming gpt-5.5 on purpose.
    const own = join(dir.path, "mine.yaml");
    writeFileSync(
      own,
      `_base_: ${join(REPO_ROOT, "configs", "quickstart", "default.yaml")}\nmodel:\n  backend: claude_code_exec\n  target: gpt-5.5\n`,
    );
    const dry = async (args: string[], env: Record<string, string> = {}) => {
      const r = await runCli(["train", ...args, "--dry-run", "--json"], { env: { ...bins.vars, ...AZURE, ...env } });
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as { backends: Record<string, { model?: string }> }).backends;
    };
    expect(
      (await dry(["--config", "quickstart", "--backend", "claude", "--target_model", "claude-opus-5-5"])).target!.model,
    ).toBe("claude-opus-5-5");
    expect(
      (await dry(["--config", "quickstart", "--backend", "claude", "--set", "model.optimizer=claude-haiku-4-5"]))
        .optimizer!.model,
    ).toBe("claude-haiku-4-5");
    expect(
      (await dry(["--config", "quickstart", "--backend", "cursor", "--set", "model.target=gpt-5.5"])).target!.model,
    ).toBe("gpt-5.5");
    expect(
      (await dry(["--config", "quickstart", "--backend", "qwen"], { QWEN_CHAT_MODEL: "Qwen/Qwen3-8B" })).target!.model,
    ).toBe("Qwen/Qwen3-8B");
    expect(
      (
        await dry(["--config", "quickstart", "--backend", "openai_compatible"], {
          OPENAI_COMPATIBLE_MODEL: "deepseek-chat",
        })
      ).target!.model,
    ).toBe("deepseek-chat");
    expect((await dry(["--config", own])).target!.model).toBe("gpt-5.5");
  }, 60_000);

  test("a user model the CLI does not serve fails loudly, naming the model", async () => {
    using bins = fakeBinEnv({ models: CLAUDE_MODELS });
    using dir = tempDir();
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    const r = await runCli(
      [
        "eval",
        "--config",
        "quickstart",
        "--backend",
        "claude",
        "--target_model",
        "gpt-5.5",
        "--skill",
        skill,
        "--set",
        "env.limit=1",
        "--split",
        "val",
        "--out",
        join(dir.path, "e"),
      ],
      {
        env: bins.vars,
      },
    );
    const calls = bins.calls().filter((c) => c.name === "claude");
    expect(calls.length).toBeGreaterThan(0);
    expect(new Set(modelsOf(calls.map((c) => c.argv)))).toEqual(new Set(["gpt-5.5"]));
    // Whether eval exits 1 on errored items is §1's contract; here: the refusal is not hidden.
    expect(`${r.stdout}${r.stderr}`).toContain("gpt-5.5");
  }, 60_000);

  // Issue 31: a wrong default id would fail every Claude run at its first call, which the --version
  // preflight cannot see. When the CLI answers that it does not know the model, the run stops with
  // the CLI's own words (exit 1), each call made once: nothing is retried or scored.
  test("a model the Claude CLI does not know stops train and eval with the CLI's message", async () => {
    for (const [backend, command] of [
      ["claude", "train"],
      ["claude_code_exec", "eval"],
    ] as const) {
      using bins = fakeBinEnv({ models: ["claude-opus-5-5"], reply: "<answer>x</answer>" });
      using dir = tempDir();
      const skill = join(dir.path, "s.md");
      writeFileSync(skill, "# Skill\n");
      const args =
        command === "train"
          ? ["train", "--config", "quickstart", "--backend", backend, ...small, "--out", join(dir.path, "run")]
          : [
              "eval",
              "--config",
              "searchqa",
              "--set",
              `env.split_dir=${join(FIXTURES, "searchqa")}`,
              "--backend",
              backend,
              "--skill",
              skill,
              "--split",
              "test",
              "--out",
              join(dir.path, "e"),
            ];
      const r = await runCli(
        [...args, "--set", "model.optimizer=claude-sonnet-9-9", "--set", "model.target=claude-sonnet-9-9"],
        {
          env: { ...bins.vars, ...AZURE },
        },
      );
      const said = "There's an issue with the selected model (claude-sonnet-9-9). It may not exist";
      expect({ backend, code: r.code, said: r.stderr.includes(said) }).toEqual({ backend, code: 1, said: true });
      expect(r.stderr).not.toContain("Traceback");
      const calls = bins.calls().filter((c) => c.name === "claude");
      expect(calls.length).toBeGreaterThan(0);
      // No chat call was retried: every prompt went to the CLI once (before: five times each).
      if (backend === "claude") expect(new Set(calls.map((c) => c.stdin)).size).toBe(calls.length);
      const line = r.stderr.split("\n").find((l) => l.startsWith("error: "));
      expect(line).toStartWith(
        `error: ${backend === "claude" ? "claude_chat" : backend}: the CLI does not know the model: ${said}`,
      );
    }
  }, 120_000);
});
