import { createFakeBatch, type FakeBatchControl, type FakeBatchOptions } from "./fake-batch.ts";

/**
 * A fake OpenAI-compatible server: a real `Bun.serve` on 127.0.0.1 with a random port that speaks
 * the Chat Completions wire protocol (JSON, and SSE when `stream: true`, with usage blocks).
 *
 *   await using server = await startFakeOpenAI({ reply: (req) => `echo ${req.lastUserText}` });
 *   // point a backend at server.url ("http://127.0.0.1:<port>/v1")
 *
 * How a request finds its reply, first hit wins:
 *   1. `server.match(predicate, reply, { times })`: rules in registration order (times default ∞);
 *   2. `server.enqueue(reply, …)`: a FIFO queue, one entry per request;
 *   3. the `reply` option: a default for everything else.
 * A request that none of these answers gets a descriptive 500 and is recorded in `server.misses`;
 * disposing the server (`await using`, or `await server.close()`) throws if there were misses, so
 * an unscripted request fails the test. Call `server.clearMisses()` in a test that wants them.
 *
 * A reply is a string (the assistant text), a `FakeReply` object, or a function of the request
 * returning either. Faults (`fault:`): "rate_limit" (429 with Retry-After / retry-after-ms),
 * "status" (any status and error body), "hang" (never answers; released when the client goes
 * away or the server closes), "cut" (SSE stream ends cleanly mid-way with no finish_reason),
 * "reset" (connection closed after a partial body), "malformed" (200 with a body that is not JSON).
 *
 * Observability: `requests` (every request: path, query, headers, parsed body), `waitFor(n)`,
 * `inFlight` / `maxInFlight` (concurrent requests being served), `completions` (successful 200s),
 * `resetCounters()`. `latencyMs` (option or per reply `delayMs`) delays every answer, so a benchmark
 * can emulate a provider's latency. Extra routes (e.g. an IMDS token endpoint) go in `routes`.
 * Any path ending in `/chat/completions` is served, so Azure deployment paths work too; paths
 * ending in `/responses` answer in the Responses API shape (non-streaming) from the same replies.
 */

export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string;
}

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
  reasoning_tokens?: number;
}

export type FakeFault =
  | { fault: "rate_limit"; retryAfterMs?: number; retryAfterSeconds?: number }
  | {
      fault: "status";
      status: number;
      message?: string;
      type?: string;
      retryAfterMs?: number;
      /** More fields of the error object (a `code`, llama.cpp's n_prompt_tokens / n_ctx). */
      fields?: Record<string, unknown>;
    }
  | { fault: "hang" }
  | { fault: "cut"; afterChunks?: number }
  | { fault: "reset" }
  | { fault: "malformed"; body?: string };

export interface FakeCompletion {
  text?: string;
  finishReason?: "stop" | "length" | "tool_calls" | "content_filter";
  toolCalls?: FakeToolCall[];
  /** Usage to report; default: ~chars/4 of the prompt and of the text. `null` omits the block. */
  usage?: FakeUsage | null;
  model?: string;
  /** Extra delay before answering, on top of the server's latencyMs. */
  delayMs?: number;
}

export type FakeReply = FakeCompletion | FakeFault;
export type ReplySpec = string | FakeReply | ((req: FakeRequest) => string | FakeReply | Promise<string | FakeReply>);

export interface FakeRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** Parsed JSON body (empty object when there is none or it does not parse). */
  body: Record<string, unknown>;
  model: string;
  stream: boolean;
  /** Which wire API the request used. */
  api: "chat" | "responses";
  /** Chat messages; for the Responses API, `instructions` as a system message plus the input items. */
  messages: Array<{ role: string; content: unknown }>;
  /** Text of the last user message (text parts joined). */
  lastUserText: string;
  /** Text of the system message(s), joined. */
  systemText: string;
}

