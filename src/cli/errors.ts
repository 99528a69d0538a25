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
  const action = fs.syscall && /^(open|write|mkdir|rename|unlink|rmdir|copyfile|symlink)/.test(fs.syscall) ? "cannot write" : "cannot use";
  const hint =
    fs.code === "ENOSPC" || fs.code === "EDQUOT"
      ? "free some space (or choose another --out) and rerun; completed work is kept"
      : fs.code === "EACCES" || fs.code === "EPERM" || fs.code === "EROFS"
        ? "choose a directory you can write to (--out), or fix its permissions"
        : undefined;
  return new SkilloptError("store", `${action} ${fs.path}: ${FS_ERRORS[fs.code]} (${fs.code})`, 1, { cause: err, hint });
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

/** The `--json` shape of an error. */
export function errorJson(err: unknown): { error: { code: string; message: string; data: Record<string, unknown> } } {
  if (err instanceof SkilloptError) {
    return { error: { code: err.code, message: redactText(err.message), data: err.data } };
  }
  return { error: { code: "internal", message: redactText(err instanceof Error ? err.message : String(err)), data: {} } };
}

/** Exit code of a thrown value. */
export function exitCodeOf(err: unknown): number {
  return err instanceof SkilloptError ? err.exitCode : 1;
}
