import type { LaunchPolicy } from "../config/index.ts";
import { Children } from "./children.ts";
import { runTools } from "./run-tools.ts";
import { serveStdio, type Tool } from "./server.ts";
import { sleepTools } from "./sleep-tools.ts";

export type { Tool, ToolOutcome } from "./server.ts";

const INSTRUCTIONS = [
  "SkillOpt trains skill documents (SKILL.md, AGENTS.md, system prompts) for LLM agents, and its Sleep cycle learns from local coding-agent sessions.",
  "train starts a run in the background and returns its folder; follow it with run_status. eval scores a skill file.",
  "sleep_review stages a proposal without touching live files; show sleep_diff to the user, and call sleep_adopt with confirm: true only after they agree.",
].join(" ");

/** Every tool the server offers, each a thin shell around the CLI command of the same name. */
function mcpTools(
  command: readonly string[],
  cwd: string,
  policy: LaunchPolicy,
): { tools: Tool[]; children: Children } {
  const children = new Children(command, cwd);
  return { tools: [...runTools(children, cwd, policy), ...sleepTools(children)], children };
}

/**
 * Serve MCP over stdio until the client closes stdin, then stop every child this server started
 * (SIGINT, so a training run marks itself interrupted). SIGTERM or SIGINT to the server kills them at once.
 */
export async function serveMcp(opts: {
  command: readonly string[];
  cwd: string;
  version: string;
  /** `skillopt mcp --allow-commands`: train and eval may run programs, set endpoints and name any file. */
  allowCommands?: boolean;
}): Promise<void> {
  const policy: LaunchPolicy = { allowCommands: opts.allowCommands ?? false, command: "skillopt mcp" };
  const { tools, children } = mcpTools(opts.command, opts.cwd, policy);
  const stop = new AbortController();
  const onSignal = () => {
    stop.abort();
    void children.stopAll(0);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  // A closed stdout (EPIPE) means the client is gone, as a closed stdin does.
  process.stdout.on("error", onSignal);
  try {
    await serveStdio(
      { name: "skillopt", version: opts.version, instructions: INSTRUCTIONS, tools },
      { stop: stop.signal, onEnd: () => children.stopAll(EOF_GRACE_MS) },
    );
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
    process.stdout.off("error", onSignal);
  }
}

/** How long a child gets after the client went away; MCP clients commonly wait 2 s before SIGTERM. */
const EOF_GRACE_MS = 1500;
