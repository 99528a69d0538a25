/** Stable error codes. Every expected failure carries one. */
export type ErrorCode =
  | "usage"
  | "config"
  | "backend"
  | "store"
  | "staging"
  | "budget"
  | "data"
  | "unsupported"
  | "internal";

export interface ErrorOptions {
  hint?: string;
  cause?: unknown;
  data?: Record<string, unknown>;
}

/** Base class for every error the CLI knows how to render. */
export class SkilloptError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: number;
  readonly hint: string | undefined;
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, exitCode: number, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.hint = opts.hint;
    this.data = opts.data ?? {};
  }
}

/** Wrong flags, arguments or command names (exit 2). */
export class UsageError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("usage", message, 2, opts);
  }
}

export interface ConfigIssue {
  path: string;
  message: string;
}

/** A configuration file or override that cannot be used (exit 2). */
export class ConfigError extends SkilloptError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly col: number | undefined;
  readonly issues: ConfigIssue[];

  constructor(
    message: string,
    opts: ErrorOptions & { file?: string; line?: number; col?: number; issues?: ConfigIssue[] } = {},
  ) {
    super("config", message, 2, opts);
    this.file = opts.file;
    this.line = opts.line;
    this.col = opts.col;
    this.issues = opts.issues ?? [];
  }
}

export type BackendErrorKind =
  | "auth"
  | "not_found"
  | "bad_request"
  | "rate_limit"
  | "timeout"
  | "refused"
  | "dns"
  | "reset"
  | "http"
  | "protocol"
  | "exec"
  | "truncated";

/** A model call that failed; `retryable` tells the retry policy what to do. Never carries a key. */
export class BackendError extends SkilloptError {
  readonly kind: BackendErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(
    kind: BackendErrorKind,
    message: string,
    opts: ErrorOptions & { status?: number; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    super("backend", message, 1, opts);
    this.kind = kind;
    this.status = opts.status;
    this.retryable = opts.retryable ?? false;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** A budget cap (model.max_cost_usd, model.max_calls, --max-cost) was reached before a call (exit 1). */
export class BudgetError extends SkilloptError {
  readonly limit: "cost" | "calls";
  constructor(limit: "cost" | "calls", message: string, opts: ErrorOptions = {}) {
    super("budget", message, 1, opts);
    this.limit = limit;
  }
}

/** The run store could not be opened, migrated or written (exit 1). */
export class StoreError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("store", message, 1, opts);
  }
}

/** Sleep staging or adoption refused or failed (exit 1). */
export class StagingError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("staging", message, 1, opts);
  }
}

/** Input data (task files, splits, session files) that cannot be used (exit 2). */
export class DataError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("data", message, 2, opts);
  }
}

/** A feature that cannot run on this machine or is not built (exit 1). */
export class UnsupportedError extends SkilloptError {
  constructor(message: string, opts: ErrorOptions = {}) {
    super("unsupported", message, 1, opts);
  }
}

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
