import { isSecretKey } from "./redact.ts";

/** Stable error codes. Every expected failure carries one. */
type ErrorCode =
  | "usage"
  | "config"
  | "backend"
  | "store"
  | "filesystem"
  | "staging"
  | "handoff_pending"
  | "budget"
  | "night_budget"
  | "data"
  | "unsupported"
  | "no_answer"
  | "model_unfit"
  | "internal";

interface ErrorOptions {
  hint?: string;
  cause?: unknown;
  data?: Record<string, unknown>;
}

/**
 * Base class for every error the CLI knows how to render. The typed facts of an error live in
 * `data` (file, line, key path, backend kind, status, limit …): `--json` prints them as they are,
 * and subclasses expose them as read-only views of `data`, never as a second copy.
 */
export class SkilloptError<D extends Record<string, unknown> = Record<string, unknown>> extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly hint: string | undefined;
  readonly data: D;

  constructor(code: ErrorCode, message: string, exitCode: number, opts: ErrorOptions & { data?: D } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.hint = opts.hint;
    this.data = opts.data ?? ({} as D);
  }
}

/** Drop the keys whose value is undefined, so `--json` shows only facts that are known. */
function defined<T extends Record<string, unknown>>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

/** The typed facts of a usage error: which command, which flag, what would do. */
interface UsageFields {
  /** The command as typed, e.g. "skillopt train" (the CLI boundary fills it when the thrower does not know it). */
  command?: string;
  /** The flag at fault without its dashes ("max-cost"), or the positional argument's name ("agent"). */
  flag?: string;
  /** What would be accepted, in a few machine-friendly words ("integer 0-65535"). */
  expected?: string;
  /** The accepted values, when they are a short list. */
  choices?: string[];
  /** The closest accepted name (the "did you mean"). */
  suggestion?: string;
  /** The file or directory the error is about. */
  path?: string;
  /** The key inside that file at fault (dot path). */
  key?: string;
  /** Flags that cannot be given together. */
  conflicts?: string[];
  /** The live process that holds what the command wanted (a run being written). */
  pid?: number;
}

/** A usage error's `data`: its facts, and what was given ("[REDACTED]" when the flag can carry a secret). */
interface UsageErrorData extends UsageFields, Record<string, unknown> {
  value?: string | number | boolean;
}

/** What a thrower knows: at least the flag (or argument) at fault, the command, or the file in the way. */
type UsageFacts = UsageFields & { value?: unknown } & ({ flag: string } | { command: string } | { path: string });

/** Primitive values stay as they are; anything else becomes its text. A secret-bearing flag's value is never kept. */
function usageValue(flag: string | undefined, value: unknown): UsageErrorData["value"] {
  if (value === undefined || value === null) return undefined;
  if (flag !== undefined && isSecretKey(flag)) return "[REDACTED]";
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  return String(value);
}

/** Wrong flags, arguments or command names (exit 2). The facts live in `data` (see UsageErrorData). */
export class UsageError extends SkilloptError<UsageErrorData> {
  constructor(message: string, facts: UsageFacts, opts: Omit<ErrorOptions, "data"> = {}) {
    const data = defined<UsageErrorData>({ ...facts, value: usageValue(facts.flag, facts.value) });
    super("usage", message, 2, { hint: opts.hint, cause: opts.cause, data });
  }
  get flag(): string | undefined {
    return this.data.flag;
  }
  /** Name the command the error happened in, unless the thrower already did (the CLI boundary calls this). */
  inCommand(command: string): this {
    if (this.data.command !== undefined) return this;
    // The command leads, as when the thrower names it.
    const facts = { ...this.data };
    for (const k of Object.keys(facts)) delete this.data[k];
    Object.assign(this.data, { command }, facts);
    return this;
  }
}

export interface ConfigIssue {
  path: string;
  message: string;
}

