import type { GenericSchema, InferOutput } from "valibot";
import { answerSample, BackendError, type BackendErrorKind, contextTooSmall, ModelUnfitError } from "../lib/index.ts";
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
  /** What each stage's optimizer calls gave during the current step (the trainer reads it after the step). */
  tally?: AnswerTally;
}

/** One stage's optimizer calls in a step: how many, how many gave nothing usable, and the last unusable one. */
interface StageTally {
  calls: number;
  unusable: number;
  reason?: string;
  sample?: string;
}

type AnswerTally = Map<string, StageTally>;

function count(sc: StageContext, stage: string, unusable?: { reason: string; text?: string | undefined }): void {
  if (!sc.tally) return;
  const t = sc.tally.get(stage) ?? { calls: 0, unusable: 0 };
  t.calls += 1;
  if (unusable) {
    t.unusable += 1;
    t.reason = unusable.reason;
    const sample = answerSample(unusable.text);
    if (sample) t.sample = sample;
    else delete t.sample;
  }
  sc.tally.set(stage, t);
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
  opts: {
    maxTokens?: number;
    reasoningEffort?: string;
    /** Why a valid answer still cannot be used (it proposes nothing at all), or undefined when it can. */
    empty?: (value: InferOutput<S>) => string | undefined;
  } = {},
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
    const empty = res.ok ? opts.empty?.(res.value) : undefined;
    if (res.ok && !empty) {
      count(sc, stage);
      return res.value;
    }
    if (res.ok) {
      count(sc, stage, { reason: empty!, text: res.response.text });
      sc.events.emit({ type: "warning", code: "optimizer_unusable", stage, reason: empty! });
      return undefined;
    }
    count(sc, stage, { reason: res.reason, text: res.response?.text });
    sc.events.emit({ type: "warning", code: "optimizer_unusable", stage, reason: res.reason });
    return undefined;
  } catch (err) {
    if (err instanceof BackendError && err.kind === "context_length")
      throw contextTooSmall(err, { role: "optimizer", stage, hint: CONTEXT_FIX });
    if (err instanceof BackendError && CALL_LOCAL.has(err.kind)) {
      count(sc, stage, { reason: `${err.kind}: ${err.message}` });
      sc.events.emit({ type: "warning", code: "optimizer_failed", stage, kind: err.kind, error: err.message });
      return undefined;
    }
    throw err;
  }
}

/** What to change when the optimizer's model cannot do the job (the error's hint). */
const OPTIMIZER_FIX =
  "use a stronger optimizer model (model.optimizer_backend / model.optimizer), give answers more room " +
  "(model.optimizer_openai_compatible_max_tokens) or send smaller prompts (a smaller train.batch_size or gradient.minibatch_size)";

/** What to change when the optimizer's model cannot hold a prompt (the error's hint). */
const CONTEXT_FIX =
  "use an optimizer model with a larger context (model.optimizer_backend / model.optimizer, or the server's context setting), " +
  "or send smaller prompts (a smaller gradient.minibatch_size or train.batch_size)";

/**
 * Stages whose unusable answers leave a step nothing to try: the analysts' patches and the
 * rewrite. The others fall back (merge to concatenation, ranking to the merged order, the
 * autonomous learning rate to the schedule), so the run can still learn without them.
 */
const WITHOUT_FALLBACK = new Set(["analyst", "rewrite"]);

/** Consecutive steps after which a stage whose every optimizer answer was unusable stops the run. */
const UNUSABLE_STEPS = 2;

/**
 * Counts, per stage, the consecutive steps in which every optimizer call of the stage gave nothing
 * usable (a stage not called in a step leaves its count as it was; one usable answer resets it).
 */
export class UnusableWatch {
  private readonly streak = new Map<string, number>();
  constructor(private readonly limit = UNUSABLE_STEPS) {}

  /** After a step: the error to stop with once a stage reached the limit, else undefined. */
  afterStep(tally: AnswerTally): ModelUnfitError | undefined {
    for (const [stage, t] of tally) {
      if (!t.calls || !WITHOUT_FALLBACK.has(stage)) continue;
      const n = t.unusable === t.calls ? (this.streak.get(stage) ?? 0) + 1 : 0;
      this.streak.set(stage, n);
      if (n < this.limit) continue;
      const said = t.sample ? `; it answered: "${t.sample}"` : "";
      return new ModelUnfitError(
        `gave no usable ${stage} answer in ${n} consecutive steps (${t.calls} of ${t.calls} calls in the last; ${t.reason ?? "unusable"})${said}`,
        {
          hint: OPTIMIZER_FIX,
          data: {
            role: "optimizer",
            stage,
            cause: "unusable_answers",
            steps: n,
            ...(t.reason ? { reason: t.reason } : {}),
            ...(t.sample ? { sample: t.sample } : {}),
          },
        },
      );
    }
    return undefined;
  }
}
