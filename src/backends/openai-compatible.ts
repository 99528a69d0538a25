// The only importer of `openai`. One SDK-backed ChatBackend serves openai_compatible, the
// qwen/minimax presets (extra body fields) and Azure OpenAI (AzureOpenAI client).
import OpenAI, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AzureOpenAI,
} from "openai";
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParams,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import type { ChatMessage, ChatRequest, ToolCall, Usage } from "../engine/index.ts";
import {
  BackendError,
  contextFacts,
  log,
  errorMessage,
  redactText,
  registerSecret,
  warnKeyOverPlainHttp,
} from "../lib/index.ts";
import { type ContextWindow, probeContextWindow } from "./context-window.ts";
import { checkEndpointUrl, sanitizeEndpoint } from "./endpoint.ts";
import { completeWithResponses, usesResponsesApi } from "./responses-api.ts";
import { createBatchApi } from "./openai-batch.ts";
import { parseRetryAfter } from "./retry.ts";
import type { ChatBackend, RawCompletion } from "./types.ts";

interface SdkChatOptions {
  /** Backend name for errors and the ledger. */
  name: string;
  kind: "openai" | "azure";
  /** OpenAI-style base URL (…/v1) or, for azure, the resource endpoint. */
  url: string;
  apiVersion?: string;
  apiKey?: string;
  /** Azure AD bearer token source (azure_cli, managed_identity). */
  tokenProvider?: () => Promise<string>;
  defaultModel: string;
  timeoutMs: number;
  /** Requests ask for min(requested, cap) tokens. */
  maxTokensCap?: number;
  /** Every request asks for exactly this many tokens, whatever the caller requested (Sleep's azure_openai). */
  fixedMaxTokens?: number;
  maxTokensField: "max_tokens" | "max_completion_tokens";
  /** Used when the request gives no temperature; undefined → omitted. */
  temperature?: number;
  /** Which models get `reasoning_effort` on the wire. */
  sendReasoningEffort: (model: string) => boolean;
  /** Extra top-level body fields (qwen chat_template_kwargs, minimax thinking). */
  extraBody?: Record<string, unknown>;
  stream: boolean;
  headers?: Record<string, string>;
  /** Where the key comes from, for the hint of an auth error (a config key or env var name). */
  keyHint?: string;
  /** Route codex/pro deployments to the Responses API (openai_chat, spec §7.3). */
  responsesApi?: boolean;
  /** Where the URL comes from (config key or variable), for the error of an unparsable one. */
  urlFrom?: string;
  /** Send a request's responseSchema as response_format json_schema (model.structured_outputs). */
  structured?: boolean;
}

/**
 * Endpoints (sanitized URL and model) that refused response_format: later requests leave it out.
 * Kept for the process, so a run warns once per endpoint and pays for at most one refused call.
 */
const refusesResponseFormat = new Set<string>();

/** The SDK client of one endpoint: no SDK retries or logging (ours wrap every call), Azure or plain OpenAI. */
function sdkClient(opts: SdkChatOptions): OpenAI {
  const common = {
    timeout: opts.timeoutMs + 1_000,
    maxRetries: 0,
    organization: null,
    project: null,
    webhookSecret: null,
    // The SDK would otherwise read OPENAI_LOG and print to the console; we log through src/lib/log.ts.
    logLevel: "off" as const,
    defaultHeaders: { "User-Agent": "SkillOpt", ...opts.headers },
  };
  return opts.kind === "azure"
    ? new AzureOpenAI({
        ...common,
        baseURL: `${opts.url.replace(/\/+$/, "")}/openai`,
        apiVersion: opts.apiVersion ?? "2024-12-01-preview",
        ...(opts.tokenProvider
          ? { azureADTokenProvider: opts.tokenProvider, apiKey: "" }
          : { apiKey: opts.apiKey ?? "" }),
      })
    : new OpenAI({ ...common, baseURL: opts.url, apiKey: opts.apiKey || "dummy" });
}

