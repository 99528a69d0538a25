import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { extractJson, redactText, SkilloptError, sha256, writeFileAtomic, writeJsonAtomic } from "../../lib/index.ts";
import type { SleepConfig } from "../config.ts";
import type { EditRecord } from "../types.ts";
import { scoreExact } from "../judges.ts";
import { attemptPrompt, judgePrompt, minerPrompt, reflectPrompt, rulesPrompt, standingPrompt } from "./prompts.ts";
import { parseRules, parseStanding } from "./rules.ts";
import type { SleepBackend } from "./types.ts";

const PENDING_PREFIX = "[[SKILLOPT-SLEEP-PENDING:";

/** Model calls are waiting for answers in the handoff directory (exit 3). */
export class PendingCallsError extends SkilloptError<{
  handoff_pending: number;
  prompts: string;
  answers_dir: string;
}> {
  constructor(
    pending: number,
    readonly promptsPath: string,
    readonly answersDir: string,
  ) {
    // Its own code: waiting for answers is not a failed model call (`backend`, exit 1).
    super(
      "handoff_pending",
      `${pending} model call(s) are waiting for answers: read ${promptsPath}, write each answer file, then rerun the same command`,
      3,
      {
        data: { handoff_pending: pending, prompts: promptsPath, answers_dir: answersDir },
      },
    );
  }
  get pending(): number {
    return this.data.handoff_pending;
  }
}

interface Pending {
  id: string;
  answer_file: string;
  max_tokens: number;
  prompt: string;
}

/** Handoff directory: $SKILLOPT_SLEEP_HANDOFF_DIR, else `<project>/.skillopt-sleep/handoff` (inside our own folder). */
export function handoffDir(project: string, env: Readonly<Record<string, string | undefined>>): string {
  return env.SKILLOPT_SLEEP_HANDOFF_DIR || join(project, ".skillopt-sleep", "handoff");
}

/**
 * The handoff backend (spec §2.3): no process, no network. Each prompt's answer is read from
 * `answers/<sha256(prompt)[:16]>.md`; an unanswered prompt is recorded and a pending marker is
 * returned so independent calls of one phase batch together; a prompt built from a pending
 * marker stops the night (PendingCallsError) before garbage propagates.
 */
export function createHandoffBackend(
  _cfg: SleepConfig,
  opts: { project: string; env: Readonly<Record<string, string | undefined>> },
): SleepBackend & { flush(): PendingCallsError | undefined; dir: string } {
  const dir = handoffDir(opts.project, opts.env);
  const answers = join(dir, "answers");
  const pending = new Map<string, Pending>();
  const stop = () => {
    const err = flush();
    if (err) throw err;
  };
  const call = (prompt: string, maxTokens: number): string => {
    if (prompt.includes(PENDING_PREFIX)) stop();
    if (prompt.includes("was not a valid JSON array") && pending.size > 0) stop();
    const id = sha256(prompt).slice(0, 16);
    const file = join(answers, `${id}.md`);
    if (existsSync(file)) return readFileSync(file, "utf8").trim();
    pending.set(id, { id, answer_file: file, max_tokens: maxTokens, prompt: redactText(prompt) });
    return `${PENDING_PREFIX}${id}]]`;
  };
  function flush(): PendingCallsError | undefined {
    if (pending.size === 0) return undefined;
    mkdirSync(answers, { recursive: true });
    const list = [...pending.values()];
    writeJsonAtomic(join(dir, "pending.json"), {
      format: "skillopt_sleep.handoff.v1",
      answers_dir: answers,
      pending: list,
    });
    const md = [
      "# SkillOpt-Sleep: model calls waiting for answers",
      "",
      "Answer each prompt below in a fresh, isolated context (no memory of the others).",
      "Write only the raw answer text to the answer file named after it, then rerun the same command.",
      "",
      ...list.flatMap((p) => [
        `Answer file: ${p.answer_file}`,
        `----- BEGIN PROMPT ${p.id} -----`,
        p.prompt,
        `----- END PROMPT ${p.id} -----`,
        "",
      ]),
    ].join("\n");
    const promptsPath = join(dir, "PROMPTS.md");
    writeFileAtomic(promptsPath, md);
    return new PendingCallsError(list.length, promptsPath, answers);
  }
  return {
    name: "handoff",
    describe: "handoff (the calling agent answers the night's calls)",
    modelKey: "handoff::",
    remote: false,
    lastError: "",
    dir,
    flush,
    settle: stop,
    async attempt(task, skill, memory, _sampleId, tools) {
      const text = call(attemptPrompt(task, skill, memory, tools), 1024);
      const called = tools.filter((t) =>
        new RegExp(`\\bTOOL_CALL:\\s*${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(text),
      );
      return { text, toolsCalled: called, tokens: 0 };
    },
    async judge(task, response) {
      if (response.startsWith(PENDING_PREFIX)) stop();
      const raw = call(judgePrompt(task.reference || task.intent, response), 200);
      if (raw.startsWith(PENDING_PREFIX)) return { hard: 0, soft: 0, rationale: "pending", tokens: 0 };
      const verdict = extractJson(raw);
      const score = verdict && typeof verdict === "object" && "score" in verdict ? Number(verdict.score) : Number.NaN;
      if (Number.isFinite(score))
        return {
          hard: score >= 0.8 ? 1 : 0,
          soft: Math.min(1, Math.max(0, score)),
          rationale: `score ${score}`,
          tokens: 0,
        };
      return { ...scoreExact(task.reference || task.intent, response), rationale: "judge-parse-failed", tokens: 0 };
    },
    async reflect(input) {
      if (input.failures.length === 0) return { edits: [], raw: "", tokens: 0 };
      const raw = call(reflectPrompt(input, false), 1024);
      if (raw.startsWith(PENDING_PREFIX)) stop();
      const arr = extractJson(raw, "array") ?? [];
      const edits = arr
        .filter(
          (x): x is Record<string, unknown> =>
            typeof x === "object" && x !== null && typeof (x as Record<string, unknown>).content === "string",
        )
        .slice(0, input.editBudget)
        .map((x) => {
          const op = String(x.op ?? "add").toLowerCase();
          return {
            target: input.target,
            op: (op === "delete" || op === "replace" ? op : "add") as EditRecord["op"],
            content: String(x.content).trim(),
            anchor: String(x.anchor ?? "").trim(),
            rationale: String(x.rationale ?? "").trim(),
          };
        })
        .filter((e) => e.content);
      return { edits, raw, tokens: 0 };
    },
    // The same rules and standing-rule requests a model gets, written to the handoff file.
    async rules(input) {
      const raw = call(rulesPrompt(input), 800);
      return raw.startsWith(PENDING_PREFIX) ? [] : parseRules(raw);
    },
    async standing(rule, quotes) {
      const raw = call(standingPrompt(rule, quotes), 200);
      return raw.startsWith(PENDING_PREFIX) ? undefined : parseStanding(raw);
    },
    async mine(input) {
      const raw = call(minerPrompt(input), 800);
      if (raw.startsWith(PENDING_PREFIX)) return [];
      return (extractJson(raw, "array") ?? [])
        .filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null)
        .map((x) => ({
          intent: String(x.intent ?? ""),
          checks: Array.isArray(x.checks)
            ? (x.checks as Array<{ op: string; arg: unknown }>).filter((c) => c && typeof c.op === "string")
            : [],
          rubric: typeof x.rubric === "string" ? x.rubric : "",
          satisfied: typeof x.satisfied === "boolean" ? x.satisfied : undefined,
        }));
    },
  };
}
