// Issue 11 §5: credentials only go where they belong. Azure AD / managed-identity tokens are only
// created for, and sent to, https endpoints on Azure OpenAI hosts; keys over plain http to a
// non-loopback host warn. A capture server records every request with its headers.
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import { ConfigError } from "../../src/lib/index.ts";
import { endpointSets, runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { fakeBinEnv } from "../support/fake-bins/index.ts";

const azure = (endpoint: string, model: Record<string, unknown> = {}) => ({
  model: {
    backend: "azure_openai",
    optimizer: "gpt-5.5",
    target: "my-deployment",
    azure_openai_endpoint: endpoint,
    ...model,
  },
});

/** A capture server: every request (any path) is recorded with its headers. */
async function captureServer() {
  const seen: { path: string; headers: Record<string, string> }[] = [];
  const record = (req: Request) => {
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = v;
    });
    seen.push({ path: new URL(req.url).pathname, headers });
    return Response.json({ access_token: "captured-token", expires_on: String(Math.floor(Date.now() / 1000) + 3600) });
  };
  const server = await startFakeOpenAI({ reply: "captured", routes: { "GET /msi/token": record } });
  return {
    server,
    seen: () => [...seen, ...server.requests.map((r) => ({ path: r.path, headers: r.headers }))],
    [Symbol.asyncDispose]: () => server.close(),
  };
}

async function buildError(config: ReturnType<typeof azure>, env: Record<string, string>): Promise<unknown> {
  using dir = tempDir("calls-");
  try {
    const c = await createModelClient(config, { cacheDir: dir.path, env: (n) => env[n] });
    await c.close();
    return undefined;
  } catch (err) {
    return err;
  }
}

describe("Azure AD tokens go only to https Azure OpenAI hosts", () => {
  const refused = [
    "http://127.0.0.1:1", // plain http, not Azure (the capture server's kind)
    "https://api.example.com",
    "http://myres.openai.azure.com", // an Azure host, but not https
    "https://myres.openai.azure.com.evil.example",
    "https://evilopenai.azure.com",
    "https://user:pw@myres.openai.azure.com",
    "https://openai.azure.com",
  ];
  for (const mode of [undefined, "azure_cli", "managed_identity", "aad"]) {
    test(`auth mode ${mode ?? "unset (azure_cli)"}: refused before any credential is created`, async () => {
      await using cap = await captureServer();
      using bins = fakeBinEnv({ ttl: 3600 });
      const env = { ...bins.vars, IDENTITY_ENDPOINT: `${cap.server.origin}/msi/token`, IDENTITY_HEADER: "hdr" };
      for (const endpoint of [...refused, cap.server.origin]) {
        const err = await buildError(azure(endpoint, mode ? { azure_openai_auth_mode: mode } : {}), env);
        expect(err, endpoint).toBeInstanceOf(ConfigError);
        expect((err as ConfigError).exitCode).toBe(2);
        expect((err as ConfigError).message).toContain("refusing to send an Azure AD token");
        expect((err as ConfigError).message).toContain("*.openai.azure.com, *.cognitiveservices.azure.com");
        expect((err as ConfigError).message).not.toContain("pw");
      }
      // No token was ever fetched: az never ran, the identity endpoint and the server saw nothing.
      expect(bins.calls()).toEqual([]);
      expect(cap.seen()).toEqual([]);
      cap.server.clearMisses();
    });
  }

  test("https endpoints on Azure OpenAI hosts are accepted (no call is made to build the client)", async () => {
    using bins = fakeBinEnv({ ttl: 3600 });
    for (const endpoint of [
      "https://myres.openai.azure.com",
      "https://myres.cognitiveservices.azure.com/",
      "https://MyRes.OpenAI.Azure.com",
    ]) {
      expect(await buildError(azure(endpoint), bins.vars), endpoint).toBeUndefined();
    }
    expect(bins.calls()).toEqual([]);
  });

  test("api_key and openai_compatible modes may use any http(s) endpoint: their key is the user's choice", async () => {
    expect(
      await buildError(
        azure("http://127.0.0.1:1", { azure_openai_auth_mode: "api_key", azure_openai_api_key: "k-1234567890abcd" }),
        {},
      ),
    ).toBeUndefined();
    expect(
      await buildError(azure("https://api.example.com/v1", { azure_openai_auth_mode: "openai_compatible" }), {}),
    ).toBeUndefined();
  });
});