/** Build a ChatBackend over the official SDK (maxRetries 0: src/backends/retry.ts owns retries). */
export function createSdkChatBackend(opts: SdkChatOptions): ChatBackend {
  checkEndpointUrl(opts.url, opts.urlFrom ?? `${opts.name} base URL`);
  registerSecret(opts.apiKey);
  if (opts.apiKey && opts.apiKey !== "dummy")
    warnKeyOverPlainHttp(opts.url, `the ${opts.name} API key (${opts.keyHint ?? "configured key"})`);
  const client = sdkClient(opts);
  const endpoint = sanitizeEndpoint(opts.url);
  const salt = JSON.stringify({
    cap: opts.maxTokensCap ?? null,
    fixed: opts.fixedMaxTokens ?? null,
    field: opts.maxTokensField,
    temperature: opts.temperature ?? null,
    extra: opts.extraBody ?? null,
    api: opts.kind,
  });

  const windows = new Map<string, Promise<ContextWindow | undefined>>();
  // Context windows the server told (read before the first call): a reply's budget never asks past it.
  const knownWindow = new Map<string, number>();
  const errorContext = (model: string): ErrorContext => ({
    name: opts.name,
    endpoint,
    model,
    timeoutMs: opts.timeoutMs,
    keyHint: opts.keyHint,
    secret: opts.apiKey,
  });
  const completeOnce = async (
    request: ChatRequest & { model: string },
    { signal, timeoutMs, withSchema }: { signal?: AbortSignal | undefined; timeoutMs: number; withSchema: boolean },
  ): Promise<RawCompletion> => {
    const body = buildBody(opts, request, withSchema);
    fitReplyBudget(body, opts.maxTokensField, knownWindow.get(request.model), request.messages);
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
    const ctx: ErrorContext = {
      name: opts.name,
      endpoint,
      model: request.model,
      timeoutMs,
      keyHint: opts.keyHint,
      secret: opts.apiKey,
    };
    try {
      if (opts.responsesApi && usesResponsesApi(request.model)) {
        const requested = request.maxTokens ?? opts.maxTokensCap;
        const maxTokens =
          requested === undefined || opts.maxTokensCap === undefined
            ? requested
            : Math.min(requested, opts.maxTokensCap);
        return await completeWithResponses(client, request, {
          signal: combined,
          timeoutMs,
          maxTokens,
          where: describe(ctx),
        });
      }
      if (opts.stream) {
        const stream = await client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } } as ChatCompletionCreateParams & {
            stream: true;
          },
          { signal: combined, timeout: timeoutMs + 1_000 },
        );
        return await collectStream(stream, request.model, ctx);
      }
      const res = await client.chat.completions.create(
        { ...body, stream: false } as ChatCompletionCreateParams & { stream: false },
        {
          signal: combined,
          timeout: timeoutMs + 1_000,
        },
      );
      const parsed = completionOf(res, request.model);
      if (!parsed)
        throw new BackendError("protocol", `${describe(ctx)}: the response has no choices`, { retryable: true });
      return parsed;
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw classify(err, ctx, timeout.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    name: opts.name,
    endpoint,
    defaultModel: opts.defaultModel,
    timeoutMs: opts.timeoutMs,
    cacheSalt: salt,
    ...(opts.structured ? { structuredOutputs: true } : {}),
    ...(opts.kind === "openai"
      ? {
          contextWindow: (model: string) => {
            const known = windows.get(model);
            if (known) return known;
            const asked = probeContextWindow(opts.url, model, opts.apiKey);
            windows.set(model, asked);
            void asked.then((w) => {
              if (w) knownWindow.set(model, w.tokens);
            });
            return asked;
          },
        }
      : {}),
    batch: createBatchApi({
      client,
      url: opts.kind === "azure" ? "/chat/completions" : "/v1/chat/completions",
      accepts: (request) => !(opts.responsesApi && usesResponsesApi(request.model)),
      body: (request) => buildBody(opts, request),
      parse: completionOf,
      fail: (err, model) => classify(err, errorContext(model), false),
    }),
    async complete(request, { signal, timeoutMs }) {
      const refusalKey = `${endpoint}|${request.model}`;
      const withSchema = Boolean(opts.structured && request.responseSchema && !refusesResponseFormat.has(refusalKey));
      try {
        return await completeOnce(request, { signal, timeoutMs, withSchema });
      } catch (err) {
        // A server that does not take response_format answers 400 (or 422): ask once more without it.
        // If that succeeds, the endpoint is remembered as refusing it, and said once.
        if (!withSchema || !(err instanceof BackendError) || err.kind !== "bad_request") throw err;
        const plain = await completeOnce(request, { signal, timeoutMs, withSchema: false });
        if (!refusesResponseFormat.has(refusalKey)) {
          refusesResponseFormat.add(refusalKey);
          log
            .withTag("model")
            .warn(
              `${opts.name} at ${endpoint} (model ${request.model}) refused structured output (response_format json_schema: ` +
                `${err.message.replace(/^.*?the request was refused: /, "").slice(0, 160)}); asking it without a schema from now on ` +
                "(answers are still validated; model.structured_outputs=false stops sending it)",
            );
        }
        return plain;
      }
    },
  };
}

