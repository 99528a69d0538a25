import { BackendError } from "../../lib/index.ts";
import { childEnv } from "../exec/process.ts";
import type { EnvLookup } from "../settings.ts";
import type { ChatBackend } from "../types.ts";
import { cliChatCall, flattenMessages, hasImages, jsonLines, unmeteredAnswer } from "./common.ts";

/**
 * Coding-agent CLIs used as chat models through their headless modes, for Sleep's `cursor`, `pi`
 * and `opencode` backends. Same isolation as the other CLI backends: each call runs in a fresh
 * empty scratch directory (removed afterwards) with an allow-listed environment, tools disabled
 * where the CLI allows it, and the answer parsed from the CLI's JSON output. None reports usage,
 * so the cost is unknown (a money cap refuses them).
 *
 *   cursor-agent -p --output-format json [--model M] <prompt>      → {"type":"result","result":…}
 *   pi -p --mode json --no-session --no-tools [--model M] <prompt> → events; last assistant message_end
 *   opencode run --format json [--model provider/model] <prompt>   → events; `text` parts concatenated
 */
type AgentChatKind = "cursor_chat" | "pi_chat" | "opencode_chat";

interface AgentChatOptions {
  kind: AgentChatKind;
  bin: string;
  model: string | undefined;
  timeoutMs: number;
  env: EnvLookup;
}

const ENV: Record<AgentChatKind, string[]> = {
  cursor_chat: ["CURSOR_API_KEY", "CURSOR_CONFIG_DIR", "XDG_CONFIG_HOME"],
  pi_chat: [
    "PI_CODING_AGENT_DIR",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "OPENROUTER_API_KEY",
    "XDG_CONFIG_HOME",
  ],
  opencode_chat: [
    "OPENCODE_CONFIG",
    "OPENCODE_CONFIG_DIR",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OPENROUTER_API_KEY",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
  ],
};

function argv(o: AgentChatOptions, prompt: string, model: string | undefined): string[] {
  const m = model ? ["--model", model] : [];
  if (o.kind === "cursor_chat") return [o.bin, "-p", "--output-format", "json", ...m, prompt];
  if (o.kind === "pi_chat") return [o.bin, "-p", "--mode", "json", "--no-session", "--no-tools", ...m, prompt];
  return [o.bin, "run", "--format", "json", ...m, prompt];
}

function textOfContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((c) =>
      c && typeof c === "object" && (c as { type?: unknown }).type === "text"
        ? String((c as { text?: unknown }).text ?? "")
        : "",
    )
    .join("");
}

/** The answer in a CLI's JSON output ("" when it holds none); throws on a reported error. */
function agentAnswer(kind: AgentChatKind, stdout: string): string {
  const events = jsonLines(stdout);
  if (kind === "cursor_chat") {
    const r = events.filter((e) => e.type === "result").at(-1);
    if (r?.is_error === true)
      throw new BackendError(
        "exec",
        `cursor_chat: the CLI reported an error: ${String(r.result ?? "").slice(0, 200)}`,
        { retryable: true },
      );
    return typeof r?.result === "string" ? r.result : "";
  }
  if (kind === "pi_chat") {
    const ends = events.filter(
      (e) => e.type === "message_end" && (e.message as { role?: unknown } | undefined)?.role === "assistant",
    );
    const last = ends.at(-1)?.message as
      | { content?: unknown; stopReason?: unknown; errorMessage?: unknown }
      | undefined;
    if (last?.stopReason === "error")
      throw new BackendError(
        "exec",
        `pi_chat: the CLI reported an error: ${String(last.errorMessage ?? "").slice(0, 200)}`,
        { retryable: true },
      );
    return textOfContent(last?.content);
  }
  const err = events.find((e) => e.type === "error");
  if (err)
    throw new BackendError(
      "exec",
      `opencode_chat: the CLI reported an error: ${JSON.stringify(err.error ?? err.part ?? "").slice(0, 200)}`,
      {
        retryable: true,
      },
    );
  return events
    .filter((e) => e.type === "text")
    .map((e) => String((e.part as { text?: unknown } | undefined)?.text ?? ""))
    .join("");
}

export function createAgentChat(o: AgentChatOptions): ChatBackend {
  return {
    name: o.kind,
    endpoint: `${o.kind.replace("_chat", "")}-cli`,
    bin: o.bin,
    defaultModel: o.model ?? `${o.kind}-default`,
    timeoutMs: o.timeoutMs,
    async complete(request, { signal, timeoutMs }) {
      if (hasImages(request.messages))
        throw new BackendError("bad_request", `${o.kind}: images are not supported through the CLI`);
      if (request.tools?.length)
        throw new BackendError("bad_request", `${o.kind}: tools are not supported through the CLI`);
      const { system, prompt } = flattenMessages(request.messages);
      const text = system ? `${system}\n\n---\n\n${prompt}` : prompt;
      const model = request.model === `${o.kind}-default` ? o.model : request.model;
      return cliChatCall(
        { name: o.kind, dirPrefix: `skillopt-${o.kind}-`, signal, timeoutMs },
        () => ({ argv: argv(o, text, model), env: childEnv(o.env, ENV[o.kind]) }),
        (stdout) => {
          const answer = agentAnswer(o.kind, stdout);
          if (!answer) throw new BackendError("protocol", `${o.kind}: the CLI returned no answer`, { retryable: true });
          return unmeteredAnswer(answer, request.model);
        },
      );
    },
  };
}
