import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { compatFlags, KEY_ENV } from "../benchmarks/support/e2e.ts";
import { runCli } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { SMALL_QUICKSTART } from "../support/real-llm.ts";
import { tempDir } from "../support/tmp.ts";

const scratch = tempDir();
afterAll(() => scratch[Symbol.dispose]());
const dir = () => scratch.path;

/*
 * Local servers tell their model's context on their own endpoints. Each fake below answers in the
 * shape that server documents: vLLM lists max_model_len per model under /v1/models; llama.cpp's
 * server gives default_generation_settings.n_ctx under /props; Ollama answers POST /api/show with
 * `parameters` (num_ctx when set) and model_info["<arch>.context_length"]; LM Studio's REST API
 * gives max_context_length and loaded_context_length under /api/v0/models/{id}.
 */
const llamaProps = (nCtx: number) => () =>
  Response.json({
    default_generation_settings: {
      id: 0,
      n_ctx: nCtx,
      speculative: false,
      is_processing: false,
      params: { n_predict: -1, temperature: 0.8 },
    },
    total_slots: 1,
    model_path: "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
    chat_template: "{{ messages }}",
    build_info: "b4600-abcdef",
  });
const vllmModels = (maxModelLen: number) => () =>
  Response.json({
    object: "list",
    data: [
      {
        id: "opt-model",
        object: "model",
        created: 1733300000,
        owned_by: "vllm",
        root: "Qwen/Qwen2.5-7B-Instruct",
        parent: null,
        max_model_len: maxModelLen,
        permission: [{ id: "modelperm-1", object: "model_permission", allow_sampling: true }],
      },
    ],
  });
const ollamaShow = (parameters: string, contextLength: number) => async (req: Request) => {
  const body = (await req.json()) as { model?: string };
  return Response.json({
    modelfile: `FROM ${body.model}`,
    parameters,
    template: "{{ .Prompt }}",
    details: {
      parent_model: "",
      format: "gguf",
      family: "llama",
      families: ["llama"],
      parameter_size: "3.2B",
      quantization_level: "Q4_K_M",
    },
    model_info: {
      "general.architecture": "llama",
      "general.parameter_count": 3212749888,
      "llama.context_length": contextLength,
    },
    capabilities: ["completion", "tools"],
  });
};
const lmStudioModel = (max: number, loaded?: number) => () =>
  Response.json({
    id: "opt-model",
    object: "model",
    type: "llm",
    publisher: "lmstudio-community",
    arch: "qwen2",
    compatibility_type: "gguf",
    quantization: "Q4_K_M",
    state: loaded ? "loaded" : "not-loaded",
    max_context_length: max,
    ...(loaded ? { loaded_context_length: loaded } : {}),
  });

async function dryRun(routes: Record<string, (req: Request) => Response | Promise<Response>>) {
  await using server = await startFakeOpenAI({ reply: "unused", routes });
  const r = await runCli(["train", "--config", "quickstart", "--dry-run", "--json", ...compatFlags(server.url)], {
    env: KEY_ENV,
  });
  return { ...r, chatCalls: server.requests.length };
}

describe("context windows known before the first call (train --dry-run, CLI spawned)", () => {
  test("llama.cpp reporting a 256-token context: the plan is refused before any call, naming role, stage and sizes", async () => {
    const r = await dryRun({ "GET /props": llamaProps(256) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.chatCalls).toBe(0);
    const errors = r.stderr.split("\n").filter((l) => l.startsWith("error: "));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      /^error: optimizer \(openai_compatible, model opt-model, endpoint 127\.0\.0\.1:\d+\) cannot hold the analyst prompt \(at least \d+ tokens against a context of 256, as its server reports through llama\.cpp \/props n_ctx\)$/,
    );
    expect(r.stderr).toContain("nothing was called");
  });

  test("vLLM's max_model_len: a window that holds the plan is shown in the dry-run plan", async () => {
    const r = await dryRun({ "GET /v1/models": vllmModels(32768) });
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.context_windows).toEqual([
      expect.objectContaining({
        role: "optimizer",
        model: "opt-model",
        context_tokens: 32768,
        source: "vLLM /v1/models max_model_len",
        stage: "analyst",
      }),
      expect.objectContaining({ role: "target", context_tokens: 32768, stage: "rollout" }),
    ]);
    expect(plan.context_windows[0].largest_prompt_at_least).toBeGreaterThan(500);
  });

  test("vLLM with a small max_model_len refuses the same way", async () => {
    const r = await dryRun({ "GET /v1/models": vllmModels(512) });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("against a context of 512, as its server reports through vLLM /v1/models max_model_len");
  });

  test("Ollama: num_ctx in the model's parameters wins over the model's own context_length", async () => {
    const small = await dryRun({ "POST /api/show": ollamaShow('num_ctx 300\nstop "<|eot_id|>"', 131072) });
    expect(small.code, small.stderr).toBe(1);
    expect(small.stderr).toContain("against a context of 300, as its server reports through Ollama /api/show");
    const big = await dryRun({ "POST /api/show": ollamaShow('stop "<|eot_id|>"', 131072) });
    expect(big.code, big.stderr).toBe(0);
    expect(JSON.parse(big.stdout).context_windows[0]).toMatchObject({
      context_tokens: 131072,
      source: "Ollama /api/show",
    });
  });

  test("LM Studio: the loaded context length, else the model's maximum", async () => {
    const loaded = await dryRun({ "GET /api/v0/models/opt-model": lmStudioModel(32768, 400) });
    expect(loaded.code, loaded.stderr).toBe(1);
    expect(loaded.stderr).toContain("against a context of 400, as its server reports through LM Studio /api/v0/models");
    const max = await dryRun({ "GET /api/v0/models/opt-model": lmStudioModel(32768) });
    expect(max.code, max.stderr).toBe(0);
  });

  test("a server that tells nothing (the plain fake, the real OpenAI API): no check, the plan prints", async () => {
    const r = await dryRun({});
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).context_windows).toBeUndefined();
  });
});