/** A Chat Completions response object (live, or the body of a batch output line) as a RawCompletion; undefined without choices. */
function completionOf(res: OpenAI.ChatCompletion, requested: string): RawCompletion | undefined {
  const choice = res.choices?.[0];
  if (!choice) return undefined;
  return {
    text: choice.message?.content ?? "",
    finishReason: mapFinish(choice.finish_reason),
    toolCalls: (choice.message?.tool_calls ?? []).flatMap((t) =>
      t.type === "function" ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
    ),
    usage: usageOf(res.usage),
    model: res.model || requested,
    ...(res.usage ? {} : { usageMissing: true }),
  };
}

function buildBody(
  opts: SdkChatOptions,
  request: ChatRequest & { model: string },
  withSchema = Boolean(opts.structured && request.responseSchema),
): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, messages: request.messages.map(toWire) };
  if (withSchema && request.responseSchema && !request.tools?.length)
    body.response_format = {
      type: "json_schema",
      json_schema: { name: request.responseSchema.name, schema: request.responseSchema.schema, strict: false },
    };
  const temperature = request.temperature ?? opts.temperature;
  if (temperature !== undefined) body.temperature = temperature;
  const requested = opts.fixedMaxTokens ?? request.maxTokens ?? opts.maxTokensCap;
  if (requested !== undefined)
    body[opts.maxTokensField] =
      opts.maxTokensCap === undefined || opts.fixedMaxTokens !== undefined
        ? requested
        : Math.min(requested, opts.maxTokensCap);
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  } else if (request.reasoningEffort && opts.sendReasoningEffort(request.model)) {
    // spec §7.3: reasoning_effort is omitted when tools are supplied.
    body.reasoning_effort = request.reasoningEffort;
  }
  if (opts.extraBody) Object.assign(body, opts.extraBody);
  return body;
}

/**
 * A server that counts prompt plus max_tokens against its window (vLLM) refuses a request whose
 * reply budget does not fit, however short the reply would be: with the window known, the budget
 * is lowered to what is left after the prompt (counted generously, at 3 characters a token). A
 * prompt that leaves less than 256 tokens is sent as it is, for the server to refuse by its own count.
 */
function fitReplyBudget(
  body: Record<string, unknown>,
  field: SdkChatOptions["maxTokensField"],
  window: number | undefined,
  messages: readonly ChatMessage[],
): void {
  const asked = body[field];
  if (window === undefined || typeof asked !== "number") return;
  const chars = messages.reduce((n, m) => n + flatten(m).length, 0);
  const left = window - Math.ceil(chars / 3) - 16;
  if (left >= 256 && left < asked) body[field] = left;
}

