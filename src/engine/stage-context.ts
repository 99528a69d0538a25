import type { GenericSchema, InferOutput } from "valibot";
import { BackendError, type BackendErrorKind } from "../lib/index.ts";
import type { EngineEvents } from "./events.ts";
import type { GateSettings } from "./gate.ts";
import type { PromptSet } from "./messages.ts";
import type { Benchmark, ModelClient } from "./ports.ts";
import type { EngineConfig, LrControlMode, UpdateMode } from "./settings.ts";

/** What every stage of a step needs. */
export interface StageContext {
  cfg: EngineConfig;
  mode: UpdateMode;
  lrControl: LrControlMode;
  model: ModelClient;
  prompts: PromptSet;
  bench: Benchmark;
  events: EngineEvents;
  gate: GateSettings;
  signal?: AbortSignal | undefined;
}

/** Kinds of backend failure that lose one optimizer call, not the run. */
const CALL_LOCAL = new Set<BackendErrorKind>(["truncated", "protocol", "bad_request"]);

/**
 * One structured optimizer call. A malformed or unusable answer becomes `undefined` (the stage
 * falls back, as upstream does); systemic failures (budget, auth, endpoint down after retries)
 * propagate so the run stops at a consistent point and can be resumed.
 */
export async function askOptimizer<S extends GenericSchema>(
  sc: StageContext,
  stage: string,
  system: string,
  user: string,
  schema: S,
  opts: { maxTokens?: number; reasoningEffort?: string } = {},
): Promise<InferOutput<S> | undefined> {
  const effort = opts.reasoningEffort ?? sc.cfg.model.reasoning_effort;
  try {
    const res = await sc.model.chatJson(
      "optimizer",
      {
        messages: [
          { role: "system", content: system },
          { role: "user", content: user },
        ],
        stage,
        model: sc.cfg.model.optimizer,
        maxTokens: opts.maxTokens ?? 16384,
        json: true,
        ...(effort ? { reasoningEffort: effort } : {}),
      },
      schema,
      sc.signal ? { signal: sc.signal } : {},
    );
    if (res.ok) return res.value;
    sc.events.emit({ type: "warning", code: "optimizer_unusable", stage, reason: res.reason });
    return undefined;
  } catch (err) {
    if (err instanceof BackendError && CALL_LOCAL.has(err.kind)) {
      sc.events.emit({ type: "warning", code: "optimizer_failed", stage, kind: err.kind, error: err.message });
      return undefined;
    }
    throw err;
  }
}
