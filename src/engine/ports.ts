import type { GenericSchema, InferOutput } from "valibot";
import type { BudgetFacts } from "../lib/index.ts";

/** Which side of training a model call serves. */
export type Role = "optimizer" | "target";

export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; url: string; detail?: "auto" | "low" | "high" };

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text of the arguments, as the model produced it. */
  arguments: string;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | ContentPart[];
  toolCalls?: ToolCall[];
  toolCallId?: string;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** One model call. Everything that changes the answer is in here, so it can key the call cache. */
export interface ChatRequest {
  messages: ChatMessage[];
  /** Stage label for accounting: analyst, merge, ranking, rewrite, rollout, judge, … */
  stage: string;
  model?: string;
  temperature?: number;
  maxTokens?: number;
  reasoningEffort?: string;
  tools?: ToolSpec[];
  /** The caller expects a JSON object in the reply. */
  json?: boolean;
  /**
   * The JSON Schema the reply must follow, sent as a structured-output constraint by backends that
   * support one (response_format json_schema); others ignore it. The reply is validated either way.
   */
  responseSchema?: { name: string; schema: Record<string, unknown> };
  /**
   * Distinguishes independent samples of the same prompt: calls that differ only in
   * sampleIndex are different calls (k repeated rollouts cost k calls); equal requests are one call.
   */
  sampleIndex?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

export interface ChatResponse {
  text: string;
  finishReason: "stop" | "length" | "tool_calls" | "content_filter" | "error" | "unknown";
  toolCalls: ToolCall[];
  usage: Usage;
  latencyMs: number;
  /** Dollars, or null when the model's price is unknown (never a silent 0). */
  costUsd: number | null;
  attempts: number;
  /** Served from the call cache: cost nothing this time. */
  cached: boolean;
  model: string;
}

/** Outcome of a structured call: a validated value, or the reason it was dropped. */
export type JsonResult<T> =
  | { ok: true; value: T; response: ChatResponse }
  | { ok: false; reason: string; response: ChatResponse | undefined };

/**
 * The model layer as the engine and Sleep see it.
 *
 * Implementations guarantee: bounded concurrency per role/endpoint, retries with backoff on
 * transient faults (never on auth/not-found/bad-request), a content-addressed call cache keyed on
 * every field of ChatRequest (including sampleIndex), budget caps checked before every call, and
 * accounting of every call (tokens, cost, stage). `chat` throws BackendError only for systemic
 * failures (bad key, unknown model, budget exhausted, retries exhausted); callers turn per-task
 * failures into scored results.
 */
/** What a round of independent work is for: an evaluation nothing waits on ("eval"), or the training loop ("train"). */
export type RoundPurpose = "eval" | "train";

/** One unit of a round (a rollout), wrapped so a batching implementation knows when it waits on a call. */
export type RoundTask = <R>(run: () => Promise<R>) => Promise<R>;

/** A model layer that may collect a round's calls into one provider batch (model.batch, sleep.batch). */
export interface RoundBatching {
  /**
   * Optional: whether calls made in rounds of this purpose go through a provider batch: the
   * evaluator then starts every rollout of a round at once.
   */
  batching?(purpose: RoundPurpose): boolean;
  /**
   * Optional: run one round of independent work. `task` wraps each unit (a rollout); an
   * implementation that batches submits the round's calls together once every unit is waiting on
   * one, and hands each its answer. Without batching it simply runs `fn`.
   */
  round?<T>(purpose: RoundPurpose, fn: (task: RoundTask) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

export interface ModelClient extends RoundBatching {
  chat(role: Role, request: ChatRequest, opts?: { signal?: AbortSignal }): Promise<ChatResponse>;
  /**
   * Ask for JSON, extract it from the text (fenced block, outermost object, tolerant repair),
   * validate against `schema`; on failure re-ask once with the validation error, then give up
   * with a recorded reason. A reply cut off by its token limit is never accepted.
   */
  chatJson<S extends GenericSchema>(
    role: Role,
    request: ChatRequest,
    schema: S,
    opts?: { signal?: AbortSignal },
  ): Promise<JsonResult<InferOutput<S>>>;
  /** The exec harness for the target role, when the target is an agent CLI; else undefined. */
  taskRunner(): TaskRunner | undefined;
}

export interface TrajectoryStep {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  toolName?: string;
}

export interface Trajectory {
  steps: TrajectoryStep[];
  finalAnswer: string;
  usage: Usage;
  costUsd: number | null;
  exitCode: number | null;
  timedOut: boolean;
  /** Set when the run failed; the task is then scored as a failure with this reason. */
  error?: string;
}

export interface AgentTask {
  id: string;
  /** The instruction given to the agent. */
  prompt: string;
  /** Files to place in the workspace before the run (relative path → content). */
  files?: Record<string, string | Uint8Array>;
  /** The agent may create or modify files in its workspace (artifact tasks); default read-only. */
  allowEdits?: boolean;
  /** One sentence for the skill's front matter `description` (benchmark-specific). */
  skillDescription?: string;
}

/**
 * An agent CLI that runs a whole task (claude_code_exec, codex_exec, …). Implementations create a
 * fresh temporary workspace, install the skill where that agent reads skills, enforce the timeout
 * by killing the process group, and always remove the workspace. `inspect` is called with the
 * workspace path before removal, so a benchmark can read files the agent produced.
 */
export interface TaskRunner {
  runTask(
    skill: string,
    task: AgentTask,
    opts?: { signal?: AbortSignal; inspect?: (workspace: string) => Promise<void> },
  ): Promise<Trajectory>;
}

/** Seeded randomness; the engine never touches Math.random. */
export interface Random {
  next(): number;
  int(maxExclusive: number): number;
  shuffle<T>(items: readonly T[]): T[];
  fork(label: string): Random;
}

export interface Clock {
  now(): number;
}

/** One entry of a rollout's trajectory, in the shapes of spec §1.3. */
export type TrajectoryEntry =
  | { type: "tool_call"; cmd: string; obs: string }
  | { step: number; action: string; env_feedback: string; reasoning?: string }
  | { role: string; content: string };

/**
 * The scored outcome of one task. A task that failed (model error, malformed output, timeout) is
 * still a result: hard = soft = 0 and `fail_reason` says why. Never throw for a per-task failure.
 */
export interface RolloutResult {
  id: string;
  /** 0..1; failure ⇔ hard < 1e-9. */
  hard: number;
  /** 0..1 partial credit. */
  soft: number;
  trajectory: TrajectoryEntry[];
  predicted_answer?: string;
  fail_reason?: string;
  n_turns?: number;
  question?: string;
  reference_text?: string;
  task_type?: string;
  [extra: string]: unknown;
}

/** A task as loaded from a split; `id` is unique within the benchmark. */
export interface TaskItem {
  id: string;
  [field: string]: unknown;
}

export interface Splits {
  train: TaskItem[];
  val: TaskItem[];
  test: TaskItem[];
}

/** What a benchmark gets to do its work: the model layer, its env config, and cancellation. */
export interface BenchmarkContext {
  model: ModelClient;
  /** The resolved `env` section (benchmark-specific keys pass through here). */
  env: Record<string, unknown>;
  /** Directory of the config file, for resolving relative data paths. */
  configDir: string;
  /** Per-run scratch directory the benchmark may write to. */
  workDir: string;
  /** Target model name and sampling settings from the config. */
  target: { model: string; maxTokens: number; reasoningEffort?: string; temperature?: number };
  signal?: AbortSignal;
  /** Seed for any randomness of the benchmark (choice shuffles etc.). */
  seed: number;
  /**
   * The environment snapshot of the config (shell variables over --env-file values). Benchmarks
   * read variables such as ALFWORLD_DATA or a search token from here, not from process.env.
   */
  environ?: Readonly<Record<string, string>>;
  /**
   * Seed of the batch this rollout belongs to: training batches have their own, evaluations use
   * the run seed. Per-batch transformations (LiveMath choice shuffles) use it; absent → `seed`.
   */
  batchSeed?: number;
  /**
   * "train" for optimisation rollouts (SpreadsheetBench multi mode then gives gold-verified
   * feedback), "eval" for selection/test/eval-only. Absent → inferred from the item's split.
   */
  phase?: "train" | "eval";
}

/**
 * A benchmark: a task set, how the target attempts one task, and how it is scored.
 *
 * Contract: `loadSplits` is deterministic for a config; `rollout` scores exactly one task, puts
 * the skill where the target reads it (system prompt for chat targets, the TaskRunner for exec
 * targets), tags each model call with stage "rollout" and `sampleIndex` from its argument, and
 * returns a RolloutResult even when the attempt fails. The engine owns concurrency.
 */
export interface Benchmark {
  name: string;
  /** Initial skill used when `env.skill_init` is empty or names this benchmark's bundled default. */
  initialSkill: string;
  loadSplits(ctx: BenchmarkContext): Promise<Splits>;
  rollout(item: TaskItem, skill: string, ctx: BenchmarkContext, sampleIndex: number): Promise<RolloutResult>;
  /**
   * Optional: the rollout gets a skill package's whole text and lets the target read its files
   * with a tool (benchmarks/shared/skill-files.ts). Otherwise it gets what the target reads:
   * SKILL.md with the files it points to inlined (docs/packages.md).
   */
  readsSkillFiles?: boolean;
  /**
   * Model roles a rollout calls besides the target, for this env section (a judge evaluator runs on
   * the optimizer role), so `eval` sets them up and start-up checks them. Default: none.
   */
  rolesNeeded?(env: Record<string, unknown>): Role[];
  /** Optional custom rendering of a result for the optimizer; default renders the trajectory. */
  formatForOptimizer?(result: RolloutResult): string;
  /**
   * Optional: the only part of the skill this benchmark's tasks may train (trigger tasks train the
   * front matter's `description`). Edits outside it are refused with a reason, and a candidate that
   * changes anything else is rejected before it is evaluated. Absent → the whole skill.
   */
  editScope?: EditScope;
  /** Optional figures over a split's results (trigger precision/recall/F1), printed by `eval`. */
  splitMetrics?(results: readonly RolloutResult[]): Record<string, number | null>;
}

/** The editable part of a skill, for a benchmark that trains only that part (Benchmark.editScope). */
export interface EditScope {
  /** What may change, in words for prompts and refusal reasons ("the description in the SKILL.md front matter"). */
  label: string;
  /** The editable text of `skill`, or undefined when the skill has none. */
  read(skill: string): string | undefined;
  /** `skill` with its editable text replaced by `text` (normalised as the part requires). */
  write(skill: string, text: string): string;
}

/** Totals of the model calls made so far (from the model layer's ledger). */
export interface CallTotals {
  calls: number;
  cached: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** null when some call's price is unknown. */
  cost_usd: number | null;
  by_stage: Record<
    string,
    {
      calls: number;
      cached: number;
      prompt_tokens: number;
      completion_tokens: number;
      cost_usd: number | null;
      /** Structured (chatJson) results of this stage given up on as malformed or truncated; absent when not counted. */
      dropped?: number;
    }
  >;
}

/** Read access to call accounting, and the budget caps (max cost / max calls). */
export interface CallAccounting {
  snapshot(): CallTotals;
  /** A reason to stop before the next step (a budget cap reached), or undefined. */
  budgetExceeded(): BudgetFacts | undefined;
}