interface ConfigErrorData extends Record<string, unknown> {
  file?: string;
  line?: number;
  column?: number;
  /** Dot path of the offending key, when there is one. */
  key?: string;
  issues: ConfigIssue[];
  /** The command-line flag that carried the bad input (set, cfg-options, config), what it was given, and a did-you-mean. */
  flag?: string;
  value?: string;
  suggestion?: string;
  /** A program the config asks for that is not installed (an agent CLI), and the backend that runs it. */
  program?: string;
  backend?: string;
}

/** A configuration file or override that cannot be used (exit 2). */
export class ConfigError extends SkilloptError<ConfigErrorData> {
  constructor(
    message: string,
    opts: ErrorOptions & { file?: string; line?: number; col?: number; key?: string; issues?: ConfigIssue[] } = {},
  ) {
    const data = defined<ConfigErrorData>({
      ...opts.data,
      file: opts.file,
      line: opts.line,
      column: opts.col,
      key: opts.key ?? (opts.issues?.length === 1 ? opts.issues[0]?.path : undefined),
      issues: opts.issues ?? [],
    });
    super("config", message, 2, { hint: opts.hint, cause: opts.cause, data });
  }
  get file(): string | undefined {
    return this.data.file;
  }
  get line(): number | undefined {
    return this.data.line;
  }
  get col(): number | undefined {
    return this.data.column;
  }
  get issues(): ConfigIssue[] {
    return this.data.issues;
  }
}

/** Every kind of backend failure (a record's picklist reads them from here). */
export const BACKEND_ERROR_KINDS = [
  "auth",
  "not_found",
  "bad_request",
  "rate_limit",
  "timeout",
  "refused",
  "dns",
  "reset",
  "http",
  "protocol",
  "exec",
  "truncated",
  "context_length",
] as const;
export type BackendErrorKind = (typeof BACKEND_ERROR_KINDS)[number];

interface BackendErrorData extends Record<string, unknown> {
  kind: BackendErrorKind;
  status?: number;
  retryable: boolean;
  retryAfterMs?: number;
  /** The backend the call went to (openai, azure, claude, …). */
  backend?: string;
  /** The endpoint's host ("api.openai.com", "127.0.0.1:8080"); an agent CLI's endpoint is "exec:NAME". */
  host?: string;
  /** The role whose call failed (target, optimizer). */
  role?: string;
  model?: string;
}

/** Where a failed call went. */
type BackendWhere = Pick<BackendErrorData, "backend" | "host" | "role" | "model">;

/** A model call that failed; `retryable` tells the retry policy what to do. Never carries a key. */
export class BackendError extends SkilloptError<BackendErrorData> {
  constructor(
    kind: BackendErrorKind,
    message: string,
    opts: ErrorOptions & { status?: number; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    const data = defined<BackendErrorData>({
      ...opts.data,
      kind,
      status: opts.status,
      retryable: opts.retryable ?? false,
      retryAfterMs: opts.retryAfterMs,
    });
    super("backend", message, 1, { hint: opts.hint, cause: opts.cause, data });
  }
  get kind(): BackendErrorKind {
    return this.data.kind;
  }
  get status(): number | undefined {
    return this.data.status;
  }
  get retryable(): boolean {
    return this.data.retryable;
  }
  get retryAfterMs(): number | undefined {
    return this.data.retryAfterMs;
  }
  /** Name where the call went, keeping what the thrower already named (the model client calls this). */
  at(where: BackendWhere): this {
    for (const [k, v] of Object.entries(where)) if (v !== undefined && this.data[k] === undefined) this.data[k] = v;
    return this;
  }
}

/** The host of an endpoint URL, without credentials or path; a non-URL endpoint ("exec:claude") as it is. */
export function endpointHost(endpoint: string): string | undefined {
  if (!endpoint) return undefined;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(endpoint)) return endpoint;
  try {
    return new URL(endpoint).host || undefined;
  } catch {
    return undefined;
  }
}

/** Where a budget cap was met: before the next step, before a paid call of a stage, or by a batch's worst case. */
type BudgetAt =
  | { kind: "step_boundary" }
  | { kind: "call"; stage: string }
  | { kind: "batch"; requests: number; worst_usd: number | null };

