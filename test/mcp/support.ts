import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { join } from "node:path";
import { REPO_ROOT } from "../support/cli.ts";

/**
 * A connected official MCP client driving `skillopt mcp` (the source, or SKILLOPT_BIN) in `cwd`;
 * `flags` go to `skillopt mcp` (e.g. `--allow-commands`).
 */
export async function connectMcp(
  cwd: string,
  env: Record<string, string | undefined> = {},
  flags: readonly string[] = [],
) {
  const bin = process.env.SKILLOPT_BIN;
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: "1", ...env })) if (v !== undefined) merged[k] = v;
  delete merged.SKILLOPT_LOG_LEVEL;
  const transport = new StdioClientTransport({
    command: bin ?? process.execPath,
    args: bin ? ["mcp", ...flags] : [join(REPO_ROOT, "src", "main.ts"), "mcp", ...flags],
    cwd,
    env: merged,
    stderr: "pipe",
  });
  const client = new Client({ name: "skillopt-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    async [Symbol.asyncDispose]() {
      await client.close();
    },
  };
}

/** The structured result of a successful tool call (fails the test with the tool's text otherwise). */
export function dataOf(result: unknown): Record<string, unknown> {
  const r = result as {
    isError?: boolean;
    structuredContent?: Record<string, unknown>;
    content?: Array<{ text?: string }>;
  };
  if (r.isError) throw new Error(`tool failed: ${r.content?.[0]?.text}`);
  if (!r.structuredContent) throw new Error(`no structured content: ${JSON.stringify(r)}`);
  return r.structuredContent;
}

/** The one-line message of a failed tool call. */
export function errorOf(result: unknown): string {
  const r = result as { isError?: boolean; content?: Array<{ text?: string }> };
  if (!r.isError) throw new Error(`expected a tool error, got ${JSON.stringify(result)}`);
  return r.content?.[0]?.text ?? "";
}

/** Wait until `cond` holds, checking after each turn of the event loop's timers (bounded by the test's own timeout). */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await Bun.sleep(25);
}

/** Child pids of a process (from /proc; Linux). */
export async function childrenOf(pid: number): Promise<number[]> {
  const out = await Bun.$`ps -o pid= --ppid ${pid}`.nothrow().quiet().text();
  return out
    .split("\n")
    .map((l) => Number(l.trim()))
    .filter((n) => n > 0);
}

/** A fake endpoint's key (never a real one). */
export const KEY_ENV = { OPENAI_COMPATIBLE_API_KEY: "sk-fake-mcp-key-0000" };

/** `set` overrides: the searchqa fixture split, both roles on the OpenAI-compatible endpoint at `url`. */
export function searchqaOn(url: string): string[] {
  return [
    `env.split_dir=${join(REPO_ROOT, "fixtures", "benchmarks", "searchqa")}`,
    "model.optimizer_backend=openai_compatible",
    "model.target_backend=openai_compatible",
    `model.openai_compatible_base_url=${url}`,
    "model.optimizer=opt-model",
    "model.target=target-model",
  ];
}
