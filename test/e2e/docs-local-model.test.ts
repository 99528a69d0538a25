import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";
import { type FakeRequest, startFakeOpenAI } from "../support/fake-openai.ts";
import { tempDir } from "../support/tmp.ts";
import { readDoc, shellBlocks } from "../docs/markdown.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

/** The walk-through block of docs/backends.md's local-model section. */
function walkthrough(): string {
  const text = readDoc("docs/backends.md");
  const at = text.indexOf("A local walk-through");
  const block = shellBlocks("docs/backends.md", text).find(
    (b) => text.split("\n").slice(0, b.line).join("\n").length > at,
  );
  if (!block) throw new Error("docs/backends.md has no local walk-through block");
  return block.text;
}

const EDIT = "- Write dates as YYYY-MM-DD.";
const OPTIMIZER = JSON.stringify({
  reasoning: "dates were written in many formats",
  batch_size: 4,
  patch: { reasoning: "one rule", edits: [{ op: "append", content: EDIT }] },
  edits: [{ op: "append", content: EDIT }],
  selected_indices: [0],
});

/**
 * A llama.cpp server as the walk-through meets it: /props tells an 8192-token context, the
 * optimizer's calls (they carry a response_format) get JSON, the rollouts prose.
 */
const llama = (req: FakeRequest) => (req.body.response_format ? OPTIMIZER : "Sure: 2024-01-05");

describe("the local-model walk-through of docs/backends.md", () => {
  test("runs as written against a llama.cpp-shaped server: the plan shows its context, the run finishes", async () => {
    await using server = await startFakeOpenAI({
      reply: llama,
      routes: {
        "GET /props": () =>
          Response.json({
            default_generation_settings: { n_ctx: 8192, params: {} },
            total_slots: 1,
            model_path: "/m.gguf",
          }),
      },
    });
    using dir = tempDir();
    const bin = join(dir.path, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "skillopt"),
      `#!/bin/sh\nexec "${process.execPath}" "${join(REPO_ROOT, "src", "main.ts")}" "$@"\n`,
    );
    chmodSync(join(bin, "skillopt"), 0o755);
    const script = walkthrough().replaceAll("http://127.0.0.1:8080/v1", server.url);
    const proc = Bun.spawn(["bash", "-e", "-c", script], {
      cwd: dir.path,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ]);
    expect(code, stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir.path, "plan.json"), "utf8"));
    expect(plan.context_windows[0]).toMatchObject({
      role: "optimizer",
      model: "qwen2.5-7b-instruct",
      context_tokens: 8192,
      source: "llama.cpp /props n_ctx",
    });
    expect(stdout).toMatch(/runs\/local\s+conventions\s+finished\s/);
    const optimizerCalls = server.requests.filter((q) => q.body.response_format);
    expect(optimizerCalls.length).toBeGreaterThan(0);
    expect(server.requests.every((q) => q.model === "qwen2.5-7b-instruct")).toBe(true);
  }, 60_000);
});