/** A budget cap's facts: which cap, how much of it is spent (calls or dollars), the cap, and where it was met. */
export interface BudgetFacts {
  limit: "cost" | "calls";
  spent: number;
  cap: number;
  at: BudgetAt;
}

/** The words of a budget cap being met (the BudgetError's message, and a stopped run's reason). */
export function budgetMessage(b: BudgetFacts): string {
  const { at } = b;
  if (b.limit === "calls") {
    if (at.kind === "step_boundary") return `call budget reached (${b.spent} of model.max_calls=${b.cap})`;
    if (at.kind === "call")
      return `call budget reached: ${b.spent} of ${b.cap} model calls made (before a ${at.stage} call)`;
    return `call budget: a batch of ${at.requests} requests would pass model.max_calls=${b.cap} (${b.spent - at.requests} made before it)`;
  }
  const spent = `$${b.spent.toFixed(4)}`;
  if (at.kind === "step_boundary") return `cost budget reached (${spent} of $${b.cap})`;
  if (at.kind === "call") return `cost budget reached: ${spent} of $${b.cap} spent (before a ${at.stage} call)`;
  return `cost budget: a batch of ${at.requests} requests could cost up to $${(at.worst_usd ?? 0).toFixed(4)} (every prompt at 3 bytes per token, every \
answer at its token limit), and ${spent} of $${b.cap} is spent`;
}

/** A stop condition of `train:` that was met (beside the call and money caps): what, its key and limit, the measured value. */
export interface StopFacts {
  condition: "wall_time" | "patience" | "target_score";
  /** The config key that set it, for messages: `train.patience`. */
  key: string;
  limit: number;
  /** Seconds so far, steps since the best skill last improved, or the best selection score. */
  value: number;
}

/** The words of a stop condition being met (a stopped run's reason, the console's warning). */
export function stopMessage(s: StopFacts): string {
  switch (s.condition) {
    case "target_score":
      return `target selection score reached (best ${s.value.toFixed(4)} ≥ ${s.key}=${s.limit})`;
    case "patience":
      return `no better skill on selection for ${s.value} step${s.value === 1 ? "" : "s"} (${s.key}=${s.limit})`;
    case "wall_time":
      return `wall-time limit reached (${Math.round(s.value)} s of ${s.key}=${s.limit})`;
  }
}

type BudgetErrorData = BudgetFacts & Record<string, unknown>;

/** A budget cap (model.max_cost_usd, model.max_calls, --max-cost) was reached before a call (exit 1). */
export class BudgetError extends SkilloptError<BudgetErrorData> {
  constructor(facts: BudgetFacts, opts: Omit<ErrorOptions, "data"> = {}) {
    super("budget", budgetMessage(facts), 1, { hint: opts.hint, cause: opts.cause, data: { ...facts } });
  }
  get limit(): "cost" | "calls" {
    return this.data.limit;
  }
}

interface NoAnswerErrorData extends Record<string, unknown> {
  /** What gave no answer: the target, the optimizer (a judge), or the user's evaluator command. */
  role: "target" | "optimizer" | "evaluator";
  stage: string;
  errored: number;
  total: number;
  /** The last error (clipped). */
  reason: string;
}

/**
 * A stage of a run got no answers where it needed them: the endpoint refused, answered 5xx or
 * timed out after retries, or an agent CLI crashed, exited non-zero or printed nothing parseable
 * (exit 1). Never a score: the run stops at its last committed step and can be resumed.
 */
export class NoAnswerError extends SkilloptError<NoAnswerErrorData> {
  constructor(message: string, opts: ErrorOptions & { data: NoAnswerErrorData }) {
    super("no_answer", message, 1, opts);
  }
}

interface ModelUnfitErrorData extends Record<string, unknown> {
  /** The role whose model cannot do the job: the optimizer (analyst, merge, …, a judge) or the target. */
  role: "optimizer" | "target";
  /** The stage whose calls failed (analyst, merge, judge, sleep replay, …). */
  stage: string;
  /** unusable_answers: every answer of the stage was unusable, step after step; context_length: a prompt does not fit. */
  cause: "unusable_answers" | "context_length";
  /** The model as the caller knows it, when it does (the CLI names the role's backend, model and endpoint). */
  model?: string;
  /** How many consecutive steps (or calls) had only unusable answers. */
  steps?: number;
  /** Why the last answer was unusable (invalid_json: …, truncated: …). */
  reason?: string;
  /** A short, redacted sample of what the model last answered. */
  sample?: string;
  /** The prompt's size and the model's context window, in tokens, when known. */
  prompt_tokens?: number;
  context_tokens?: number;
}

