import type * as v from "valibot";
import { type ConfigIssue, ConfigError, isSecretKey } from "../lib/index.ts";
import type { Position } from "./yaml-source.ts";

function describeInput(input: unknown): string {
  if (input === undefined) return "nothing";
  const text = JSON.stringify(input) ?? String(input);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function isSecretPath(path: string): boolean {
  return isSecretKey(path.slice(path.lastIndexOf(".") + 1));
}

/** The type of a value, never the value: for keys that hold secrets. */
function hiddenInput(input: unknown): string {
  if (input === undefined) return "nothing";
  if (input === null) return "null";
  return `a ${Array.isArray(input) ? "list" : typeof input} (value hidden)`;
}

/** Where a key's value was written: a file and, when known, the key's line and column there. */
interface KeyOrigin {
  file: string;
  pos?: Position | undefined;
}

/**
 * The one ConfigError for schema issues, for the engine's config and Sleep's alike: the first issue
 * at the file:line:col where its key (or nearest parent) was written, else at `fallback`; its dot
 * path and message with what was given (a secret's type only); up to three more issues as the hint.
 */
export function validationError(
  issues: readonly v.BaseIssue<unknown>[],
  locate: (path: string) => KeyOrigin | undefined,
  fallback: string,
): ConfigError {
  const list: ConfigIssue[] = issues.map((issue) => {
    const path = (issue.path ?? []).map((p) => String(p.key)).join(".");
    // A mistyped secret is never echoed, only its type.
    const got = isSecretPath(path) ? hiddenInput(issue.input) : describeInput(issue.input);
    // A message that already quotes what was given (an unknown name with its suggestion) is not repeated.
    return { path, message: issue.message.includes(got) ? issue.message : `${issue.message}, got ${got}` };
  });
  const first = list[0]!;
  const origin = locate(first.path);
  const loc = origin ? (origin.pos ? `${origin.file}:${origin.pos.line}:${origin.pos.col}` : origin.file) : fallback;
  // "is invalid (…)" for secret keys: written as `api_key: expected…`, the redactor would mask "expected".
  const line = (i: ConfigIssue) =>
    isSecretPath(i.path) ? `${i.path} is invalid (${i.message})` : `${i.path}: ${i.message}`;
  const more = list.slice(1, 4).map(line);
  return new ConfigError(`${loc}: ${line(first)}`, {
    file: origin?.file ?? fallback,
    line: origin?.pos?.line,
    col: origin?.pos?.col,
    key: first.path,
    issues: list,
    hint: more.length ? `also: ${more.join("; ")}${list.length > 4 ? "; …" : ""}` : undefined,
  });
}
