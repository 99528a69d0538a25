import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";

/*
 * Adding a backend touches its definition file and the one list that registers it: shown on a copy
 * of the source tree where the worked example of docs/backends.md is added exactly so (the file
 * from the docs' block, two lines in src/config/backends/index.ts), then run through the CLI.
 */

let copy = "";

beforeAll(() => {
  copy = mkdtempSync(join(tmpdir(), "skillopt-added-backend-"));
  for (const part of ["src", "docs", "configs", "package.json", "tsconfig.json"])
    cpSync(join(REPO_ROOT, part), join(copy, part), { recursive: true });
  symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
  const page = readFileSync(join(REPO_ROOT, "docs/backends.md"), "utf8");
  const block = /<!-- doc-test: backend-example -->\n```ts\n([\s\S]*?)\n```/.exec(page)?.[1];
  if (!block) throw new Error("docs/backends.md: no ts block after <!-- doc-test: backend-example -->");
  writeFileSync(join(copy, "src/config/backends/acme-chat.ts"), `${block}\n`);
  const list = join(copy, "src/config/backends/index.ts");
  const registered = readFileSync(list, "utf8")
    .replace(/^/, 'import { acmeChat } from "./acme-chat.ts";\n')
    .replace("\n] as const;", "\n  acmeChat,\n] as const;");
  expect(registered).toContain("  acmeChat,\n] as const;");
  writeFileSync(list, registered);
});
afterAll(() => rmSync(copy, { recursive: true, force: true }));

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, join(copy, "src", "main.ts"), ...args], {
    cwd: copy,
    env: { ...(process.env as Record<string, string>), NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, out: stdout + stderr };
}

describe("the docs' example backend, added as docs/backends.md says", () => {
  test("is a model.backend label (and its alias), with its default model and endpoint", async () => {
    const r = await cli(["train", "--config", "quickstart", "--set", "model.backend=acme", "--dry-run"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("optimizer=acme-large (acme_chat) target=acme-large (acme_chat)");
    expect(r.out).toContain("endpoint: https://api.acme.example/v1");
    const typo = await cli(["train", "--config", "quickstart", "--set", "model.backend=acme_chatt", "--dry-run"]);
    expect(typo.code).toBe(2);
    expect(typo.out).toContain('did you mean "acme_chat"?');
  });

  test("evaluates through its endpoint under a money cap: its key from the environment, its model priced", async () => {
    await using server = await startFakeOpenAI({ reply: "ok" });
    const skill = join(copy, "skill.md");
    writeFileSync(skill, "# A skill\n");
    const r = await cli(
      [
        "eval",
        "--config",
        "quickstart",
        "--set",
        "model.target_backend=acme_chat",
        "--set",
        "env.limit=2",
        "--set",
        "model.max_cost_usd=5",
        "--skill",
        skill,
        "--split",
        "test",
        "--no-cache",
        "--out",
        join(copy, "eval-out"),
      ],
      { ACME_BASE_URL: server.url, ACME_API_KEY: "acme-test-key-0123" },
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain("target=acme-large (acme_chat)");
    expect(server.requests.length).toBeGreaterThan(0);
    for (const request of server.requests) {
      expect(request.path).toEndWith("/chat/completions");
      expect(request.body.model).toBe("acme-large");
      expect(request.headers.authorization).toBe("Bearer acme-test-key-0123");
    }
    expect(r.out).not.toContain("acme-test-key-0123");
  });
});
