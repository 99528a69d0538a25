import type { BenchmarkContext } from "../../engine/index.ts";
import { canonicalJson, extractJson } from "../../lib/index.ts";
import { tryJson } from "../shared/formats.ts";
import { compilePattern, type Score, scoreJudge } from "./evaluators.ts";
import type { UserTask } from "./loader.ts";
import { boundedRegexTest, RegexTimeoutError, regexTimeoutError } from "./regex-guard.ts";

/**
 * Per-task checks of an imported evaluation file (promptfoo asserts, skill-creator expectations).
 * A task passes (hard 1) when every check passes; soft is the weighted share of checks passed.
 */
const CHECK_KINDS = [
  "equals",
  "contains",
  "icontains",
  "starts-with",
  "regex",
  "contains-any",
  "contains-all",
  "icontains-any",
  "icontains-all",
  "is-json",
  "contains-json",
  "judge",
] as const;
export type CheckKind = (typeof CHECK_KINDS)[number];

export interface TaskCheck {
  kind: CheckKind;
  /** The expected text, pattern or list (equals may hold any JSON value). */
  value?: unknown;
  /** promptfoo's `not-` prefix: the check passes when the condition does not hold. */
  negate?: boolean;
  weight?: number;
  /** The judge's rubric (kind judge). */
  rubric?: string;
  /** Where the check came from, for messages: `file: tests[2].assert[0]`. */
  where: string;
}

const lower = (s: string) => s.toLowerCase();
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : [String(v ?? "")]);
const quote = (s: string) => JSON.stringify(s.length > 200 ? `${s.slice(0, 199)}…` : s);

async function holds(
  c: TaskCheck,
  answer: string,
  ctx: BenchmarkContext,
  task: UserTask,
): Promise<{ ok: boolean; why: string; error?: string }> {
  switch (c.kind) {
    case "equals": {
      if (typeof c.value === "string")
        return {
          ok: answer.trim() === c.value.trim(),
          why: `Expected ${quote(c.value.trim())}, got ${quote(answer.trim())}`,
        };
      const got = tryJson(answer.trim()) ?? extractJson(answer, "value");
      return {
        ok: got !== undefined && canonicalJson(got) === canonicalJson(c.value),
        why: `Expected the JSON value ${canonicalJson(c.value)}`,
      };
    }
    case "contains":
      return { ok: answer.includes(String(c.value)), why: `expected the answer to contain ${quote(String(c.value))}` };
    case "icontains":
      return {
        ok: lower(answer).includes(lower(String(c.value))),
        why: `expected the answer to contain ${quote(String(c.value))} (any case)`,
      };
    case "starts-with":
      return {
        ok: answer.trimStart().startsWith(String(c.value)),
        why: `expected the answer to start with ${quote(String(c.value))}`,
      };
    case "contains-any":
      return {
        ok: list(c.value).some((v) => answer.includes(v)),
        why: `expected one of ${JSON.stringify(list(c.value))}`,
      };
    case "contains-all":
      return {
        ok: list(c.value).every((v) => answer.includes(v)),
        why: `expected all of ${JSON.stringify(list(c.value))}`,
      };
    case "icontains-any":
      return {
        ok: list(c.value).some((v) => lower(answer).includes(lower(v))),
        why: `expected one of ${JSON.stringify(list(c.value))} (any case)`,
      };
    case "icontains-all":
      return {
        ok: list(c.value).every((v) => lower(answer).includes(lower(v))),
        why: `expected all of ${JSON.stringify(list(c.value))} (any case)`,
      };
    case "is-json":
      return { ok: tryJson(answer.trim()) !== undefined, why: "expected the answer to be JSON" };
    case "contains-json":
      return { ok: extractJson(answer, "value") !== undefined, why: "expected JSON in the answer" };
    case "regex": {
      const pattern = String(c.value);
      try {
        return {
          ok: await boundedRegexTest(compilePattern(pattern), answer),
          why: `expected a match for /${pattern}/`,
        };
      } catch (err) {
        if (err instanceof RegexTimeoutError) throw regexTimeoutError(c.where, pattern, answer, err);
        throw err;
      }
    }
    case "judge": {
      const s = await scoreJudge(ctx, task, answer, c.rubric ?? "", String(ctx.env.judge_model ?? ""));
      return { ok: s.hard >= 1, why: s.reason ?? "the judge failed it", ...(s.error ? { error: s.error } : {}) };
    }
  }
}

/** Score an answer with a task's imported checks; a judge that gave no verdict makes the item errored. */
export async function scoreChecks(
  ctx: BenchmarkContext,
  task: UserTask,
  checks: readonly TaskCheck[],
  answer: string,
): Promise<Score> {
  let total = 0;
  let got = 0;
  const failed: string[] = [];
  for (const c of checks) {
    const r = await holds(c, answer, ctx, task);
    if (r.error) return { hard: 0, soft: 0, reason: r.error, error: r.error };
    const ok = c.negate ? !r.ok : r.ok;
    const w = c.weight ?? 1;
    total += w;
    if (ok) got += w;
    else
      failed.push(c.negate ? `not-${c.kind}: this should not hold (${r.why.replace(/^Expected/, "expected")})` : r.why);
  }
  const soft = total > 0 ? got / total : 0;
  return { hard: failed.length === 0 ? 1 : 0, soft, ...(failed.length ? { reason: failed.join("; ") } : {}) };
}
