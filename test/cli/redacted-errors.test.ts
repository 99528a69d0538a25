import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createModelClient } from "../../src/backends/index.ts";
import { renderError } from "../../src/cli/errors.ts";
import { registerSecretsOf } from "../../src/lib/index.ts";
import { ask } from "../backends/support.ts";
import { runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";

// A key with no provider prefix: only its value identifies it.
const SECRET = "a1b2c3d4e5f6-plainkey-0042";

describe("secrets in rendered errors (issue 12)", () => {
  test("--debug: the cause a server echoed the key into is masked by value", async () => {
    await using server = await startFakeOpenAI();
    server.enqueue({ fault: "status", status: 401, message: `Incorrect API key provided: ${SECRET}. Check it.` });
    using dir = tempDir("redact-");
    const client = await createModelClient(
      { model: { backend: "openai_compatible", target: "gpt-4o-mini", openai_compatible_base_url: server.url } },
      { env: { OPENAI_COMPATIBLE_API_KEY: SECRET }, cacheDir: join(dir.path, "cache"), runId: "r" },
    );
    const err = await client.chat("target", ask("q")).catch((e: unknown) => e);
    await client.close();
    const text = renderError(err, true);
    expect(text).toContain("cause:");
    expect(text).toContain("Incorrect API key provided");
    expect(text).not.toContain(SECRET);
  });

  test("values of secret-named variables are masked, paths and URLs under such names are not", () => {
    registerSecretsOf({
      MY_SERVICE_TOKEN: "zz-9988776655-qq",
      GIT_ASKPASS: "/usr/lib/git-core/askpass",
      PATH: "/usr/bin",
    });
    const text = renderError(new Error("failed with zz-9988776655-qq via /usr/lib/git-core/askpass"), true);
    expect(text).not.toContain("zz-9988776655-qq");
    expect(text).toContain("/usr/lib/git-core/askpass");
  });

  test("a mistyped secret in a config error is hidden and the message still says what was expected", async () => {
    using dir = tempDir("redact-");
    writeFileSync(
      join(dir.path, "c.yaml"),
      "_base_: null\nmodel:\n  openai_compatible_api_key: [hunter2-typed-here]\n",
    );
    const r = await runCli(["config", "--config", "c.yaml"], { cwd: dir.path });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      "c.yaml:3:3: model.openai_compatible_api_key is invalid (expected a string, got a list (value hidden))",
    );
    expect(r.stderr).not.toContain("hunter2");
    const s = await runCli(
      ["config", "--config", "quickstart", "--set", "model.openai_compatible_api_key=[hunter2-typed-here]"],
      { cwd: dir.path },
    );
    expect(s.code).toBe(2);
    expect(s.stderr).toContain("expected a string");
    expect(s.stderr).not.toContain("hunter2");
  });

  test("an unparsable base URL is a config error at start (exit 2), not minutes of failing calls", async () => {
    using dir = tempDir("redact-");
    for (const [args, env, from] of [
      [["--set", "model.openai_compatible_base_url=http://[::1"], {}, "model.openai_compatible_base_url"],
      [[], { OPENAI_COMPATIBLE_BASE_URL: "http://[::1" }, "OPENAI_COMPATIBLE_BASE_URL"],
      [["--set", "model.openai_compatible_base_url=ftp://x.example/v1"], {}, "model.openai_compatible_base_url"],
    ] as [string[], Record<string, string>, string][]) {
      const r = await runCli(
        [
          "train",
          "--config",
          "quickstart",
          "--set",
          "model.backend=openai_compatible",
          ...args,
          "--out",
          join(dir.path, "o"),
          "--dry-run",
        ],
        {
          cwd: dir.path,
          env,
        },
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith(`config error: ${from}: `);
      expect(r.stderr).toMatch(/is not (a valid|an http\(s\)) URL/);
    }
  });
});
