import * as v from "valibot";
import type { BenchmarkContext } from "../../engine/index.ts";
import {
  BackendError,
  contextTooSmall,
  canonicalJson,
  ConfigError,
  type DataAt,
  errorMessage,
  extractJson,
  type ModelUnfitError,
} from "../../lib/index.ts";
import { isSystemic } from "../shared/chat.ts";
import { boundedRegexTest, RegexTimeoutError, regexTimeoutError } from "./regex-guard.ts";
import { tryJson } from "../shared/formats.ts";
import { squadScores } from "../shared/text.ts";
import type { UserTask } from "./loader.ts";

export const EVALUATORS = ["exact", "contains", "regex", "f1", "json_match", "command", "judge"] as const;
export type EvaluatorName = (typeof EVALUATORS)[number];

export interface Score {
  hard: number;
  soft: number;
  reason?: string;
  /** Set when the scorer itself gave no verdict (the judge's endpoint failed, the command crashed): the item is then not scored. */
  error?: string;
}

function references(ref: unknown): string[] {
  if (ref === undefined || ref === null) return [];
  if (Array.isArray(ref)) return ref.map((r) => (typeof r === "string" ? r : JSON.stringify(r)));
  return [typeof ref === "string" ? ref : JSON.stringify(ref)];
}

function needReference(task: UserTask, evaluator: string): string[] {
  const refs = references(task.reference);
  if (refs.length === 0) {
    throw new ConfigError(
      `tasks file line ${task.line} (id ${task.id}): evaluator "${evaluator}" needs a "reference"`,
      {
        line: task.line,
        key: "reference",
        data: { item: task.id, evaluator },
      },
    );
  }
  return refs;
}

const squash = (s: string) => s.trim().replace(/\s+/g, " ").toLowerCase();

/** exact: whitespace-collapsed, case-insensitive equality with any reference. */
export function scoreExact(answer: string, refs: string[]): Score {
  const ok = refs.some((r) => squash(r) === squash(answer));
  return { hard: ok ? 1 : 0, soft: ok ? 1 : 0, reason: ok ? undefined : `expected ${JSON.stringify(refs)}` };
}

/** contains: every reference string appears in the answer (case-insensitive); soft = fraction found. */
export function scoreContains(answer: string, refs: string[]): Score {
  const a = squash(answer);
  const found = refs.filter((r) => a.includes(squash(r)));
  const soft = found.length / refs.length;
  const missing = refs.filter((r) => !found.includes(r));
  return { hard: soft === 1 ? 1 : 0, soft, reason: missing.length ? `missing ${JSON.stringify(missing)}` : undefined };
}

/** A pattern given as `/body/flags` or as a plain body. */
export function compilePattern(p: string): RegExp {
  const m = /^\/(.*)\/([a-z]*)$/s.exec(p);
  return m ? new RegExp(m[1]!, m[2]) : new RegExp(p);
}

/**
 * regex: the answer matches any reference pattern. Each match runs with a time bound (regex-guard.ts):
 * a pattern that backtracks for longer is an evaluation error (DataError, the run stops), never a 0.
 * `at` (the task's line and id) goes into the errors' facts.
 */
export async function scoreRegex(
  answer: string,
  refs: string[],
  where: string,
  timeoutMs?: number,
  at: DataAt = {},
): Promise<Score> {
  let ok = false;
  for (const r of refs) {
    let re: RegExp;
    try {
      re = compilePattern(r);
    } catch (err) {
      throw new ConfigError(`${where}: invalid regular expression ${JSON.stringify(r)} (${(err as Error).message})`, {
        key: "reference",
        line: at.line,
        data: { item: at.item },
      });
    }
    try {
      ok = await boundedRegexTest(re, answer, timeoutMs);
    } catch (err) {
      if (err instanceof RegexTimeoutError) throw regexTimeoutError(where, r, answer, err, at);
      throw err;
    }
    if (ok) break;
  }
  return { hard: ok ? 1 : 0, soft: ok ? 1 : 0, reason: ok ? undefined : `no match for ${JSON.stringify(refs)}` };
}