describe("model.backend presets for local servers (train --dry-run, CLI spawned)", () => {
  const PRESETS = [
    [
      "ollama",
      "http://127.0.0.1:11434/v1",
      "POST /api/show",
      ollamaShow('num_ctx 300\nstop "<|eot_id|>"', 131072),
      "Ollama /api/show",
    ],
    ["llamacpp", "http://127.0.0.1:8080/v1", "GET /props", llamaProps(300), "llama.cpp /props n_ctx"],
    ["vllm", "http://127.0.0.1:8000/v1", "GET /v1/models", vllmModels(300), "vLLM /v1/models max_model_len"],
    [
      "lmstudio",
      "http://127.0.0.1:1234/v1",
      "GET /api/v0/models/opt-model",
      lmStudioModel(32768, 300),
      "LM Studio /api/v0/models",
    ],
  ] as const;

  for (const [label, url, route, handler, source] of PRESETS) {
    test(`${label}: openai_compatible on both roles at ${url} by default; pointed at a fake of it, its context is read from ${route}`, async () => {
      const models = ["--set", "model.optimizer=opt-model", "--set", "model.target=opt-model"];
      const plain = await runCli([
        "train",
        "--config",
        "quickstart",
        "--dry-run",
        "--json",
        "--set",
        `model.backend=${label}`,
        ...models,
      ]);
      expect(plain.code, plain.stderr).toBe(0);
      const backends = JSON.parse(plain.stdout).backends;
      expect(backends.optimizer).toMatchObject({ backend: "openai_compatible", endpoint: url, model: "opt-model" });
      expect(backends.target).toMatchObject({ backend: "openai_compatible", endpoint: url });

      await using server = await startFakeOpenAI({ reply: "unused", routes: { [route]: handler } });
      const r = await runCli(
        ["train", "--config", "quickstart", "--dry-run", "--set", `model.backend=${label}`, ...models],
        {
          env: { OPENAI_COMPATIBLE_BASE_URL: server.url },
        },
      );
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain(`against a context of 300, as its server reports through ${source}`);
      expect(server.requests).toHaveLength(0);
    });
  }

  test("the servers' usual spellings are accepted (llama.cpp, lm-studio)", async () => {
    for (const [written, url] of [
      ["llama.cpp", "http://127.0.0.1:8080/v1"],
      ["lm-studio", "http://127.0.0.1:1234/v1"],
    ]) {
      const r = await runCli([
        "train",
        "--config",
        "quickstart",
        "--dry-run",
        "--json",
        "--set",
        `model.backend=${written}`,
      ]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).backends.optimizer.endpoint).toBe(url);
    }
  });
});

describe("a reply budget that fits the known window (train, CLI spawned)", () => {
  test("vLLM counts prompt plus max_tokens against max_model_len: with 4096 known, no request asks past it and the run finishes", async () => {
    const REPLY = JSON.stringify({
      patch: { reasoning: "r", edits: [{ op: "append", content: "- Write dates as YYYY-MM-DD." }] },
      edits: [{ op: "append", content: "- Write dates as YYYY-MM-DD." }],
      selected_indices: [0],
    });
    const promptTokens = (req: FakeRequest) =>
      Math.ceil(req.messages.reduce((n, m) => n + String(m.content).length, 0) / 4);
    await using server = await startFakeOpenAI({
      routes: { "GET /v1/models": vllmModels(4096) },
      reply: (req) => {
        const asked = Number(req.body.max_tokens ?? 0);
        const prompt = promptTokens(req);
        if (prompt + asked > 4096)
          return {
            fault: "status",
            status: 400,
            type: "BadRequestError",
            message: `This model's maximum context length is 4096 tokens. However, you requested ${prompt + asked} tokens (${prompt} in the messages, ${asked} in the completion). Please reduce the length of the messages or completion.`,
          };
        return req.model === "target-model" ? "2024-01-05" : REPLY;
      },
    });
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", join(dir(), "run")], {
      env: KEY_ENV,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(server.requests.every((q) => promptTokens(q) + Number(q.body.max_tokens) <= 4096)).toBe(true);
  }, 60_000);

  test("a vLLM refusal names the prompt's own size (the messages), not prompt plus reply budget", async () => {
    await using server = await startFakeOpenAI({
      reply: (req) =>
        req.model === "target-model"
          ? "2024-01-05"
          : {
              fault: "status",
              status: 400,
              message:
                "This model's maximum context length is 1024 tokens. However, you requested 9100 tokens (1100 in the messages, 8000 in the completion). Please reduce the length of the messages or completion.",
            },
    });
    const r = await runCli(["train", ...SMALL_QUICKSTART, ...compatFlags(server.url), "--out", join(dir(), "run2")], {
      env: KEY_ENV,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("cannot hold the analyst prompt (1100 tokens against a context of 1024)");
  }, 60_000);
});
