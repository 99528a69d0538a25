import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { Settings } from "../../src/backends/index.ts";
import { definedEndpointBackend } from "../../src/backends/presets.ts";
import type { BackendDef } from "../../src/config/index.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { ask } from "./support.ts";

/** The worked example of docs/backends.md § Adding a backend: the ts block after its doc-test marker. */
function exampleBlock(): string {
  const page = readFileSync(join(REPO_ROOT, "docs/backends.md"), "utf8");
  const m = /<!-- doc-test: backend-example -->\n```ts\n([\s\S]*?)\n```/.exec(page);
  if (!m) throw new Error("docs/backends.md: no ts block after <!-- doc-test: backend-example -->");
  return m[1]!;
}

const dir = mkdtempSync(join(tmpdir(), "skillopt-backend-example-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The example as the file it would be in src/config/backends/, its relative imports pointed at the real modules. */
async function loadExample(): Promise<BackendDef> {
  const code = exampleBlock()
    .replace('"../fields.ts"', JSON.stringify(join(REPO_ROOT, "src/config/fields.ts")))
    .replace('"./define.ts"', JSON.stringify(join(REPO_ROOT, "src/config/backends/define.ts")));
  const file = join(dir, "acme-chat.ts");
  writeFileSync(file, code);
  const mod = (await import(file)) as Record<string, BackendDef>;
  const defs = Object.values(mod);
  expect(defs).toHaveLength(1);
  return defs[0]!;
}

describe("the docs' worked example of a backend (docs/backends.md § Adding a backend)", () => {
  test("compiles to a definition whose keys, label and prices have the shapes the derived tables read", async () => {
    const def = await loadExample();
    expect(def).toMatchObject({ name: "acme_chat", runs: "chat", usage: "tokens", defaultModel: "acme-large" });
    expect(def.label?.aliases).toEqual(["acme"]);
    const keys = v.parse(v.strictObject(def.settings!), {});
    expect(keys).toEqual({ acme_base_url: "" });
    expect(v.safeParse(v.strictObject(def.settings!), { acme_base_url: 3 }).success).toBe(false);
    expect(def.prices?.["acme-large"]?.input_per_mtok).toBe(1);
  });

  test("builds a chat backend that calls the endpoint with the key from the environment and the default model", async () => {
    const def = await loadExample();
    await using server = await startFakeOpenAI({ reply: "hello from acme" });
    const env: Record<string, string> = { ACME_BASE_URL: server.url, ACME_API_KEY: "acme-test-key-0123" };
    const settings = new Settings({ model: {} }, (name) => env[name]);
    const backend = definedEndpointBackend(def, settings, "target");
    expect(backend.name).toBe("acme_chat");
    const out = await backend.complete({ ...ask("hi"), model: backend.defaultModel }, { timeoutMs: 10_000 });
    expect(out.text).toBe("hello from acme");
    const request = server.requests[0]!;
    expect(request.path).toEndWith("/chat/completions");
    expect(request.body.model).toBe("acme-large");
    expect(request.headers.authorization).toBe("Bearer acme-test-key-0123");
  });

  test("a config key wins over the environment, and the role's chosen model over the default", async () => {
    const def = await loadExample();
    await using server = await startFakeOpenAI({ reply: "ok" });
    const settings = new Settings({ model: { acme_base_url: server.url, target: "acme-small" } }, () => undefined);
    const backend = definedEndpointBackend(def, settings, "target");
    await backend.complete({ ...ask("hi"), model: backend.defaultModel }, { timeoutMs: 10_000 });
    expect(server.requests[0]!.body.model).toBe("acme-small");
  });
});