/** f1: SQuAD exact match (hard) and token F1 (soft), max over references. */
function scoreF1(answer: string, refs: string[]): Score {
  const { em, f1 } = squadScores(answer, refs);
  return { hard: em, soft: f1, reason: em ? undefined : `F1=${f1.toFixed(3)} against ${JSON.stringify(refs)}` };
}

/** json_match: deep equality of the parsed answer with the reference; soft = share of matching top-level keys. */
export function scoreJsonMatch(answer: string, reference: unknown): Score {
  const expected = typeof reference === "string" ? (tryJson(reference) ?? reference) : reference;
  const got = extractJson(answer, "value");
  if (got === undefined) return { hard: 0, soft: 0, reason: "the answer holds no JSON value" };
  if (canonicalJson(got) === canonicalJson(expected)) return { hard: 1, soft: 1 };
  if (
    expected &&
    typeof expected === "object" &&
    !Array.isArray(expected) &&
    got &&
    typeof got === "object" &&
    !Array.isArray(got)
  ) {
    const keys = Object.keys(expected);
    const wrong = keys.filter(
      (k) =>
        canonicalJson((got as Record<string, unknown>)[k]) !== canonicalJson((expected as Record<string, unknown>)[k]),
    );
    const soft = keys.length ? (keys.length - wrong.length) / keys.length : 0;
    return { hard: 0, soft, reason: `keys that differ: ${wrong.join(", ") || "(extra keys only)"}` };
  }
  return { hard: 0, soft: 0, reason: `expected ${canonicalJson(expected)}` };
}

/** Split a command string into argv (double/single quotes, backslash escapes; no shell). */
export function splitCommand(cmd: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let has = false;
  for (let i = 0; i < cmd.length; i++) {
    const ch = cmd[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < cmd.length) cur += cmd[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (ch === "\\" && i + 1 < cmd.length) {
      cur += cmd[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = "";
      has = false;
    } else cur += ch;
  }
  if (quote)
    throw new ConfigError(`env.evaluator_command: unterminated quote in ${JSON.stringify(cmd)}`, {
      key: "env.evaluator_command",
    });
  if (has || cur) out.push(cur);
  return out;
}

const CommandOutputSchema = v.object({
  score: v.number(),
  hard: v.optional(v.number()),
  reason: v.optional(v.string()),
});

/** Parse a command evaluator's stdout: a number in [0,1] on the last line, or `{"score", "hard"?, "reason"?}`. */
export function parseCommandOutput(stdout: string): Score | string {
  const last = stdout.trim().split(/\r?\n/).pop()?.trim() ?? "";
  const json = tryJson(last);
  let score: number;
  let hard: number | undefined;
  let reason: string | undefined;
  if (typeof json === "number") score = json;
  else {
    const parsed = v.safeParse(CommandOutputSchema, json);
    if (!parsed.success)
      return `expected a score in [0,1] on the last line of stdout, got ${JSON.stringify(last.slice(0, 200))}`;
    ({ score, hard, reason } = parsed.output);
  }
  if (!(score >= 0 && score <= 1)) return `score ${score} is outside [0,1]`;
  return { hard: hard ?? (score >= 1 ? 1 : 0), soft: score, reason };
}

/**
 * command: run the user's scorer with `{item, answer, response}` on stdin. `env` is the child's whole
 * environment (an allowlist built by the caller), never a copy of ours: provider keys stay here.
 */
export async function scoreCommand(
  argv: string[],
  payload: Record<string, unknown>,
  opts: { timeoutS: number; cwd: string; env: Record<string, string>; signal?: AbortSignal },
): Promise<Score> {
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(argv, {
      cwd: opts.cwd,
      env: opts.env,
      stdin: new TextEncoder().encode(`${JSON.stringify(payload)}\n`),
      stdout: "pipe",
      stderr: "pipe",
      timeout: opts.timeoutS > 0 ? opts.timeoutS * 1000 : undefined,
      killSignal: "SIGKILL",
      signal: opts.signal,
    });
  } catch (err) {
    throw new ConfigError(
      `env.evaluator_command: cannot start ${JSON.stringify(argv[0])} (${(err as Error).message})`,
      { key: "env.evaluator_command" },
    );
  }
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout as ReadableStream).text(),
    new Response(proc.stderr as ReadableStream).text(),
    proc.exited,
  ]);
  // A scorer that timed out, crashed or printed no score gave no verdict: an error, never a zero.
  const noVerdict = (error: string): Score => ({ hard: 0, soft: 0, reason: error, error });
  if (proc.signalCode === "SIGKILL" && opts.timeoutS > 0)
    return noVerdict(`evaluator command timed out after ${opts.timeoutS}s`);
  if (code !== 0) {
    const tail = stderr.trim().split(/\r?\n/).slice(-3).join(" | ");
    return noVerdict(`evaluator command exited ${code}${tail ? `: ${tail.slice(0, 500)}` : ""}`);
  }
  const parsed = parseCommandOutput(stdout);
  return typeof parsed === "string" ? noVerdict(`evaluator command: ${parsed}`) : parsed;
}

