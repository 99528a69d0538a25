import type { ChatRequest, ChatResponse } from "../engine/index.ts";
import { hashJson } from "../lib/index.ts";
import type { ChatBackend } from "./types.ts";

/** What the call cache keeps of a response (no usage or cost: a hit costs nothing). */
export interface StoredResponse {
  text: string;
  finishReason: ChatResponse["finishReason"];
  toolCalls: ChatResponse["toolCalls"];
  model: string;
  /**
   * The call's prompt and completion tokens as its provider reported them, and the dollars it
   * reported charging when it did (absent in entries stored before, or when it reported no usage).
   */
  usage?: [number, number] | [number, number, number];
  /**
   * Who paid for this answer and what its ledger row counted, written with the answer by a run
   * whose ledger is persisted: a kill -9 between the answer's write (the cache's side file) and the
   * ledger row's (the run store's) would otherwise lose the paid call from the run's count. Absent
   * in entries stored before, and for calls of a client without a ledger store. Never a prompt.
   */
  paid?: PaidMark;
}

/**
 * [ledger, session, at, attempts, latency ms, prompt, completion, cached and reasoning tokens, cost
 * (null: unknown)]: the name of the paying run's ledger (ledgerName), a random name of its process,
 * and the facts of its ledger row that the cache does not already hold (at: ms since the epoch).
 */
export type PaidMark = [string, string, number, number, number, number, number, number, number, number | null];

/**
 * Content address of a call: backend, endpoint, model, messages, every sampling parameter, tools,
 * the JSON flag and the sample index. The stage is an accounting label and not part of it.
 */
export function cacheKey(backend: ChatBackend, req: ChatRequest & { model: string }): string {
  return hashJson({
    v: 1,
    backend: backend.name,
    endpoint: backend.endpoint,
    salt: backend.cacheSalt ?? "",
    model: req.model,
    messages: req.messages,
    temperature: req.temperature,
    maxTokens: req.maxTokens,
    reasoningEffort: req.reasoningEffort,
    tools: req.tools,
    json: req.json ?? false,
    // Only present when the backend sends it: a constrained answer is a different answer.
    ...(req.responseSchema ? { responseSchema: req.responseSchema } : {}),
    sampleIndex: req.sampleIndex ?? 0,
  });
}