describe("through the CLI, with a capture server recording headers", () => {
  test("eval --backend azure_openai (auth mode unset, and managed_identity) exits 2; nothing reaches the server", async () => {
    await using cap = await captureServer();
    using bins = fakeBinEnv({ ttl: 3600 });
    using dir = tempDir();
    const skill = join(dir.path, "s.md");
    writeFileSync(skill, "# Skill\n");
    for (const mode of [
      {},
      {
        AZURE_OPENAI_AUTH_MODE: "managed_identity",
        IDENTITY_ENDPOINT: `${cap.server.origin}/msi/token`,
        IDENTITY_HEADER: "hdr",
      },
    ]) {
      const r = await runCli(
        [
          "eval",
          "--config",
          "quickstart",
          "--backend",
          "azure_openai",
          "--skill",
          skill,
          "--split",
          "val",
          "--out",
          join(dir.path, "e"),
        ],
        {
          env: { ...bins.vars, AZURE_OPENAI_ENDPOINT: cap.server.origin, ...mode },
        },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("AZURE_OPENAI_ENDPOINT: refusing to send an Azure AD token");
      expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(2);
    }
    expect(bins.calls()).toEqual([]);
    expect(cap.seen()).toEqual([]);
    cap.server.clearMisses();
  }, 60_000);

  test("sleep review --backend azure_openai exits 2; no token is created or sent", async () => {
    await using cap = await captureServer();
    using bins = fakeBinEnv({ ttl: 3600 });
    using dir = tempDir();
    const home = bins.home;
    const project = join(dir.path, "proj");
    mkdirSync(join(home, ".skillopt-sleep"), { recursive: true });
    mkdirSync(project, { recursive: true });
    writeFileSync(
      join(home, ".skillopt-sleep", "config.json"),
      JSON.stringify({ azure_endpoint: cap.server.url, model: "gpt-5.5" }),
    );
    const r = await runCli(["sleep", "review", "--backend", "azure_openai", "--project", project], {
      env: {
        ...bins.vars,
        SKILLOPT_SLEEP_STATE_DIR: join(home, ".skillopt-sleep"),
        SKILLOPT_CACHE_DIR: join(dir.path, "cache"),
      },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("refusing to send an Azure AD token");
    expect(bins.calls()).toEqual([]);
    expect(cap.seen()).toEqual([]);
    cap.server.clearMisses();
  }, 60_000);

  test("a key over plain http to a non-loopback host warns; loopback and https do not", async () => {
    const dry = (extra: string[], env: Record<string, string> = {}) =>
      runCli(["train", "--config", "quickstart", "--dry-run", "--json", ...extra], {
        env: { OPENAI_COMPATIBLE_API_KEY: "sk-test-plain-http-0000", ...env },
      });
    const remote = await dry([...endpointSets("http://10.20.30.40:8000/v1")]);
    expect(remote.code).toBe(0);
    expect(remote.stderr).toContain("is sent over plain http to 10.20.30.40:8000, which is not loopback");
    expect(remote.stderr).not.toContain("sk-test-plain-http-0000");
    const loopback = await dry([...endpointSets("http://127.0.0.1:8000/v1")]);
    expect(loopback.code).toBe(0);
    expect(loopback.stderr).not.toContain("plain http");
    const azureKey = await dry(["--set", "model.backend=azure_openai"], {
      AZURE_OPENAI_ENDPOINT: "http://aoai.internal.example",
      AZURE_OPENAI_AUTH_MODE: "api_key",
      AZURE_OPENAI_API_KEY: "azkey-0123456789abcdef",
    });
    expect(azureKey.code).toBe(0);
    expect(azureKey.stderr).toContain("sent over plain http to aoai.internal.example");
    // An agent CLI's own key and base URL, from the environment.
    using bins = fakeBinEnv();
    const codex = await dry(["--backend", "codex"], {
      ...bins.vars,
      OPENAI_API_KEY: "sk-cli-plain-http-000000",
      OPENAI_BASE_URL: "http://10.9.8.7/v1",
    });
    expect(codex.code).toBe(0);
    expect(codex.stderr).toContain(
      "OPENAI_API_KEY (given to the codex_exec CLI, which sends it to OPENAI_BASE_URL) is sent over plain http to 10.9.8.7",
    );
    expect(codex.stderr).not.toContain("sk-cli-plain-http-000000");
  }, 60_000);
});
