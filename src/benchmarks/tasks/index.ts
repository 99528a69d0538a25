import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Benchmark, BenchmarkContext, RolloutResult } from "../../engine/index.ts";
import { allowlistedEnv, ConfigError, DataError } from "../../lib/index.ts";
import { fillSkill } from "../shared/chat.ts";
import { EnvReader } from "../shared/env.ts";
import { resolveDataPath } from "../shared/paths.ts";
import { evaluationEntry, runQa } from "../shared/qa.ts";
import { loadConfiguredSplits, SPLIT_NAMES } from "../shared/splits.ts";
import { lastAnswerTag } from "../shared/text.ts";
import {
  EVALUATORS,
  type EvaluatorName,
  type Score,
  scoreCommand,
  scoreJudge,
  scoreLocal,
  splitCommand,
} from "./evaluators.ts";
import { scoreChecks } from "./checks.ts";
import { DATA_FORMATS, type DataFormat, detectFormat, tasksLoaderFor, type UserTask } from "./loader.ts";

const TASKS_SYSTEM = `You are a capable assistant completing one task for a user.

{skill_section}Follow the skill above where it applies. Work the task out carefully, then give your final answer inside <answer></answer> tags, with \
nothing but the answer inside.`;

export const TASKS_INITIAL_SKILL = `# Task Skill

No rules have been learned yet. Read the task carefully and give exactly the answer it asks for inside the answer tags.
`;

const NEEDS_REFERENCE: readonly EvaluatorName[] = ["exact", "contains", "regex", "f1", "json_match"];

function evaluatorOf(ctx: BenchmarkContext): EvaluatorName {
  return new EnvReader(ctx.env, "tasks").oneOf("evaluator", EVALUATORS, "exact");
}

function dataFormatOf(env: Record<string, unknown>): DataFormat {
  return new EnvReader(env, "tasks").oneOf("data_format", DATA_FORMATS, "auto");
}

/** Could the data file hold judge checks (skill-creator expectations, promptfoo llm-rubric)? Then the judge's role is set up. */
function mayJudge(env: Record<string, unknown>): boolean {
  const format = dataFormatOf(env);
  if (format === "skill_creator" || format === "promptfoo") return true;
  if (format === "tasks") return false;
  const raw = typeof env.data_path === "string" ? env.data_path : "";
  if (/\.ya?ml$/i.test(raw)) return true;
  if (!/\.json$/i.test(raw)) return false;
  const p = resolve(process.cwd(), raw);
  // Not readable from here (a path relative to the config file): set the judge up to be safe.
  if (!existsSync(p)) return true;
  try {
    return detectFormat(p) === "skill_creator";
  } catch {
    return true;
  }
}

function commandArgv(ctx: BenchmarkContext): string[] {
  const raw = ctx.env.evaluator_command;
  const argv = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? splitCommand(raw) : [];
  if (argv.length === 0) {
    throw new ConfigError(
      'env.evaluator_command is empty but env.evaluator is "command"; set it to the scorer to run, e.g. "python3 score.py"',
      { key: "env.evaluator_command" },
    );
  }
  return argv;
}

/**
 * The scorer's environment: the base allowlist (PATH, HOME, LANG, TMPDIR, proxies, …) plus the names in
 * env.evaluator_pass_env, read from the config's environment snapshot. Provider keys are not passed.
 */
function commandEnv(ctx: BenchmarkContext): Record<string, string> {
  const raw = ctx.env.evaluator_pass_env;
  const names = Array.isArray(raw) ? raw.map(String) : [];
  const environ = ctx.environ ?? {};
  return allowlistedEnv((name) => (Object.hasOwn(environ, name) ? environ[name] : undefined), names);
}

/** The rubric: the text of env.judge_rubric, or the file it names. */
function rubricOf(ctx: BenchmarkContext): string {
  const raw = new EnvReader(ctx.env, "tasks").str("judge_rubric", "");
  if (!raw.trim())
    throw new ConfigError(
      'env.judge_rubric is empty but env.evaluator is "judge"; write the grading rubric there (text, or a path to a file)',
      { key: "env.judge_rubric" },
    );
  if (raw.length < 4096 && !raw.includes("\n")) {
    const p = resolveDataPath(ctx, raw);
    if (existsSync(p) && /\.(md|txt)$/i.test(p)) return readFileSync(p, "utf8");
  }
  return raw;
}