/**
 * A model cannot do its role's job: its answers never parse, or its context window cannot hold the
 * prompts (exit 1). The run stops at its last committed step; once the role's model is changed,
 * `--resume` continues from there.
 */
export class ModelUnfitError extends SkilloptError<ModelUnfitErrorData> {
  constructor(message: string, opts: ErrorOptions & { data: ModelUnfitErrorData }) {
    super("model_unfit", message, 1, { ...opts, data: defined({ ...opts.data }) });
  }
}

/**
 * A prompt a model refused as longer than its context, as the error that stops what depends on it:
 * no later call of the stage can fit either. `who` names the model at the head of the message
 * (the engine's runner adds it itself); `hint` says what to change for this role.
 */
export function contextTooSmall(
  err: BackendError,
  o: { role: "optimizer" | "target"; stage: string; hint: string; who?: string },
): ModelUnfitError {
  const prompt = typeof err.data.prompt_tokens === "number" ? err.data.prompt_tokens : undefined;
  const limit = typeof err.data.context_tokens === "number" ? err.data.context_tokens : undefined;
  const size =
    prompt !== undefined && limit !== undefined
      ? `${prompt} tokens against a context of ${limit}`
      : limit !== undefined
        ? `its context is ${limit} tokens`
        : "the server refused it as longer than the model's context";
  return new ModelUnfitError(`${o.who ? `${o.who} ` : ""}cannot hold the ${o.stage} prompt (${size})`, {
    cause: err,
    hint: o.hint,
    data: {
      role: o.role,
      stage: o.stage,
      cause: "context_length",
      ...(prompt !== undefined ? { prompt_tokens: prompt } : {}),
      ...(limit !== undefined ? { context_tokens: limit } : {}),
    },
  });
}

/**
 * The prompt size and context window a context-length refusal states, where its text gives them
 * (vLLM and OpenAI: "maximum context length is N tokens … resulted in M tokens"; llama.cpp's
 * n_prompt_tokens / n_ctx fields are passed in by the backend).
 */
export function contextFacts(text: string): { prompt_tokens?: number; context_tokens?: number } {
  const limit =
    /maximum context length is (\d+)|context (?:size|window|length)(?: is| of)? (\d+)|n_ctx\D{0,4}(\d+)/i.exec(text);
  // vLLM: "you requested 8500 tokens (500 in the messages, 8000 in the completion)": the prompt is the messages.
  const prompt =
    /(\d+) in the messages/i.exec(text) ??
    /(?:resulted in|requested|prompt (?:has|is|of)|n_prompt_tokens\D{0,4})\s*(\d+)/i.exec(text);
  const n = (m: RegExpExecArray | null) => {
    const x = m?.slice(1).find((g) => g !== undefined);
    return x === undefined ? undefined : Number(x);
  };
  return defined({ prompt_tokens: n(prompt), context_tokens: n(limit) });
}

/** An error kind with a message, a hint and its facts of type D (required: `--json` prints them): code and exit code are fixed. */
function plainError<D extends Record<string, unknown>>(code: ErrorCode, exitCode: number) {
  return class extends SkilloptError<D> {
    constructor(message: string, opts: ErrorOptions & { data: D }) {
      super(code, message, exitCode, { ...opts, data: defined({ ...opts.data }) });
    }
  };
}

/** An error kind whose typed facts are required: its code and exit code are fixed. */
function factsError<D extends Record<string, unknown>>(code: ErrorCode, exitCode: number) {
  return class extends SkilloptError<D> {
    constructor(message: string, facts: D, opts: Omit<ErrorOptions, "data"> = {}) {
      super(code, message, exitCode, { hint: opts.hint, cause: opts.cause, data: defined({ ...facts }) });
    }
  };
}

