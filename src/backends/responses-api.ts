// Azure/OpenAI Responses API for the deployments that only speak it (spec §7.3: codex and pro models).
import type OpenAI from "openai";
import type { ResponseCreateParamsNonStreaming, ResponseInputItem } from "openai/resources/responses/responses";
import type { ChatMessage, ChatRequest, ToolCall } from "../engine/index.ts";
import { BackendError } from "../lib/index.ts";
import type { RawCompletion } from "./types.ts";

const RESPONSES_MODELS = [
  "gpt-5.3-codex",
  "gpt-5.1-codex",
  "gpt-5.2-codex",
  "gpt-5-codex",
  "codex-mini",
  "gpt-5.4-pro",
];

/** True for deployments routed to the Responses API: the exact name or `<name>-…`. */
export function usesResponsesApi(model: string): boolean {
  const m = model.toLowerCase();
  return RESPONSES_MODELS.some((name) => m === name || m.startsWith(`${name}-`));
}

function textOf(m: ChatMessage): string {
  return typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

function toInput(m: ChatMessage): ResponseInputItem[] {
  if (m.role === "tool") return [{ type: "function_call_output", call_id: m.toolCallId ?? "", output: textOf(m) }];
  if (m.role === "assistant") {
    const items: ResponseInputItem[] = [];
    const text = textOf(m);
    if (text) items.push({ role: "assistant", content: text });
    for (const t of m.toolCalls ?? [])
      items.push({ type: "function_call", call_id: t.id, name: t.name, arguments: t.arguments });
    return items;
  }
  const content =
    typeof m.content === "string"
      ? m.content
      : m.content.map((p) =>
          p.type === "text"
            ? { type: "input_text" as const, text: p.text }
            : { type: "input_image" as const, image_url: p.url, detail: p.detail ?? "auto" },
        );
  return [{ role: "user", content }];
}

/** One Responses API call: instructions = system text, max_output_tokens, reasoning effort, function tools. */
export async function completeWithResponses(
  client: OpenAI,
  request: ChatRequest & { model: string },
  opts: { signal: AbortSignal; timeoutMs: number; maxTokens: number | undefined; where: string },
): Promise<RawCompletion> {
  const system = request.messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n\n");
  const body: ResponseCreateParamsNonStreaming = {
    model: request.model,
    input: request.messages.filter((m) => m.role !== "system").flatMap(toInput),
    ...(system ? { instructions: system } : {}),
    ...(opts.maxTokens !== undefined ? { max_output_tokens: opts.maxTokens } : {}),
    ...(request.reasoningEffort ? { reasoning: { effort: request.reasoningEffort as "low" | "medium" | "high" } } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.tools?.length
      ? {
          tools: request.tools.map((t) => ({
            type: "function" as const,
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            strict: false,
          })),
        }
      : {}),
  };
  const res = await client.responses.create(body, { signal: opts.signal, timeout: opts.timeoutMs + 1_000 });
  let text = "";
  const toolCalls: ToolCall[] = [];
  for (const item of res.output ?? []) {
    if (item.type === "message") for (const c of item.content) if (c.type === "output_text") text += c.text;
    if (item.type === "function_call") toolCalls.push({ id: item.call_id, name: item.name, arguments: item.arguments });
  }
  if (res.status === "failed")
    throw new BackendError("http", `${opts.where}: the response failed: ${res.error?.message ?? "unknown error"}`, {
      retryable: true,
    });
  const truncated = res.status === "incomplete" && res.incomplete_details?.reason === "max_output_tokens";
  const u = res.usage;
  return {
    text,
    finishReason: truncated
      ? "length"
      : res.status === "incomplete"
        ? "content_filter"
        : toolCalls.length
          ? "tool_calls"
          : "stop",
    toolCalls,
    usage: {
      promptTokens: u?.input_tokens ?? 0,
      completionTokens: u?.output_tokens ?? 0,
      cachedTokens: u?.input_tokens_details?.cached_tokens ?? 0,
      reasoningTokens: u?.output_tokens_details?.reasoning_tokens ?? 0,
    },
    model: res.model || request.model,
    ...(u ? {} : { usageMissing: true }),
  };
}