/** A user's own tasks (JSONL) with a configurable evaluator; no code needed. */
const tasksBenchmark: Benchmark = {
  name: "tasks",
  initialSkill: TASKS_INITIAL_SKILL,
  rolesNeeded(env) {
    // The judge grades on the optimizer role (env.judge_model, else model.optimizer).
    return new EnvReader(env, "tasks").oneOf("evaluator", EVALUATORS, "exact") === "judge" || mayJudge(env)
      ? ["optimizer"]
      : [];
  },
  async loadSplits(ctx) {
    const evaluator = evaluatorOf(ctx);
    const splits = loadConfiguredSplits(ctx, tasksLoaderFor(dataFormatOf(ctx.env)));
    // Imported files carry their own checks; env.evaluator scores only the tasks without any.
    const plain = SPLIT_NAMES.flatMap((s) => splits[s]).filter((t) => !(t as UserTask).checks);
    if (plain.length && evaluator === "command") commandArgv(ctx);
    if (plain.length && evaluator === "judge") rubricOf(ctx);
    if (NEEDS_REFERENCE.includes(evaluator)) {
      const missing = plain.filter((t) => (t as UserTask).reference === undefined);
      if (missing.length > 0) {
        const lines = missing.map((t) => (t as UserTask).line).sort((a, b) => a - b);
        const dataPath = typeof ctx.env.data_path === "string" ? ctx.env.data_path : "";
        const ratioMode = (ctx.env.split_mode ?? "ratio") === "ratio";
        throw new DataError(
          `tasks file line ${lines[0]}: missing "reference", which env.evaluator "${evaluator}" needs (${missing.length} task(s) lack one: lines \
${lines.slice(0, 10).join(", ")}${lines.length > 10 ? ", …" : ""})`,
          {
            data: {
              // The tasks file, when the splits come from one (ratio mode, not env.split_dir).
              path: ratioMode && dataPath ? resolveDataPath(ctx, dataPath) : undefined,
              line: lines[0],
              item: missing.find((t) => (t as UserTask).line === lines[0])?.id,
              field: "reference",
              problem: "missing_field",
              input: "env.evaluator",
            },
          },
        );
      }
    }
    return splits;
  },
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    const task = item as UserTask;
    const evaluator = evaluatorOf(ctx);
    const env = new EnvReader(ctx.env, "tasks");
    const system = fillSkill(TASKS_SYSTEM, skill);
    const out = await runQa(ctx, { system, user: task.input, maxTurns: env.int("max_turns", 1) }, sampleIndex, {
      id: task.id,
      skill,
      description: "How to complete this user's tasks.",
      instructions: fillSkill(TASKS_SYSTEM, ""),
    });
    const answer = out.error ? "" : (lastAnswerTag(out.text) ?? out.text.trim());
    let score: Score;
    if (out.error) score = { hard: 0, soft: 0, reason: `error: ${out.error}` };
    else if (task.checks) score = await scoreChecks(ctx, task, task.checks, answer);
    else if (evaluator === "command") {
      score = await scoreCommand(
        commandArgv(ctx),
        {
          item: { id: task.id, input: task.input, reference: task.reference, metadata: task.metadata },
          answer,
          response: out.text,
        },
        {
          timeoutS: env.num("exec_timeout", 120),
          cwd: ctx.configDir || process.cwd(),
          env: commandEnv(ctx),
          signal: ctx.signal,
        },
      );
    } else if (evaluator === "judge")
      score = await scoreJudge(ctx, task, answer, rubricOf(ctx), env.str("judge_model", ""));
    else score = await scoreLocal(evaluator, task, answer);
    out.trajectory.push(
      evaluationEntry({
        evaluator: task.checks
          ? `imported checks (${task.checks.map((c) => (c.negate ? `not-${c.kind}` : c.kind)).join(", ")})`
          : evaluator,
        predicted_answer: answer,
        ...(task.reference === undefined ? {} : { reference: task.reference }),
        hard: score.hard,
        soft: Number(score.soft.toFixed(4)),
        ...(score.reason ? { reason: score.reason } : {}),
      }),
    );
    const metadata = task.metadata ?? {};
    return {
      id: task.id,
      hard: score.hard,
      soft: score.soft,
      trajectory: out.trajectory,
      question: task.input,
      task_type: typeof metadata.task_type === "string" ? metadata.task_type : evaluator,
      task_description: task.input,
      predicted_answer: answer,
      response: out.text,
      fail_reason: score.hard < 1e-9 ? (score.reason ?? "wrong answer") : undefined,
      // No answer from the target, or no verdict from the judge: an error, not a score.
      agent_ok: !out.error && !score.error,
      ...(!out.error && score.error ? { error_role: evaluator === "command" ? "evaluator" : "optimizer" } : {}),
      n_turns: out.nTurns,
      target_system_prompt: system,
      target_user_prompt: task.input,
    };
  },
};
export default tasksBenchmark;
