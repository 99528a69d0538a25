import type { CliOutcome } from "./children.ts";
import type { ToolOutcome } from "./server.ts";

const asObject = (x: unknown): Record<string, unknown> | undefined =>
  typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    return asObject(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** The last line a child wrote to stderr that says something (its error line, when it failed). */
export function lastLine(stderr: string): string | undefined {
  return stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("hint:"))
    .pop();
}

/**
 * A CLI child's `--json` outcome as a tool outcome. Failures keep the CLI's own one-line message:
 * `{"error":{message}}` (the error boundary's document) or `{ok:false,error,message}` (Sleep's);
 * any other JSON document is the command's result, whatever its exit code (eval below
 * --fail-under, a Sleep review waiting on handoff answers).
 */
export function toolOutcome(command: string, out: CliOutcome): ToolOutcome {
  const doc = parseJson(out.stdout);
  const err = asObject(doc?.error);
  if (err && typeof err.message === "string") {
    const hint = typeof err.hint === "string" ? err.hint : undefined;
    // The error's typed facts (flag, path, key, backend kind …) travel as they are.
    const facts = asObject(err.data);
    return {
      ok: false,
      message: err.message,
      data: {
        command,
        exit_code: out.code,
        code: err.code ?? null,
        message: err.message,
        ...(hint ? { hint } : {}),
        ...(facts && Object.keys(facts).length ? { facts } : {}),
      },
    };
  }
  if (doc && doc.ok === false) {
    const message = `[sleep] ${String(doc.error)}: ${String(doc.message ?? "")}`;
    return { ok: false, message, data: { command, exit_code: out.code, ...doc } };
  }
  if (doc) return { ok: true, data: out.code === 0 ? doc : { ...doc, exit_code: out.code } };
  if (out.code === 0) return { ok: true, data: { output: out.stdout } };
  const line = lastLine(out.stderr) ?? `exited with code ${out.code} and printed nothing`;
  return { ok: false, message: line, data: { command, exit_code: out.code, message: line } };
}