interface StoreErrorData extends Record<string, unknown> {
  /** The SQLite file. */
  path: string;
  /** What went wrong with it. */
  problem: "open" | "write" | "unusable" | "corrupt" | "newer_version";
  /** SQLite's or the OS's error code (SQLITE_FULL, SQLITE_NOTADB, …), when there is one. */
  sqlite_code?: string;
  /** The file's schema version and the newest this build understands (problem newer_version). */
  version?: number;
  supported?: number;
}

/** The run store could not be opened, migrated or written (exit 1). */
export class StoreError extends factsError<StoreErrorData>("store", 1) {}

/** The `code` of a thrown SQLite or system error, when it has one. */
export function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code !== "" ? code : undefined;
}

/** The facts of a Sleep staging error, where the thrower knows them. */
interface StagingErrorData extends Record<string, unknown> {
  /** What was refused, as the Sleep commands' `--json` failure names it. */
  kind?:
    | "adoption_refused"
    | "invalid_handoff_answer"
    | "invalid_selection"
    | "invalid_staging"
    | "no_staged_skills"
    | "nothing_to_rollback"
    | "rollback_refused"
    | "unreadable"
    | "unsafe_path"
    | "untrusted_handoff"
    | "untrusted_night";
  /** The file or folder at fault (a live file, a staged file, a lock, a night folder). */
  path?: string;
  /** The live process holding it (a lock). */
  pid?: number;
  /** What went wrong, as a word, where `kind` does not say it: empty_proposal, name_collision, scheduler_failed, unsafe_config. */
  problem?: string;
  /** The skill a proposal is for. */
  skill?: string;
  /** The program that failed (crontab, schtasks) and its exit code. */
  program?: string;
  exit_code?: number;
}

/** Sleep staging or adoption refused or failed (exit 1). */
export class StagingError extends plainError<StagingErrorData>("staging", 1) {}

/** The facts of a data error, where the thrower knows them. */
interface DataErrorData extends Record<string, unknown> {
  /** The file (or folder) at fault. */
  path?: string;
  /** 1-based line in it. */
  line?: number;
  /** The flag or config key that named the file ("--skill", "env.data_path"). */
  input?: string;
  /** The item at fault inside the file: its id, or its 0-based index when it has no id. */
  item?: string | number;
  /** The item's field that is missing or wrong ("question", "id", "expectations"). */
  field?: string;
  /** The split (train, val, test) the item or the emptiness is in. */
  split?: string;
  /** Every problem found in the file ("line 3: …"), when it is checked as a whole; the other fields are the first's. */
  problems?: string[];
  /**
   * What is wrong, as a word: not_found, permission, not_regular_file, too_large, unreadable, invalid_json,
   * missing_field, invalid_field, duplicate_id, not_object, empty_split, unmappable, outside_workspace, …
   */
  problem?: string;
}

/** Where in a data file an item sits, as a loader knows it (spread into a DataError's data). */
export type DataAt = Pick<DataErrorData, "path" | "line" | "item">;

/** Input data (task files, splits, session files) that cannot be used (exit 2). */
export class DataError extends plainError<DataErrorData>("data", 2) {}

interface UnsupportedErrorData extends Record<string, unknown> {
  /** What cannot run, in a word or two: a benchmark, a backend, a mode ("alfworld", "sim backend"). */
  feature: string;
  /** What it would need: a program, a module or a setting ("python3 with openpyxl", "env.mode=single"). */
  needs?: string;
  /** The config key whose value asks for it (dot path), and that value. */
  key?: string;
  value?: string;
  backend?: string;
  role?: string;
}

/** A feature that cannot run on this machine or is not built (exit 1). */
export class UnsupportedError extends factsError<UnsupportedErrorData>("unsupported", 1) {}

/** A bug: an invariant that should never break. */
export class InternalError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("internal", `internal error (this is a bug, please report it): ${message}`, 1, opts);
  }
}

/** Message of any thrown value, for contexts that only need text. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