function toWire(m: ChatMessage): ChatCompletionMessageParam {
  const content =
    typeof m.content === "string"
      ? m.content
      : m.content.map((p) =>
          p.type === "text"
            ? { type: "text" as const, text: p.text }
            : { type: "image_url" as const, image_url: { url: p.url, ...(p.detail ? { detail: p.detail } : {}) } },
        );
  if (m.role === "tool")
    return {
      role: "tool",
      tool_call_id: m.toolCallId ?? "",
      content: typeof content === "string" ? content : flatten(m),
    };
  if (m.role === "assistant") {
    const calls = m.toolCalls?.map((t) => ({
      id: t.id,
      type: "function" as const,
      function: { name: t.name, arguments: t.arguments },
    }));
    return {
      role: "assistant",
      content: typeof content === "string" ? content : flatten(m),
      ...(calls?.length ? { tool_calls: calls } : {}),
    };
  }
  if (m.role === "system") return { role: "system", content: typeof content === "string" ? content : flatten(m) };
  return { role: "user", content } as ChatCompletionMessageParam;
}

function flatten(m: ChatMessage): string {
  return typeof m.content === "string"
    ? m.content
    : m.content.map((p) => (p.type === "text" ? p.text : `[image: ${p.url.slice(0, 64)}]`)).join("\n");
}

