import type { ContextWindow } from "./context-window.ts";
import type { ChatRequest, ToolCall, Usage } from "../engine/index.ts";

/** What one provider returned for one attempt, before retries, caching and accounting. */
export interface RawCompletion {
  text: string;
  finishReason: "stop" | "length" | "tool_calls" | "content_filter" | "error" | "unknown";
  toolCalls: ToolCall[];
  usage: Usage;
  /** The model name the provider reports (or the one requested). */
  model: string;
  /** Cost reported by the provider itself (claude -p does), else undefined → priced from the table. */
  providerCostUsd?: number;
  /** The provider reported no token usage (cost is then unknown, not 0). */
  usageMissing?: boolean;
}

/**
 * One chat provider for one role (openai_compatible, openai_chat, claude_chat, sim, …).
 * Makes exactly one attempt per call and throws BackendError with the right `kind`/`retryable`
 * on failure; the shared layer (src/backends/client.ts) adds limits, retries, cache and ledger.
 */
export interface ChatBackend {
  /** Backend name as in the config (`openai_compatible`, `sim`, …). */
  readonly name: string;
  /** Identifies the endpoint for limiter and cache keys; never contains a secret. */
  readonly endpoint: string;
  /** Model used when the request does not name one. */
  readonly defaultModel: string;
  /** The agent CLI behind a CLI-based backend (a name looked up on PATH, or a path); absent for HTTP backends. */
  readonly bin?: string;
  /** Per-attempt timeout when the backend has its own (e.g. openai_compatible timeout_seconds). */
  readonly timeoutMs?: number;
  /**
   * Settings outside the request that change the answer (default temperature, token cap,
   * thinking mode, …) as a stable string; part of the cache key. Never a secret.
   */
  readonly cacheSalt?: string;
  /** The model's context window as the server tells it (local OpenAI-compatible servers), asked before any paid call. */
  contextWindow?(model: string): Promise<ContextWindow | undefined>;
  /** Sends a request's responseSchema as a structured-output constraint (model.structured_outputs). */
  readonly structuredOutputs?: boolean;
  complete(
    request: ChatRequest & { model: string },
    opts: { signal?: AbortSignal; timeoutMs: number },
  ): Promise<RawCompletion>;
  /** The provider's Batch API (files + batches), when this backend can use one (openai_compatible, Azure OpenAI). */
  readonly batch?: BatchApi;
  /** Release held resources (clients, temp dirs). */
  close?(): void | Promise<void>;
}

/** A provider batch as its API reports it. */
export interface BatchInfo {
  id: string;
  /** validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled. */
  status: string;
  total: number;
  completed: number;
  failed: number;
  outputFileId?: string | undefined;
  errorFileId?: string | undefined;
  /** The provider's reason when the whole batch failed (e.g. a validation error). */
  errors?: string | undefined;
}

/** One line of a batch's output or error file, parsed. */
export type BatchLineResult = { completion: RawCompletion } | { error: string };

/**
 * The Batch API of an OpenAI-style provider (upload a JSONL of requests, create a batch, poll it,
 * download the answers). Implementations throw BackendError like `complete` does; a 404 on the
 * files or batches route means the endpoint has no Batch API (kind "not_found").
 */
export interface BatchApi {
  /** The `url` of each JSONL line (`/v1/chat/completions`, or `/chat/completions` on Azure). */
  readonly url: string;
  /** Whether a request can go through a batch (the Responses API models cannot). */
  accepts(request: ChatRequest & { model: string }): boolean;
  /** The request body exactly as the live call would send it (never streaming). */
  body(request: ChatRequest & { model: string }): Record<string, unknown>;
  /** Upload the JSONL and create the batch, tagged with `fingerprint` (metadata); returns the batch and its input file id. */
  submit(jsonl: string, fingerprint: string, signal?: AbortSignal): Promise<{ batch: BatchInfo; inputFileId: string }>;
  /**
   * A batch created earlier with this fingerprint that has not failed, expired or been cancelled
   * (a process killed between creating a batch and recording it), or undefined; never throws.
   */
  find(fingerprint: string, signal?: AbortSignal): Promise<{ batch: BatchInfo; inputFileId: string } | undefined>;
  retrieve(id: string, signal?: AbortSignal): Promise<BatchInfo>;
  /** Download an output or error file and parse it line by line, by custom_id. */
  results(
    fileId: string,
    requestedModel: (customId: string) => string,
    signal?: AbortSignal,
  ): Promise<Map<string, BatchLineResult>>;
  cancel(id: string): Promise<void>;
}
