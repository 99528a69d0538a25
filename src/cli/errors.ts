import { ConfigError, SkilloptError, redactText } from "../lib/index.ts";

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
