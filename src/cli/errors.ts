import { ConfigError, SkilloptError, redactText } from "../lib/index.ts";

const FS_ERRORS: Record<string, string> = {
  ENOENT: "no such file or directory",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EROFS: "read-only file system",
  ENOTDIR: "a parent of this path is not a directory",
  EISDIR: "is a directory",
  EEXIST: "already exists (and is not what was expected here)",
  EMFILE: "too many open files",
  ENAMETOOLONG: "file name too long",
};

/** A Node/Bun file-system error (has `code` and `path`). */
function fsErrorOf(err: unknown): { code: string; path: string; syscall?: string } | undefined {
  if (!(err instanceof Error)) return undefined;
  const e = err as Error & { code?: unknown; path?: unknown; syscall?: unknown };
  if (typeof e.code !== "string" || !(e.code in FS_ERRORS) || typeof e.path !== "string") return undefined;
  return { code: e.code, path: e.path, syscall: typeof e.syscall === "string" ? e.syscall : undefined };
}

/** Turn an unexpected file-system failure into a clean failure that names the path. */
export function fromFsError(err: unknown): unknown {
  const fs = fsErrorOf(err);
  if (!fs) return err;
  const action =
    fs.syscall && /^(open|write|mkdir|rename|unlink|rmdir|copyfile|symlink)/.test(fs.syscall)
      ? "cannot write"
      : "cannot use";
  const hint =
    fs.code === "ENOSPC" || fs.code === "EDQUOT"
      ? "free some space (or choose another --out) and rerun; completed work is kept"
      : fs.code === "EACCES" || fs.code === "EPERM" || fs.code === "EROFS"
        ? "choose a directory you can write to (--out), or fix its permissions"
        : undefined;
  const data = { path: fs.path, fs_code: fs.code, ...(fs.syscall ? { syscall: fs.syscall } : {}) };
  return new SkilloptError("filesystem", `${action} ${fs.path}: ${FS_ERRORS[fs.code]} (${fs.code})`, 1, {
    cause: err,
    hint,
    data,
  });
}

/** Text for stderr: one line for known errors (plus a hint line), the stack under --debug. */
export function renderError(err: unknown, debug: boolean): string {
  if (err instanceof SkilloptError) {
    const prefix = err instanceof ConfigError ? "config error" : "error";
    const lines = [`${prefix}: ${redactText(err.message)}`];
    if (err.hint) lines.push(`  hint: ${redactText(err.hint)}`);
    if (debug && err.stack) lines.push(redactText(err.stack));
    if (debug && err.cause instanceof Error && err.cause.stack) lines.push(`cause: ${redactText(err.cause.stack)}`);
    return `${lines.join("\n")}\n`;
  }
  const message = err instanceof Error ? err.message : String(err);
  const lines = [`internal error (this is a bug, please report it): ${redactText(message)}`];
  if (debug && err instanceof Error && err.stack) lines.push(redactText(err.stack));
  else lines.push("  rerun with --debug for the stack trace");
  return `${lines.join("\n")}\n`;
}

/** Every string inside a value, redacted; the shape is kept. */
function redactDeep(value: unknown): unknown {
  if (typeof value === "string") return redactText(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  }
  return value;
}

interface ErrorJson {
  error: { code: string; exit_code: number; message: string; hint?: string; data: Record<string, unknown> };
}

/** The `--json` shape of an error: derived from the error's typed `data`, so no fact is dropped. */
export function errorJson(err: unknown): ErrorJson {
  if (err instanceof SkilloptError) {
    const out: ErrorJson["error"] = {
      code: err.code,
      exit_code: err.exitCode,
      message: redactText(err.message),
      data: redactDeep(err.data) as Record<string, unknown>,
    };
    if (err.hint) out.hint = redactText(err.hint);
    return { error: out };
  }
  const message = redactText(err instanceof Error ? err.message : String(err));
  // An unexpected throw: the one fact known is what kind of value it was.
  const data = { name: err instanceof Error ? err.name : typeof err };
  return { error: { code: "internal", exit_code: 1, message, data } };
}

/** Exit code of a thrown value. */
export function exitCodeOf(err: unknown): number {
  return err instanceof SkilloptError ? err.exitCode : 1;
}
