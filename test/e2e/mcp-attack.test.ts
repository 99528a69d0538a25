import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_FRAME } from "../../src/mcp/server.ts";
import { REPO_ROOT } from "../support/cli.ts";
import { tempDir } from "../support/tmp.ts";
import { connectMcp, dataOf, errorOf } from "../mcp/support.ts";

// A hostile MCP client (a prompt-injected agent) calls `train` and `eval` on a server the owner
// started in their project, with their provider key in its environment.
const KEY = "sk-owner-key-0123456789abcdefABCD";

/** A loopback listener that records every request (where the attacker wants the key to go). */
function listener() {
  const seen: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization") ?? ""}`);
      return new Response("{}", { status: 500 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, seen, [Symbol.dispose]: () => server.stop(true) };
}

function project(root: string): string {
  const dir = join(root, "project");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "skill.md"), "# Skill\n\nAnswer briefly.\n");
  writeFileSync(join(dir, "tasks.jsonl"), `${JSON.stringify({ id: "a", input: "Say hi", reference: "hi" })}\n`);
  return dir;
}

describe("attacker: a hostile MCP client cannot use train and eval to run programs or move the key", () => {
  test("eval with env.evaluator=command, with a base URL, with a file outside; train with the same", async () => {
    using tmp = tempDir("mcp-attack-");
    using sink = listener();
    const cwd = project(tmp.path);
    writeFileSync(join(tmp.path, "private.md"), "# private notes\n");
    await using mcp = await connectMcp(cwd, { OPENAI_COMPATIBLE_API_KEY: KEY });
    const { client } = mcp;
    const pwned = join(tmp.path, "pwned");
    const command = {
      config: "tasks",
      skill: "skill.md",
      set: ["env.data_path=tasks.jsonl", "env.evaluator=command", `env.evaluator_command=touch ${pwned}`],
    };
    const exfil = {
      config: "quickstart",
      skill: "skill.md",
      set: ["model.backend=openai_compatible", `model.openai_compatible_base_url=${sink.url}`],
    };
    const outside = { config: "quickstart", skill: join(tmp.path, "private.md") };
    for (const [name, args, want] of [
      ["eval", command, /env\.evaluator: runs a program/],
      ["eval", exfil, /model\.openai_compatible_base_url: says where requests and credentials go/],
      ["eval", outside, /skill: .*private\.md is outside/],
      ["eval", { ...outside, skill: "skill.md", out: join(tmp.path, "elsewhere") }, /out: .*elsewhere is outside/],
      ["train", { config: command.config, set: command.set }, /env\.evaluator: runs a program/],
      ["train", { config: exfil.config, set: exfil.set }, /says where requests and credentials go/],
    ] as const) {
      const message = errorOf(await client.callTool({ name, arguments: args }));
      expect(message).toMatch(want);
      expect(message).toContain("skillopt mcp --allow-commands");
    }
    expect(sink.seen).toEqual([]);
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(join(cwd, "outputs"))).toBe(false);
  });

  test("a project config that sets an endpoint is refused as if the call had set it", async () => {
    using tmp = tempDir("mcp-attack-");
    using sink = listener();
    const cwd = project(tmp.path);
    // The cloned repository's own config, which the client only names.
    writeFileSync(
      join(cwd, "evil.yaml"),
      `model:\n  backend: openai_compatible\n  openai_compatible_base_url: ${sink.url}\nenv:\n  name: conventions\n`,
    );
    await using mcp = await connectMcp(cwd, { OPENAI_COMPATIBLE_API_KEY: KEY });
    const message = errorOf(
      await mcp.client.callTool({ name: "eval", arguments: { config: "evil.yaml", skill: "skill.md" } }),
    );
    expect(message).toMatch(/openai_compatible_base_url: says where requests and credentials go \(set by the config/);
    expect(sink.seen).toEqual([]);
  });

  test("the plain calls still work, and --allow-commands lifts the refusals", async () => {
    using tmp = tempDir("mcp-attack-");
    const cwd = project(tmp.path);
    {
      await using mcp = await connectMcp(cwd);
      const ok = dataOf(
        await mcp.client.callTool({
          name: "eval",
          arguments: { config: "quickstart", skill: "skill.md", set: ["env.limit=2"], out: "outputs/e1" },
        }),
      );
      expect(ok.status).toBe("finished");
    }
    const pwned = join(cwd, "ran-the-evaluator");
    await using mcp = await connectMcp(cwd, {}, ["--allow-commands"]);
    const script = join(cwd, "score.sh");
    writeFileSync(script, `#!/bin/sh\ntouch '${pwned}'\necho 1\n`, { mode: 0o755 });
    const r = await mcp.client.callTool({
      name: "eval",
      arguments: {
        config: "tasks",
        skill: "skill.md",
        set: [
          "env.data_path=tasks.jsonl",
          "env.evaluator=command",
          `env.evaluator_command=${script}`,
          "model.backend=sim",
        ],
        out: "outputs/e2",
      },
    });
    expect((r as { isError?: boolean }).isError ?? false).toBe(false);
    expect(existsSync(pwned)).toBe(true);
    expect(readFileSync(join(cwd, "outputs", "e2", "eval_summary.json"), "utf8")).toContain('"status": "finished"');
  });

  test("tool annotations: eval and train are not read-only; sleep_status can write", async () => {
    using tmp = tempDir("mcp-attack-");
    await using mcp = await connectMcp(project(tmp.path));
    const { tools } = await mcp.client.listTools();
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations ?? {}]));
    expect(hints.eval).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(hints.train).toMatchObject({ readOnlyHint: false, openWorldHint: true });
    expect(hints.sleep_status).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints.sleep_adopt).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(hints.runs).toMatchObject({ readOnlyHint: true });
  });
});

