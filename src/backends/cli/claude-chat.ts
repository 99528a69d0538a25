import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BackendError } from "../../lib/index.ts";
import { childEnv } from "../exec/process.ts";
import type { EnvLookup } from "../settings.ts";
import type { ChatBackend, RawCompletion } from "../types.ts";
import {
  cliChatCall,
  flattenMessages,
  hasImages,
  jsonLines,
  num,
  unknownModelError,
  unknownModelLine,
} from "./common.ts";

interface ClaudeChatOptions {
  bin: string;
  defaultModel: string;
  timeoutMs: number;
  env: EnvLookup;
  permissionMode: string;
  settingSources: string | undefined;
}

const CLAUDE_ENV = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "CLAUDE_CONFIG_DIR",
  "CLAUDE_CODE_USE_BEDROCK",
  "CLAUDE_CODE_USE_VERTEX",
];

const EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);

/**
 * claude_chat: `claude -p --output-format json`, prompt on stdin, in an empty temp dir (spec §7.5).
 * No tools: `--tools ""` removes the built-ins and `--strict-mcp-config` the user's MCP servers.
 */
export function createClaudeChat(opts: ClaudeChatOptions): ChatBackend {
  return {
    name: "claude_chat",
    endpoint: "claude-cli",
    bin: opts.bin,
    defaultModel: opts.defaultModel,
    timeoutMs: opts.timeoutMs,
    cacheSalt: "claude-p-json",
    async complete(request, { signal, timeoutMs }) {
      if (hasImages(request.messages)) {
        throw new BackendError(
          "bad_request",
          "claude_chat: images are not supported through the Claude CLI with tools disabled; use an API backend for image tasks",
        );
      }
      if (request.tools?.length) {
        throw new BackendError(
          "bad_request",
          "claude_chat: tool calling through the Claude CLI is not supported; use an API backend for tool-using stages",
        );
      }
      const { system, prompt } = flattenMessages(request.messages);
      return cliChatCall(
        { name: "claude_chat", dirPrefix: "skillopt-claude-", signal, timeoutMs },
        (dir) => {
          const argv = [
            opts.bin,
            "-p",
            "--output-format",
            "json",
            "--permission-mode",
            opts.permissionMode,
            "--add-dir",
            dir,
            "--tools",
            "",
            "--strict-mcp-config",
          ];
          if (request.model) argv.push("--model", request.model);
          if (opts.settingSources) argv.push("--setting-sources", opts.settingSources);
          if (system) {
            const file = join(dir, "system_prompt.txt");
            writeFileSync(file, system);
            argv.push("--append-system-prompt-file", file);
          }
          const effort = request.reasoningEffort?.toLowerCase();
          if (effort && EFFORTS.has(effort)) argv.push("--effort", effort);
          return { argv, env: childEnv(opts.env, CLAUDE_ENV), stdin: prompt };
        },
        (stdout) => parseClaudeResult(stdout, request.model),
      );
    },
  };
}

/** Parse `claude -p --output-format json` (one object, an array of events, or JSONL): the last `type: result` event. */
function parseClaudeResult(stdout: string, model: string): RawCompletion {
  let events: Array<Record<string, unknown>> = [];
  const trimmed = stdout.trim();
  try {
    const v: unknown = JSON.parse(trimmed);
    if (Array.isArray(v)) events = v.filter((e): e is Record<string, unknown> => Boolean(e) && typeof e === "object");
    else if (v && typeof v === "object") events = [v as Record<string, unknown>];
  } catch {
    events = jsonLines(trimmed);
  }
  const result = [...events].reverse().find((e) => e.type === "result");
  if (!result)
    throw new BackendError("protocol", "claude_chat: no result event in the CLI output", { retryable: true });
  if (result.is_error === true) {
    const msg = String(result.result ?? result.subtype ?? "error");
    if (/not logged in|\/login|invalid api key|authentication/i.test(msg))
      throw new BackendError("auth", `claude_chat: ${msg}`, {
        hint: "run `claude` once and log in, or set ANTHROPIC_API_KEY",
      });
    const unknown = unknownModelLine(msg);
    if (unknown) throw unknownModelError("claude_chat", unknown);
    throw new BackendError("exec", `claude_chat: the CLI reported an error: ${msg.slice(0, 300)}`, { retryable: true });
  }
  const usage = (result.usage ?? {}) as Record<string, unknown>;
  const cacheRead = num(usage.cache_read_input_tokens);
  const promptTokens = num(usage.input_tokens) + cacheRead + num(usage.cache_creation_input_tokens);
  const cost = result.total_cost_usd ?? result.cost_usd;
  return {
    text: typeof result.result === "string" ? result.result : "",
    finishReason: result.subtype === "error_max_turns" ? "length" : "stop",
    toolCalls: [],
    usage: { promptTokens, completionTokens: num(usage.output_tokens), cachedTokens: cacheRead, reasoningTokens: 0 },
    model,
    ...(typeof cost === "number" ? { providerCostUsd: cost } : {}),
    ...(result.usage ? {} : { usageMissing: true }),
  };
}
