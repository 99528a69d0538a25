import type { SkilloptModelClient } from "../backends/index.ts";
import { ModelUnfitError, NoAnswerError, SkilloptError } from "../lib/index.ts";

/** Host (and port) of an endpoint URL; never its path, query or credentials. */
function endpointHost(endpoint: string | undefined): string | undefined {
  if (!endpoint) return undefined;
  try {
    return new URL(endpoint).host || undefined;
  } catch {
    return undefined;
  }
}

/** "target (openai_compatible, model m, endpoint host:port)": which role, backend, model and host failed to answer. */
export function roleLabel(client: SkilloptModelClient, role: "optimizer" | "target"): string {
  const i = client.info[role];
  if (!i) return role;
  const host = endpointHost(i.endpoint);
  const where = i.exec ? "agent CLI" : host ? `endpoint ${host}` : undefined;
  return `${role} (${[i.backend, i.model ? `model ${i.model}` : undefined, where].filter(Boolean).join(", ")})`;
}

/**
 * A stage without answers, told as one line naming the role, its backend, model and endpoint host,
 * and the last error. Other errors pass through unchanged.
 */
export function describeNoAnswer(err: unknown, client: SkilloptModelClient): unknown {
  if (err instanceof ModelUnfitError) {
    // The role's backend, model and endpoint lead: the one line says whose model cannot do the job.
    return new ModelUnfitError(`${roleLabel(client, err.data.role)} ${err.message}`, {
      cause: err,
      ...(err.hint ? { hint: err.hint } : {}),
      data: { ...err.data, ...(client.info[err.data.role]?.model ? { model: client.info[err.data.role]!.model } : {}) },
    });
  }
  if (!(err instanceof NoAnswerError)) return err;
  // Endpoints appear by host only (a URL's path can name a deployment or carry a token).
  const message = err.message.replace(/\bhttps?:\/\/([^/\s?#]+)[^\s)]*/g, "$1");
  if (err.data.role === "evaluator") {
    return new NoAnswerError(
      `the evaluator command (env.evaluator_command) gave ${message.replace(/^no answer/, "no verdict")}`,
      {
        cause: err,
        data: err.data,
      },
    );
  }
  const role = err.data.role === "optimizer" ? "optimizer" : "target";
  return new NoAnswerError(`${roleLabel(client, role)} gave ${message}`, {
    cause: err,
    ...(err.hint ? { hint: err.hint } : {}),
    data: err.data,
  });
}

/** What the user should fix when a stage got no answers: the scorer, or the role's endpoint. */
export function whatToFix(err: NoAnswerError): string {
  return err.data.role === "evaluator"
    ? 'fix env.evaluator_command (it must exit 0 and print a score in [0,1], or {"score": …}, on its last stdout line)'
    : "check that endpoint, model name and key";
}

/** The one-line reason a run failed, for the run store (shown by `skillopt runs`, the report and the dashboard). */
export function failureReason(err: unknown): string {
  const text = err instanceof SkilloptError ? err.message : err instanceof Error ? err.message : String(err);
  const line = text.split("\n")[0]!;
  return line.length > 500 ? `${line.slice(0, 500)}…` : line;
}
