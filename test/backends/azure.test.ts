import { describe, expect, test } from "bun:test";
import { cachedTokenProvider } from "../../src/backends/azure-auth.ts";
import { createModelClient } from "../../src/backends/index.ts";
import { BackendError } from "../../src/lib/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { fakeBinEnv } from "../support/fake-bins/index.ts";
import { ask } from "./support.ts";

const azureConfig = (endpoint: string, model: Record<string, unknown> = {}) => ({
  model: {
    backend: "azure_openai",
    optimizer: "gpt-5-mini",
    target: "my-deployment",
    azure_openai_endpoint: endpoint,
    ...model,
  },
});

describe("openai_chat (Azure OpenAI)", () => {
  test("api_key mode calls the deployment path with api-version and the api-key header", async () => {
    await using server = await startFakeOpenAI({ reply: "azure says hi" });
    const client = await createModelClient(
      azureConfig(server.origin, {
        azure_openai_auth_mode: "api_key",
        azure_openai_api_key: "azure-secret-key-000111",
      }),
      { noCache: true },
    );
    const res = await client.chat("target", ask("hello", { reasoningEffort: "low" }));
    expect(res.text).toBe("azure says hi");
    const req = server.requests[0]!;
    expect(req.path).toBe("/openai/deployments/my-deployment/chat/completions");
    expect(req.query["api-version"]).toBe("2024-12-01-preview");
    expect(req.headers["api-key"]).toBe("azure-secret-key-000111");
    expect(req.body.max_completion_tokens).toBeUndefined();
    expect(req.body.reasoning_effort).toBe("low");
    await client.close();
  });

  test("azure_cli mode gets a token from `az` and reuses it until shortly before expiry", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    using bins = fakeBinEnv({ ttl: 3600 });
    const client = await createModelClient(azureConfig(server.origin), {
      noCache: true,
      env: bins.env,
      azureAdLoopbackForTests: true,
    });
    await client.chat("target", ask("1"));
    await client.chat("target", ask("2"));
    expect(bins.calls().filter((c) => c.name === "az").length).toBe(1);
    const az = bins.calls()[0]!;
    expect(az.argv).toEqual([
      "account",
      "get-access-token",
      "--resource",
      "https://cognitiveservices.azure.com",
      "-o",
      "json",
    ]);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      "Bearer fake-aad-token-0",
      "Bearer fake-aad-token-0",
    ]);
    await client.close();
  });

  test("a token within 5 minutes of expiry is refreshed", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    using bins = fakeBinEnv({ ttl: 120 });
    const client = await createModelClient(azureConfig(server.origin), {
      noCache: true,
      env: bins.env,
      azureAdLoopbackForTests: true,
    });
    await client.chat("target", ask("1"));
    await client.chat("target", ask("2"));
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([
      "Bearer fake-aad-token-0",
      "Bearer fake-aad-token-1",
    ]);
    await client.close();
  });

  test("az not logged in is an auth error with an actionable hint, not retried", async () => {
    await using server = await startFakeOpenAI({ reply: "never" });
    using bins = fakeBinEnv({ mode: "auth" });
    const client = await createModelClient(azureConfig(server.origin), {
      noCache: true,
      env: bins.env,
      azureAdLoopbackForTests: true,
    });
    const err = (await client.chat("target", ask("1")).catch((e: unknown) => e)) as BackendError;
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toContain("az login");
    expect(server.requests.length).toBe(0);
    server.clearMisses();
    await client.close();
  });

  test("managed_identity mode fetches a token from the identity endpoint", async () => {
    const seen: string[] = [];
    await using server = await startFakeOpenAI({
      reply: "mi ok",
      routes: {
        "GET /msi/token": (req) => {
          const u = new URL(req.url);
          seen.push(
            `${u.searchParams.get("resource")}|${u.searchParams.get("client_id")}|${req.headers.get("x-identity-header")}`,
          );
          return Response.json({ access_token: "mi-token", expires_on: String(Math.floor(Date.now() / 1000) + 3600) });
        },
      },
    });
    const env: Record<string, string> = { IDENTITY_ENDPOINT: `${server.origin}/msi/token`, IDENTITY_HEADER: "hdr" };
    const client = await createModelClient(
      azureConfig(server.origin, {
        azure_openai_auth_mode: "managed_identity",
        azure_openai_managed_identity_client_id: "cid-1",
      }),
      { noCache: true, env, azureAdLoopbackForTests: true },
    );
    await client.chat("target", ask("1"));
    expect(seen).toEqual(["https://cognitiveservices.azure.com|cid-1|hdr"]);
    expect(server.requests[0]!.headers.authorization).toBe("Bearer mi-token");
    await client.close();
  });

  test("openai_compatible auth mode uses a plain OpenAI client at the endpoint", async () => {
    await using server = await startFakeOpenAI({ reply: "compat" });
    const client = await createModelClient(azureConfig(server.url, { azure_openai_auth_mode: "openai_compatible" }), {
      noCache: true,
      env: { AZURE_OPENAI_API_KEY: "env-key-12345678" },
    });
    await client.chat("target", ask("1"));
    expect(server.requests[0]!.path).toBe("/v1/chat/completions");
    expect(server.requests[0]!.body.model).toBe("my-deployment");
    expect(server.requests[0]!.headers.authorization).toBe("Bearer env-key-12345678");
    await client.close();
  });

  test("per-role settings win over shared ones, env fills the gaps", async () => {
    await using a = await startFakeOpenAI({ reply: "optimizer endpoint" });
    await using b = await startFakeOpenAI({ reply: "target endpoint" });
    const client = await createModelClient(
      {
        model: {
          backend: "azure_openai",
          optimizer: "o",
          target: "t",
          azure_openai_auth_mode: "api_key",
          target_azure_openai_endpoint: b.origin,
        },
      },
      {
        noCache: true,
        env: { OPTIMIZER_AZURE_OPENAI_ENDPOINT: a.origin, AZURE_OPENAI_API_KEY: "shared-key-abcdefgh" },
      },
    );
    expect((await client.chat("optimizer", ask("x", { stage: "analyst" }))).text).toBe("optimizer endpoint");
    expect((await client.chat("target", ask("x"))).text).toBe("target endpoint");
    await client.close();
  });

  test("codex deployments go to the Responses API with instructions, max_output_tokens and reasoning", async () => {
    await using server = await startFakeOpenAI({
      reply: { text: "via responses", usage: { prompt_tokens: 40, completion_tokens: 8, reasoning_tokens: 3 } },
    });
    const client = await createModelClient(
      azureConfig(server.origin, {
        azure_openai_auth_mode: "api_key",
        azure_openai_api_key: "azure-secret-key-000111",
        target: "gpt-5-codex",
      }),
      { noCache: true },
    );
    const res = await client.chat("target", {
      stage: "rollout",
      maxTokens: 500,
      reasoningEffort: "high",
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "go" },
      ],
    });
    expect(res).toMatchObject({
      text: "via responses",
      finishReason: "stop",
      usage: { promptTokens: 40, completionTokens: 8, reasoningTokens: 3 },
    });
    const req = server.requests[0]!;
    expect(req.api).toBe("responses");
    expect(req.path).toEndWith("/responses");
    expect(req.body).toMatchObject({
      model: "gpt-5-codex",
      instructions: "be brief",
      max_output_tokens: 500,
      reasoning: { effort: "high" },
    });
    expect(req.lastUserText).toBe("go");
    await client.close();
  });

  test("an image part keeps its detail on both wires: image_url for chat completions, input_image for the Responses API", async () => {
    await using server = await startFakeOpenAI({ reply: { text: "seen" } });
    const PNG = "data:image/png;base64,iVBORw0KGgo=";
    const look = (detail?: "low") => ({
      stage: "rollout",
      messages: [
        {
          role: "user" as const,
          content: [
            { type: "text" as const, text: "what is this" },
            { type: "image" as const, url: PNG, ...(detail ? { detail } : {}) },
          ],
        },
      ],
    });
    for (const target of ["gpt-4o", "gpt-5-codex"]) {
      const client = await createModelClient(
        azureConfig(server.origin, { azure_openai_auth_mode: "api_key", azure_openai_api_key: "k-000111222", target }),
        { noCache: true },
      );
      await client.chat("target", look("low"));
      await client.chat("target", look());
      await client.close();
    }
    const [chatLow, chatPlain, respLow, respPlain] = server.requests.map((r) => r.body as Record<string, unknown>);
    const chatParts = (b: Record<string, unknown>) => (b.messages as { content: unknown }[])[0]!.content;
    expect(chatParts(chatLow!)).toEqual([
      { type: "text", text: "what is this" },
      { type: "image_url", image_url: { url: PNG, detail: "low" } },
    ]);
    expect(chatParts(chatPlain!)).toEqual([
      { type: "text", text: "what is this" },
      { type: "image_url", image_url: { url: PNG } },
    ]);
    const respParts = (b: Record<string, unknown>) => (b.input as { content: unknown }[])[0]!.content;
    expect(respParts(respLow!)).toEqual([
      { type: "input_text", text: "what is this" },
      { type: "input_image", image_url: PNG, detail: "low" },
    ]);
    expect(respParts(respPlain!)).toEqual([
      { type: "input_text", text: "what is this" },
      { type: "input_image", image_url: PNG, detail: "auto" },
    ]);
  });

  test("concurrent token requests share one fetch", async () => {
    let fetches = 0;
    const provider = cachedTokenProvider(async () => {
      fetches++;
      await Bun.sleep(5);
      return { value: `t${fetches}`, expiresAt: Date.now() + 3_600_000 };
    });
    expect(await Promise.all([provider(), provider(), provider()])).toEqual(["t1", "t1", "t1"]);
    expect(fetches).toBe(1);
  });
});
