import type { ChatRequest, ToolCall, Usage } from "../engine/ports.ts";

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
  complete(request: ChatRequest & { model: string }, opts: { signal?: AbortSignal; timeoutMs: number }): Promise<RawCompletion>;
  /** Release held resources (clients, temp dirs). */
  close?(): void | Promise<void>;
}