export interface FakeServerOptions {
  reply?: ReplySpec;
  /**
   * Serve the Batch API too (files upload/content, batches create/retrieve/cancel/list), answering
   * each batch line with the same replies as a live request (see fake-batch.ts). Without it those
   * routes answer 404, as an endpoint without a Batch API does.
   */
  batch?: FakeBatchOptions;
  /** Delay before every answer, in milliseconds. */
  latencyMs?: number;
  /** Models listed by GET /v1/models. */
  models?: string[];
  /** Extra handlers keyed "METHOD /path" (exact path, no query). */
  routes?: Record<string, (req: Request) => Response | Promise<Response>>;
}

export interface FakeOpenAIServer {
  /** Base URL including /v1, for OpenAI-compatible clients. */
  readonly url: string;
  /** Origin without /v1 (for Azure endpoints and custom routes). */
  readonly origin: string;
  readonly port: number;
  readonly requests: FakeRequest[];
  readonly misses: FakeRequest[];
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Requests answered with a complete 200 completion. */
  readonly completions: number;
  /** The Batch API's state and simulated clock (inert unless started with `batch`). */
  readonly batch: FakeBatchControl;
  enqueue(...replies: ReplySpec[]): void;
  match(predicate: (req: FakeRequest) => boolean, reply: ReplySpec, opts?: { times?: number }): void;
  /** Resolves once at least n requests have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  resetCounters(): void;
  clearMisses(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

interface Rule {
  predicate: (req: FakeRequest) => boolean;
  reply: ReplySpec;
  remaining: number;
}

const encoder = new TextEncoder();

export type { FakeBatchControl, FakeBatchOptions } from "./fake-batch.ts";

/** Start a fake OpenAI-compatible server on 127.0.0.1:0. */
export async function startFakeOpenAI(opts: FakeServerOptions = {}): Promise<FakeOpenAIServer> {
  const requests: FakeRequest[] = [];
  const misses: FakeRequest[] = [];
  const queue: ReplySpec[] = [];
  const rules: Rule[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const hangs = new Set<() => void>();
  let inFlight = 0;
  let maxInFlight = 0;
  let completions = 0;
  let closed = false;

  const enter = () => {
    inFlight++;
    if (inFlight > maxInFlight) maxInFlight = inFlight;
  };
  const leaveOnce = () => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      inFlight--;
    };
  };

  const pick = (req: FakeRequest): ReplySpec | undefined => {
    for (const rule of rules) {
      if (rule.remaining > 0 && rule.predicate(req)) {
        rule.remaining--;
        return rule.reply;
      }
    }
    if (queue.length > 0) return queue.shift();
    return opts.reply;
  };