describe("attacker: a hostile MCP client sends one enormous line", () => {
  test("a 64 MiB frame is skipped with one error, memory stays bounded, the next request is answered", async () => {
    using tmp = tempDir("mcp-frame-");
    const bin = process.env.SKILLOPT_BIN;
    const proc = Bun.spawn(bin ? [bin, "mcp"] : [process.execPath, join(REPO_ROOT, "src", "main.ts"), "mcp"], {
      cwd: tmp.path,
      stdin: "pipe",
      stdout: "pipe",
      stderr: "ignore",
    });
    const reader = proc.stdout.getReader();
    const decoder = new TextDecoder();
    let got = "";
    const nextLine = async (): Promise<Record<string, unknown>> => {
      for (;;) {
        const nl = got.indexOf("\n");
        if (nl >= 0) {
          const line = got.slice(0, nl);
          got = got.slice(nl + 1);
          return JSON.parse(line) as Record<string, unknown>;
        }
        const { done, value } = await reader.read();
        if (done) throw new Error("the server closed its output");
        got += decoder.decode(value, { stream: true });
      }
    };
    try {
      // 64 MiB of one JSON string, written in 1 MiB pieces, then its newline and a ping.
      const piece = "a".repeat(1_048_576);
      proc.stdin.write('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"');
      for (let i = 0; i < 64; i++) {
        proc.stdin.write(piece);
        await proc.stdin.flush();
      }
      proc.stdin.write('"}}\n{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
      await proc.stdin.flush();
      const first = await nextLine();
      expect(first).toMatchObject({ id: null, error: { code: -32600 } });
      expect(String((first.error as { message: string }).message)).toContain(`at most ${MAX_FRAME / 1_048_576} MiB`);
      expect(await nextLine()).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
      // The peak resident size of the server: the frame was never held whole.
      const status = await Bun.file(`/proc/${proc.pid}/status`).text();
      const peakKb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]);
      expect(peakKb).toBeLessThan(300 * 1024);
    } finally {
      proc.stdin.end();
      await proc.exited;
    }
  });
});