async function collectStream(
  stream: AsyncIterable<ChatCompletionChunk>,
  requested: string,
  ctx: ErrorContext,
): Promise<RawCompletion> {
  let text = "";
  let finish: string | null = null;
  let model = requested;
  let usage: ChatCompletionChunk["usage"] | undefined;
  const calls = new Map<number, ToolCall>();
  for await (const chunk of stream) {
    if (chunk.model) model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      if (choice.delta?.content) text += choice.delta.content;
      for (const d of choice.delta?.tool_calls ?? []) {
        const prev = calls.get(d.index) ?? { id: "", name: "", arguments: "" };
        calls.set(d.index, {
          id: d.id ?? prev.id,
          name: prev.name + (d.function?.name ?? ""),
          arguments: prev.arguments + (d.function?.arguments ?? ""),
        });
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  if (finish === null) {
    throw new BackendError("reset", `${describe(ctx)}: the stream ended before the model finished`, {
      retryable: true,
    });
  }
  return {
    text,
    finishReason: mapFinish(finish),
    toolCalls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c),
    usage: usageOf(usage ?? undefined),
    model,
    ...(usage ? {} : { usageMissing: true }),
  };
}

function mapFinish(reason: string | null | undefined): RawCompletion["finishReason"] {
  switch (reason) {
    case "stop":
    case "length":
    case "tool_calls":
    case "content_filter":
      return reason;
    case "function_call":
      return "tool_calls";
    default:
      return "unknown";
  }
}

function usageOf(u: OpenAI.CompletionUsage | null | undefined): Usage {
  return {
    promptTokens: u?.prompt_tokens ?? 0,
    completionTokens: u?.completion_tokens ?? 0,
    cachedTokens: u?.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: u?.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

interface ErrorContext {
  name: string;
  endpoint: string;
  model: string;
  timeoutMs: number;
  keyHint: string | undefined;
  /** The configured key, scrubbed from anything a server echoes back. */
  secret: string | undefined;
}

function scrub(text: string, ctx: ErrorContext): string {
  const out = redactText(text);
  return ctx.secret && ctx.secret.length >= 6 ? out.replaceAll(ctx.secret, "[REDACTED]") : out;
}

function describe(ctx: ErrorContext): string {
  return `${ctx.name} at ${ctx.endpoint} (model ${ctx.model})`;
}

/** Turn an SDK/transport failure into a BackendError with the right kind and retryability. */
function classify(err: unknown, ctx: ErrorContext, timedOut: boolean): BackendError {
  for (let cur: unknown = err, i = 0; cur && i < 5; cur = (cur as { cause?: unknown }).cause, i++) {
    // e.g. a token provider's failure, wrapped by the SDK
    if (cur instanceof BackendError) return cur;
  }
  const where = describe(ctx);
  if (timedOut || err instanceof APIConnectionTimeoutError || (err instanceof APIUserAbortError && timedOut)) {
    return new BackendError("timeout", `${where}: no answer within ${Math.round(ctx.timeoutMs / 1000)} s`, {
      retryable: true,
      cause: err,
    });
  }
  if (err instanceof APIConnectionError) {
    const code = causeCode(err);
    if (code === "ECONNREFUSED" || code === "ConnectionRefused") {
      return new BackendError("refused", `${where}: connection refused`, {
        cause: err,
        hint: "is the server running and the base URL right?",
      });
    }
    if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "DNSException") {
      return new BackendError("dns", `${where}: host not found`, { cause: err, hint: "check the base URL / endpoint" });
    }
    return new BackendError("reset", `${where}: connection failed (${code ?? scrub(errorMessage(err), ctx)})`, {
      retryable: true,
      cause: err,
    });
  }
  if (err instanceof APIError && typeof err.status === "number") {
    const status = err.status;
    const detail = scrub(serverMessage(err), ctx).slice(0, 300);
    const retryAfterMs = parseRetryAfter(err.headers);
    const base = { status, cause: err, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    if (status === 401 || status === 403) {
      return new BackendError("auth", `${where}: HTTP ${status}, the credentials were rejected: ${detail}`, {
        ...base,
        hint: ctx.keyHint ? `check ${ctx.keyHint}` : "check the API key",
      });
    }
    if (status === 404) {
      return new BackendError("not_found", `${where}: HTTP 404, model or route not found: ${detail}`, {
        ...base,
        hint: "check the model/deployment name and the base URL (it usually ends in /v1)",
      });
    }
    if ((status === 400 || status === 413 || status === 422) && isContextOverflow(err)) {
      const body = (err.error ?? {}) as { n_prompt_tokens?: unknown; n_ctx?: unknown };
      const facts = contextFacts(detail);
      const data = {
        ...facts,
        ...(typeof body.n_prompt_tokens === "number" ? { prompt_tokens: body.n_prompt_tokens } : {}),
        ...(typeof body.n_ctx === "number" ? { context_tokens: body.n_ctx } : {}),
      };
      return new BackendError(
        "context_length",
        `${where}: HTTP ${status}, the prompt does not fit the model's context: ${detail}`,
        {
          ...base,
          data,
        },
      );
    }
    if (status === 400 || status === 422) {
      return new BackendError("bad_request", `${where}: HTTP ${status}, the request was refused: ${detail}`, base);
    }
    if (status === 429)
      return new BackendError("rate_limit", `${where}: HTTP 429, rate limited: ${detail}`, {
        ...base,
        retryable: true,
      });
    if (status === 408 || status === 409 || status >= 500) {
      return new BackendError("http", `${where}: HTTP ${status}: ${detail}`, { ...base, retryable: true });
    }
    return new BackendError("http", `${where}: HTTP ${status}: ${detail}`, base);
  }
  if (err instanceof SyntaxError || /JSON/i.test(errorMessage(err))) {
    return new BackendError("protocol", `${where}: the response is not valid JSON`, { retryable: true, cause: err });
  }
  const code = causeCode(err);
  if (code === "ECONNRESET" || code === "ConnectionClosed" || code === "UND_ERR_SOCKET") {
    return new BackendError("reset", `${where}: connection reset while reading the response`, {
      retryable: true,
      cause: err,
    });
  }
  return new BackendError("protocol", `${where}: ${scrub(errorMessage(err), ctx).slice(0, 300)}`, {
    retryable: true,
    cause: err,
  });
}

/**
 * A refusal because the prompt is longer than the model's window: OpenAI and vLLM say
 * `context_length_exceeded` / "maximum context length", llama.cpp `exceed_context_size_error`.
 */
function isContextOverflow(err: APIError): boolean {
  const e = (err.error ?? {}) as { code?: unknown; type?: unknown };
  if (e.code === "context_length_exceeded" || e.type === "exceed_context_size_error") return true;
  return /maximum context length|context[_ ]length[_ ]exceeded|exceeds the available context size|context window/i.test(
    serverMessage(err),
  );
}

function serverMessage(err: APIError): string {
  const e = err.error as { message?: unknown } | undefined;
  if (e && typeof e.message === "string") return e.message;
  return err.message;
}

function causeCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let i = 0; i < 5 && cur; i++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}