  // One batch line: the same rules, queue and default reply as a live request, without the latency.
  const answerLine = async (
    body: Record<string, unknown>,
    url: string,
  ): Promise<{ status: number; body: Record<string, unknown>; req: FakeRequest }> => {
    const req = requestFromBody(
      body,
      new URL(`http://batch${url}`),
      "POST",
      {},
      requests.length + batch.requests.length,
    );
    const spec = pick(req);
    if (spec === undefined) {
      misses.push(req);
      return {
        status: 500,
        body: {
          error: {
            message: `fake-openai: no scripted reply for batch line (last user message=${JSON.stringify(req.lastUserText.slice(0, 120))})`,
          },
        },
        req,
      };
    }
    const resolved = typeof spec === "function" ? await spec(req) : spec;
    const reply: FakeReply = typeof resolved === "string" ? { text: resolved } : resolved;
    if ("fault" in reply) {
      const status = reply.fault === "status" ? reply.status : reply.fault === "rate_limit" ? 429 : 500;
      return {
        status,
        body: {
          error: {
            message: reply.fault === "status" ? (reply.message ?? `fake error ${status}`) : `fake ${reply.fault}`,
            type: "fake_error",
          },
        },
        req,
      };
    }
    return { status: 200, body: buildCompletion(req, reply) as unknown as Record<string, unknown>, req };
  };
  const batch = createFakeBatch(opts.batch, answerLine);

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    development: false,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const custom = opts.routes?.[`${request.method} ${url.pathname}`];
      if (custom) return custom(request);
      const batched = opts.batch ? await batch.handle(request, url) : undefined;
      if (batched) return batched;
      if (request.method === "GET" && url.pathname.endsWith("/models")) {
        const data = (opts.models ?? ["fake-model"]).map((id) => ({
          id,
          object: "model",
          created: 0,
          owned_by: "fake",
        }));
        return Response.json({ object: "list", data });
      }
      if (
        request.method !== "POST" ||
        !(url.pathname.endsWith("/chat/completions") || url.pathname.endsWith("/responses"))
      ) {
        return Response.json(
          { error: { message: `fake-openai: no route for ${request.method} ${url.pathname}` } },
          { status: 404 },
        );
      }
      const req = await parseRequest(request, url, requests.length);
      requests.push(req);
      for (const w of waiters.splice(0)) {
        if (requests.length >= w.n) w.resolve();
        else waiters.push(w);
      }
      enter();
      const leave = leaveOnce();
      try {
        const spec = pick(req);
        if (spec === undefined) {
          misses.push(req);
          leave();
          return Response.json(
            {
              error: {
                message: `fake-openai: no scripted reply for request #${req.index} (model=${req.model}, last user message=${JSON.stringify(req.lastUserText.slice(0, 120))})`,
                type: "fake_unmatched",
              },
            },
            { status: 500 },
          );
        }
        const resolved = typeof spec === "function" ? await spec(req) : spec;
        const reply: FakeReply = typeof resolved === "string" ? { text: resolved } : resolved;
        const delay = (opts.latencyMs ?? 0) + ("delayMs" in reply ? (reply.delayMs ?? 0) : 0);
        if (delay > 0) await Bun.sleep(delay);
        const response = await answer(req, reply, request.signal, () => completions++, leave);
        return response;
      } catch (err) {
        leave();
        return Response.json(
          { error: { message: `fake-openai: reply function threw: ${String(err)}` } },
          { status: 500 },
        );
      }
    },
  });

  async function answer(
    req: FakeRequest,
    reply: FakeReply,
    signal: AbortSignal,
    onComplete: () => void,
    leave: () => void,
  ): Promise<Response> {
    if ("fault" in reply) {
      switch (reply.fault) {
        case "rate_limit": {
          leave();
          const headers: Record<string, string> = {};
          if (reply.retryAfterMs !== undefined) headers["retry-after-ms"] = String(reply.retryAfterMs);
          if (reply.retryAfterSeconds !== undefined) headers["retry-after"] = String(reply.retryAfterSeconds);
          return Response.json(
            { error: { message: "Rate limit reached (fake)", type: "rate_limit_error", code: "rate_limit_exceeded" } },
            { status: 429, headers },
          );
        }
        case "status": {
          leave();
          const headers: Record<string, string> = {};
          if (reply.retryAfterMs !== undefined) headers["retry-after-ms"] = String(reply.retryAfterMs);
          return Response.json(
            {
              error: {
                message: reply.message ?? `fake error ${reply.status}`,
                type: reply.type ?? "fake_error",
                ...reply.fields,
              },
            },
            { status: reply.status, headers },
          );
        }
        case "hang":
          return new Promise<Response>((resolve) => {
            const release = () => {
              hangs.delete(release);
              leave();
              resolve(new Response(null, { status: 499 }));
            };
            hangs.add(release);
            signal.addEventListener("abort", release, { once: true });
            if (closed) release();
          });
        case "malformed":
          leave();
          return new Response(reply.body ?? '{"id": "chatcmpl-fake", "choices": [ {"message": ', {
            status: 200,
            headers: { "content-type": "application/json" },
          });
        case "reset": {
          const stream = new ReadableStream<Uint8Array>({
            start(c) {
              c.enqueue(
                encoder.encode(
                  req.stream
                    ? `data: ${JSON.stringify(chunk(req, { role: "assistant", content: "par" }, null))}\n\n`
                    : '{"id":"chatcmpl-fake","choices":[{"index":0,',
                ),
              );
              setTimeout(() => {
                leave();
                c.error(undefined);
              }, 1);
            },
          });
          return new Response(stream, {
            headers: { "content-type": req.stream ? "text/event-stream" : "application/json" },
          });
        }
        case "cut": {
          const text = "this stream is cut before it finishes";
          const parts = splitText(text, 6).slice(0, reply.afterChunks ?? 2);
          const body = parts
            .map(
              (p, i) =>
                `data: ${JSON.stringify(chunk(req, i === 0 ? { role: "assistant", content: p } : { content: p }, null))}\n\n`,
            )
            .join("");
          leave();
          if (!req.stream)
            return new Response(body.slice(0, 40), { status: 200, headers: { "content-type": "application/json" } });
          return new Response(body, { headers: { "content-type": "text/event-stream" } });
        }
      }
    }
    if (req.api === "responses") {
      leave();
      onComplete();
      return Response.json(buildResponsesReply(req, reply));
    }
    const completion = buildCompletion(req, reply);
    if (!req.stream) {
      leave();
      onComplete();
      return Response.json(completion);
    }
    const includeUsage = Boolean((req.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage);
    const events: string[] = [];
    const text = reply.text ?? "";
    const pieces = text === "" ? [""] : splitText(text, 4);
    pieces.forEach((p, i) => {
      events.push(
        JSON.stringify(chunk(req, i === 0 ? { role: "assistant", content: p } : { content: p }, null, reply.model)),
      );
    });
    if (reply.toolCalls?.length) {
      events.push(
        JSON.stringify(
          chunk(
            req,
            {
              tool_calls: reply.toolCalls.map((t, index) => ({
                index,
                id: t.id ?? `call_${index}`,
                type: "function",
                function: { name: t.name, arguments: t.arguments },
              })),
            },
            null,
            reply.model,
          ),
        ),
      );
    }
    events.push(JSON.stringify(chunk(req, {}, completion.choices[0]!.finish_reason, reply.model)));
    if (includeUsage && completion.usage)
      events.push(JSON.stringify({ ...chunk(req, {}, null, reply.model), choices: [], usage: completion.usage }));
    events.push("[DONE]");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (const e of events) c.enqueue(encoder.encode(`data: ${e}\n\n`));
        c.close();
        leave();
        onComplete();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
  }

  const origin = `http://127.0.0.1:${server.port}`;
  const api: FakeOpenAIServer = {
    url: `${origin}/v1`,
    origin,
    port: server.port ?? 0,
    requests,
    misses,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get completions() {
      return completions;
    },
    batch,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    match: (predicate, reply, o) => {
      rules.push({ predicate, reply, remaining: o?.times ?? Number.POSITIVE_INFINITY });
    },
    waitFor: (n, timeoutMs = 10_000) =>
      new Promise<void>((resolve, reject) => {
        if (requests.length >= n) return resolve();
        const timer = setTimeout(
          () => reject(new Error(`fake-openai: waited ${timeoutMs} ms for ${n} requests, saw ${requests.length}`)),
          timeoutMs,
        );
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    resetCounters: () => {
      requests.length = 0;
      maxInFlight = inFlight;
      completions = 0;
    },
    clearMisses: () => {
      misses.length = 0;
    },
    close: async () => {
      if (closed) return;
      closed = true;
      for (const release of [...hangs]) release();
      await server.stop(true);
      if (misses.length > 0) {
        throw new Error(
          `fake-openai: ${misses.length} request(s) had no scripted reply; first: #${misses[0]!.index} ${JSON.stringify(misses[0]!.lastUserText.slice(0, 120))}`,
        );
      }
    },
    [Symbol.asyncDispose]: () => api.close(),
  };
  return api;
}

async function parseRequest(request: Request, url: URL, index: number): Promise<FakeRequest> {
  const raw = await request.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = raw ? JSON.parse(raw) : {};
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    body = {};
  }
  const headers: Record<string, string> = {};
  request.headers.forEach((v, k) => {
    headers[k] = v;
  });
  return requestFromBody(body, url, request.method, headers, index);
}

function requestFromBody(
  body: Record<string, unknown>,
  url: URL,
  method: string,
  headers: Record<string, string>,
  index: number,
): FakeRequest {
  const api = url.pathname.endsWith("/responses") ? "responses" : "chat";
  const messages =
    api === "chat"
      ? Array.isArray(body.messages)
        ? (body.messages as Array<{ role: string; content: unknown }>)
        : []
      : [
          ...(typeof body.instructions === "string" ? [{ role: "system", content: body.instructions }] : []),
          ...(typeof body.input === "string"
            ? [{ role: "user", content: body.input }]
            : Array.isArray(body.input)
              ? (body.input as Array<{ role?: string; content?: unknown; type?: string; output?: unknown }>).map((i) =>
                  i.type === "function_call_output"
                    ? { role: "tool", content: i.output }
                    : { role: i.role ?? "user", content: i.content },
                )
              : []),
        ];
  const textOf = (content: unknown): string => {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content
        .map((p) =>
          p && typeof p === "object" && ["text", "input_text"].includes(String((p as { type?: string }).type))
            ? String((p as { text?: unknown }).text ?? "")
            : "",
        )
        .join("");
    }
    return "";
  };
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  return {
    index,
    method,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams.entries()),
    headers,
    body,
    model: typeof body.model === "string" ? body.model : "",
    stream: body.stream === true,
    api,
    messages,
    lastUserText: lastUser ? textOf(lastUser.content) : "",
    systemText: messages
      .filter((m) => m.role === "system" || m.role === "developer")
      .map((m) => textOf(m.content))
      .join("\n"),
  };
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function buildCompletion(req: FakeRequest, reply: FakeCompletion) {
  const text = reply.text ?? "";
  const promptChars = req.messages
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)))
    .join("\n");
  const usage =
    reply.usage === null
      ? undefined
      : reply.usage
        ? {
            prompt_tokens: reply.usage.prompt_tokens,
            completion_tokens: reply.usage.completion_tokens,
            total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens,
            prompt_tokens_details: { cached_tokens: reply.usage.cached_tokens ?? 0 },
            completion_tokens_details: { reasoning_tokens: reply.usage.reasoning_tokens ?? 0 },
          }
        : {
            prompt_tokens: estimateTokens(promptChars),
            completion_tokens: estimateTokens(text),
            total_tokens: estimateTokens(promptChars) + estimateTokens(text),
          };
  const toolCalls = reply.toolCalls?.map((t, i) => ({
    id: t.id ?? `call_${i}`,
    type: "function",
    function: { name: t.name, arguments: t.arguments },
  }));
  return {
    id: `chatcmpl-fake-${req.index}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model ?? (req.model || "fake-model"),
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: toolCalls && !text ? null : text,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: reply.finishReason ?? (toolCalls ? "tool_calls" : "stop"),
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

function buildResponsesReply(req: FakeRequest, reply: FakeCompletion) {
  const c = buildCompletion(req, reply);
  const text = reply.text ?? "";
  const output: Array<Record<string, unknown>> = [];
  if (text)
    output.push({
      type: "message",
      id: `msg_${req.index}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    });
  for (const [i, t] of (reply.toolCalls ?? []).entries())
    output.push({
      type: "function_call",
      id: `fc_${i}`,
      call_id: t.id ?? `call_${i}`,
      name: t.name,
      arguments: t.arguments,
      status: "completed",
    });
  const truncated = reply.finishReason === "length";
  return {
    id: `resp_fake_${req.index}`,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status: truncated ? "incomplete" : "completed",
    incomplete_details: truncated ? { reason: "max_output_tokens" } : null,
    model: c.model,
    output,
    ...(c.usage
      ? {
          usage: {
            input_tokens: c.usage.prompt_tokens,
            output_tokens: c.usage.completion_tokens,
            total_tokens: c.usage.total_tokens,
            input_tokens_details: { cached_tokens: reply.usage?.cached_tokens ?? 0 },
            output_tokens_details: { reasoning_tokens: reply.usage?.reasoning_tokens ?? 0 },
          },
        }
      : {}),
  };
}

function chunk(req: FakeRequest, delta: Record<string, unknown>, finishReason: string | null, model?: string) {
  return {
    id: `chatcmpl-fake-${req.index}`,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: model ?? (req.model || "fake-model"),
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function splitText(text: string, parts: number): string[] {
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
