import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import { sanitizeEndpoint } from "../../src/backends/endpoint.ts";
import { isSecretKey } from "../../src/lib/index.ts";
import { ledgerRows, openStore, useCallTables } from "../../src/store/index.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { ask } from "./support.ts";

const SECRET = "plainsecretvalue-9876";

describe("secrets", () => {
  test("a key never reaches errors, the ledger or the cache files, even when the server echoes it", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue("fine answer", { fault: "status", status: 401, message: `Incorrect API key provided: ${SECRET}` });
    using dir = tempDir("secret-");
    const store = openStore(join(dir.path, "state.sqlite"), { migrations: [] });
    useCallTables(store);
    const client = await createModelClient(
      { model: { backend: "openai_compatible", target: "gpt-4o-mini", openai_compatible_base_url: server.url } },
      { env: { OPENAI_COMPATIBLE_API_KEY: SECRET }, cacheDir: join(dir.path, "cache"), ledgerStore: store, runId: "r" },
    );
    await client.chat("target", ask("first"));
    const err = (await client.chat("target", ask("second")).catch((e: unknown) => e)) as Error & { hint?: string };
    expect(err.message).toContain("[REDACTED]");
    expect(`${err.message} ${err.hint}`).not.toContain(SECRET);
    expect(err.hint).toContain("OPENAI_COMPATIBLE_API_KEY");
    expect(JSON.stringify(ledgerRows(store, "r"))).not.toContain(SECRET);
    await client.close();
    store.close();
    for (const sub of ["", "cache"]) {
      for (const f of readdirSync(join(dir.path, sub)).filter((f) => f.includes("sqlite"))) {
        expect(readFileSync(join(dir.path, sub, f)).includes(Buffer.from(SECRET))).toBe(false);
      }
    }
  });

  test("endpoints are shown without credentials or query strings", () => {
    expect(sanitizeEndpoint("https://user:pw@host.example/v1?api-key=abc#x")).toBe("https://host.example/v1");
  });

  test("key-like field names are secrets, token counts are not", () => {
    for (const k of [
      "api_key",
      "AZURE_OPENAI_API_KEY",
      "access_key",
      "subscription_key",
      "client_secret",
      "IDENTITY_HEADER",
      "session_token",
      "password",
      "cookie",
    ])
      expect(isSecretKey(k)).toBe(true);
    for (const k of ["max_tokens", "prompt_tokens", "auth_mode", "api_key_env", "cache_key_prefix"])
      expect(isSecretKey(k)).toBe(false);
  });
});