const JudgeSchema = v.object({
  pass: v.boolean(),
  score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  reason: v.optional(v.string(), ""),
});

const JUDGE_SYSTEM = `You grade one answer to a task against a rubric. Be strict and consistent: apply the rubric as written, and use the reference \
answer, when one is given, as the standard of correctness.

Reply with a JSON object only: {"pass": true|false, "score": <number from 0 to 1>, "reason": "<one sentence>"}.`;

/** judge: an LLM grades the answer with the config's rubric (optimizer role, stage "judge", cached by the model layer). */
export async function scoreJudge(
  ctx: BenchmarkContext,
  task: UserTask,
  answer: string,
  rubric: string,
  model: string,
): Promise<Score> {
  const refs = references(task.reference);
  const user = [
    `## Rubric\n${rubric}`,
    `## Task\n${task.input}`,
    refs.length ? `## Reference answer\n${refs.join("\n")}` : "",
    `## Answer to grade\n${answer}`,
    "Grade the answer. Reply with the JSON object only.",
  ]
    .filter(Boolean)
    .join("\n\n");
  let result: Awaited<ReturnType<typeof ctx.model.chatJson<typeof JudgeSchema>>>;
  try {
    result = await ctx.model.chatJson(
      "optimizer",
      {
        messages: [
          { role: "system", content: JUDGE_SYSTEM },
          { role: "user", content: user },
        ],
        stage: "judge",
        model: model || undefined,
        json: true,
      },
      JudgeSchema,
      ctx.signal ? { signal: ctx.signal } : undefined,
    );
  } catch (err) {
    if (isSystemic(err, ctx.signal)) throw err;
    // No later judge prompt fits either (each holds the rubric, the task and an answer): stop, with the sizes.
    if (err instanceof BackendError && err.kind === "context_length") throw judgeTooSmall(err);
    const error = `judge-call-failed: ${errorMessage(err)}`;
    return { hard: 0, soft: 0, reason: error, error };
  }
  if (!result.ok) {
    const error = `judge gave no usable verdict: ${result.reason}`;
    return { hard: 0, soft: 0, reason: error, error };
  }
  const { pass, score, reason } = result.value;
  return { hard: pass ? 1 : 0, soft: score, reason: reason || undefined };
}

/** The judge's model refused a prompt as longer than its context. */
function judgeTooSmall(err: BackendError): ModelUnfitError {
  return contextTooSmall(err, {
    role: "optimizer",
    stage: "judge",
    hint: "judge with a model that has a larger context (the judge runs on the optimizer role: model.optimizer_backend / model.optimizer)",
  });
}

/** Score an answer with a non-LLM, non-process evaluator. */
export async function scoreLocal(
  evaluator: Exclude<EvaluatorName, "command" | "judge">,
  task: UserTask,
  answer: string,
): Promise<Score> {
  const where = `tasks file line ${task.line} (id ${task.id})`;
  switch (evaluator) {
    case "exact":
      return scoreExact(answer, needReference(task, evaluator));
    case "contains":
      return scoreContains(answer, needReference(task, evaluator));
    case "regex":
      return scoreRegex(answer, needReference(task, evaluator), where, undefined, { line: task.line, item: task.id });
    case "f1":
      return scoreF1(answer, needReference(task, evaluator));
    case "json_match":
      if (task.reference === undefined) needReference(task, evaluator);
      return scoreJsonMatch(answer, task.reference);
  }
}
