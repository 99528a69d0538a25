import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChatMessage, Usage } from "../../engine/index.ts";
import { BackendError, redactText } from "../../lib/index.ts";
import { type ProcessResult, runProcess } from "../exec/process.ts";
import type { RawCompletion } from "../types.ts";

const ZERO_USAGE: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, reasoningTokens: 0 };

export function textOf(m: ChatMessage): string {
  return typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

/** System text, and the conversation flattened into one prompt (spec §7.5 history bullets). */
export function flattenMessages(messages: ChatMessage[]): { system: string; prompt: string } {
  const system = messages
    .filter((m) => m.role === "system")
    .map(textOf)
    .join("\n\n");
  const convo = messages.filter((m) => m.role !== "system");
  const last = convo[convo.length - 1];
  if (convo.length <= 1) return { system, prompt: last ? textOf(last) : "" };
  const history = convo.slice(0, -1).map((m) => {
    if (m.role === "assistant") return `- Assistant: ${textOf(m)}`;
    if (m.role === "tool") return `- Tool result (tool_call_id=${m.toolCallId ?? ""}): ${textOf(m)}`;
    return `- User: ${textOf(m)}`;
  });
  return {
    system,
    prompt: `History:\n${history.join("\n")}\n\nLatest request:\n${last ? textOf(last) : ""}\n\nAnswer the latest request.`,
  };
}

/** A fresh empty directory, removed by the returned function (errors ignored: best effort). */
function scratchDir(prefix: string): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** What to spawn for one CLI chat call (the cwd, time limit and abort signal come from the call). */
interface CliSpawn {
  argv: string[];
  env: Record<string, string>;
  stdin?: string;
}

/**
 * One CLI chat call in a fresh empty scratch directory (its cwd, removed afterwards). The caller's
 * abort rethrows its reason; `reported` may raise an error the CLI printed, before the exit status
 * is judged; a timeout or a non-zero exit is a classified BackendError (cliFailure); otherwise
 * `answer` reads the reply from the output (and the directory, which still exists).
 */
export async function cliChatCall(
  call: { name: string; dirPrefix: string; signal: AbortSignal | undefined; timeoutMs: number },
  spawn: (dir: string) => CliSpawn,
  answer: (stdout: string, dir: string) => RawCompletion,
  reported?: (stdout: string) => void,
): Promise<RawCompletion> {
  const { name, signal, timeoutMs } = call;
  const dir = scratchDir(call.dirPrefix);
  try {
    const result = await runProcess({ ...spawn(dir.path), cwd: dir.path, timeoutMs, ...(signal ? { signal } : {}) });
    if (result.aborted) throw signal?.reason ?? new BackendError("exec", `${name}: aborted`);
    reported?.(result.stdout);
    if (result.timedOut || result.code !== 0) throw cliFailure(name, result, timeoutMs);
    return answer(result.stdout, dir.path);
  } finally {
    dir.remove();
  }
}

/** A CLI's reply when the CLI reports no usage (so its cost is unknown). */
export function unmeteredAnswer(text: string, model: string): RawCompletion {
  return { text, finishReason: "stop", toolCalls: [], usage: ZERO_USAGE, model, usageMissing: true };
}

/**
 * The line in which an agent CLI says it does not know (or cannot serve) the model it was given:
 * Claude Code's "There's an issue with the selected model (…). It may not exist or you may not have
 * access to it.", the API's not_found_error about a model, "the model … does not exist", "unknown /
 * unsupported / invalid model", "model … not found". Such an answer is final: every later call with
 * that model gets it too, so it stops the run with the CLI's own words instead of being retried.
 */
export function unknownModelLine(text: string): string | undefined {
  const said =
    /issue with the selected model|model\b.{0,80}\b(may not exist|does not exist|not (?:found|available|supported))|(?:unknown|unsupported|invalid) model|not_found_error.{0,40}model/i;
  for (const raw of text.split("\n")) {
    let line = raw.trim();
    if (!said.test(line)) continue;
    // A JSON result event (claude -p --output-format json): its `result` is the CLI's sentence.
    if (line.startsWith("{")) {
      try {
        const v = JSON.parse(line) as { result?: unknown };
        if (typeof v.result === "string" && said.test(v.result)) line = v.result.trim();
      } catch {
        // not JSON after all: keep the line
      }
    }
    return line.slice(0, 400);
  }
  return undefined;
}

/** The BackendError for a model the CLI says it does not know: not retried, stops what depends on it. */
export function unknownModelError(name: string, line: string): BackendError {
  return new BackendError("not_found", `${name}: the CLI does not know the model: ${line}`, {
    hint: "check the model name in the config (model.optimizer / model.target)",
  });
}

/** Classify a failed CLI run as a BackendError (timeouts and crashes are transient; auth is not). */
function cliFailure(name: string, result: ProcessResult, timeoutMs: number): BackendError {
  if (result.timedOut) {
    return new BackendError(
      "timeout",
      `${name}: no answer within ${Math.round(timeoutMs / 1000)} s (process group killed)`,
      { retryable: true },
    );
  }
  const tail = redactText(`${result.stderr}\n${result.stdout}`.trim()).slice(-400);
  if (
    /not logged in|\/login|auth(entication)? required|invalid api key|unauthori[sz]ed|401|token expired/i.test(tail)
  ) {
    return new BackendError("auth", `${name}: the CLI is not authenticated: ${tail}`, {
      hint: `log in with the ${name} CLI first`,
    });
  }
  const unknown = unknownModelLine(redactText(`${result.stdout}\n${result.stderr}`));
  if (unknown) return unknownModelError(name, unknown);
  return new BackendError("exec", `${name}: exited with code ${result.code}: ${tail}`, { retryable: true });
}

/** Lines of JSON objects in a JSONL stream; bad lines are skipped. */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v: unknown = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // not a JSON event line (CLIs interleave banners); skip it
    }
  }
  return out;
}

export function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Image parts of a conversation (data: URLs are written as files; others are refused). */
export function materializeImages(messages: ChatMessage[], dir: string, backend: string): string[] {
  const paths: string[] = [];
  for (const m of messages) {
    if (typeof m.content === "string") continue;
    for (const p of m.content) {
      if (p.type !== "image") continue;
      const match = /^data:image\/([a-z0-9.+-]+);base64,(.*)$/is.exec(p.url);
      if (!match)
        throw new BackendError("bad_request", `${backend}: only inline (data: URL) images can be passed to the CLI`);
      const file = join(dir, `image_${String(paths.length + 1).padStart(2, "0")}.${match[1]!.replace("jpeg", "jpg")}`);
      writeFileSync(file, Buffer.from(match[2]!, "base64"));
      paths.push(file);
    }
  }
  return paths;
}

export function hasImages(messages: ChatMessage[]): boolean {
  return messages.some((m) => typeof m.content !== "string" && m.content.some((p) => p.type === "image"));
}
