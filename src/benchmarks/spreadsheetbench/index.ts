import { join } from "node:path";
import type { Benchmark, BenchmarkContext, ChatMessage, TrajectoryEntry } from "../../engine/index.ts";
import { errorMessage, UnsupportedError } from "../../lib/index.ts";
import { callTarget, fillSkill } from "../shared/chat.ts";
import { type SkillFileAccess, skillFileAccess } from "../shared/skill-files.ts";
import { EnvReader } from "../shared/env.ts";
import { asString } from "../shared/formats.ts";
import { resolveDataPath } from "../shared/paths.ts";
import { failedResult } from "../shared/qa.ts";
import { itemSplit, loadConfiguredSplits } from "../shared/splits.ts";
import { type CaseResult, extractCode, runCase, valueHidingFeedback, verificationReport } from "./evaluate.ts";
import { execAgent } from "./exec-target.ts";
import { runHelper } from "./executor.ts";
import { discoverCases, spreadsheetLoader, type TestCase } from "./loader.ts";
import { CODEGEN_SYSTEM, CODEGEN_TASK, NO_CODE, REACT_SYSTEM, SPREADSHEET_INITIAL_SKILL } from "./prompts.ts";
import { reactAgent } from "./react.ts";

type Mode = "single" | "multi" | "react";

export interface Attempt {
  code: string;
  nTurns: number;
  trajectory: TrajectoryEntry[];
  llmError?: string;
  timedOut: boolean;
}

export interface AgentInput {
  ctx: BenchmarkContext;
  system: string;
  user: string;
  cases: TestCase[];
  sampleIndex: number;
  maxTurns: number;
  deadline: number;
  goldFeedback: boolean;
  python: string;
  outDir: string;
  position: string;
  sheet: string;
  /** Results by (code, case): the final evaluation reuses cases the agent phase already ran. */
  cache: Map<string, CaseResult>;
  /** The skill package's read-file tool (react mode), or none. */
  skillFiles: SkillFileAccess;
}

const previews = new Map<string, Promise<string>>();

/** The input preview, computed once per workbook per process (the same task is rolled out many times). */
function inputPreview(python: string, path: string): Promise<string> {
  const key = `${python}\u0000${path}`;
  let p = previews.get(key);
  if (!p) {
    p = runHelper(python, ["preview", path]).then((t) => t.trim());
    previews.set(key, p);
    p.catch(() => previews.delete(key));
  }
  return p;
}

const remaining = (deadline: number) => Math.max(0, (deadline - Date.now()) / 1000);

/** single / multi: generate → execute on the first case → feed back errors (and, in training, value-hiding gold feedback). */
async function codegenAgent(a: AgentInput, multi: boolean): Promise<Attempt> {
  const trajectory: TrajectoryEntry[] = [{ role: "user", content: a.user }];
  const messages: ChatMessage[] = [
    { role: "system", content: a.system },
    { role: "user", content: a.user },
  ];
  let code = "";
  const turns = multi ? a.maxTurns : 1;
  for (let turn = 0; turn < turns; turn++) {
    if (remaining(a.deadline) < 10) return { code, nTurns: turn, trajectory, timedOut: true };
    const call = await callTarget(a.ctx, messages, {
      sampleIndex: a.sampleIndex,
      timeoutS: Math.min(120, remaining(a.deadline)),
    });
    if (!call.ok) {
      trajectory.push({ role: "system", content: `Target call failed: ${call.error}` });
      return { code, nTurns: turn + 1, trajectory, llmError: call.error, timedOut: call.timedOut };
    }
    const text = call.response.text;
    trajectory.push({ role: "assistant", content: text });
    messages.push({ role: "assistant", content: text });
    const extracted = extractCode(text);
    if (!/```/.test(text) && !extracted) {
      if (!multi) return { code, nTurns: 1, trajectory, timedOut: false };
      messages.push({ role: "user", content: NO_CODE });
      trajectory.push({ role: "user", content: NO_CODE });
      continue;
    }
    code = extracted;
    if (!multi) return { code, nTurns: 1, trajectory, timedOut: false };
    const first = a.cases[0]!;
    const result = await runCase(code, first, {
      python: a.python,
      timeoutS: Math.min(120, remaining(a.deadline)),
      outDir: a.outDir,
      position: a.position,
      sheet: a.sheet,
      signal: a.ctx.signal,
    });
    a.cache.set(`${code}\u0000${first.no}`, result);
    let feedback: string | undefined;
    if (result.stage === "exec") {
      feedback = `Running the script failed:\n${(result.error ?? "").slice(-3000)}\n\nFix it and reply with the complete corrected script in one \
\`\`\`python block.`;
    } else if (a.goldFeedback && !result.ok && result.comparison) {
      feedback = valueHidingFeedback(result.comparison);
    }
    trajectory.push({
      type: "tool_call",
      cmd: `execute script on test case ${first.no}`,
      obs: result.stage === "exec" ? `error: ${(result.error ?? "").slice(-1500)}` : "ran successfully",
    });
    if (!feedback) return { code, nTurns: turn + 1, trajectory, timedOut: false };
    messages.push({ role: "user", content: feedback });
    trajectory.push({ role: "user", content: feedback });
  }
  return { code, nTurns: turns, trajectory, timedOut: false };
}

function settings(ctx: BenchmarkContext) {
  const env = new EnvReader(ctx.env, "spreadsheetbench");
  return {
    mode: env.oneOf<Mode>("mode", ["single", "multi", "react"], "single"),
    maxTurns: env.int("max_turns", 30),
    budgetS: env.num("exec_timeout", 600),
    python: env.str("python", ""),
    dataRoot: resolveDataPath(ctx, env.str("data_root", "data/spreadsheetbench_verified_400")),
  };
}

const rollout: Benchmark["rollout"] = async (item, skill, ctx, sampleIndex) => {
  const s = settings(ctx);
  const instruction = asString(item.instruction);
  const position = asString(item.answer_position);
  const sheet = asString(item.answer_sheet);
  const base = {
    ok: false,
    instruction_type: asString(item.instruction_type),
    task_type: asString(item.task_type) || "other",
    task_description: instruction,
    question: instruction,
  };
  const cases = discoverCases(join(s.dataRoot, asString(item.spreadsheet_path)), item.id);
  if (cases.length === 0) return failedResult(item.id, "no-test-cases", { ...base, phase: "setup", n_cases: 0 });
  let preview: string;
  try {
    preview = await inputPreview(s.python, cases[0]!.input);
  } catch (err) {
    if (err instanceof Error && err.name === "UnsupportedError") throw err;
    return failedResult(item.id, `setup: ${errorMessage(err)}`, { ...base, phase: "setup", n_cases: cases.length });
  }
  // A skill package's files: a read-file tool in the react loop, inlined everywhere else.
  const exec = ctx.model.taskRunner() !== undefined;
  const skillFiles = skillFileAccess(skill, s.mode === "react" && !exec);
  const system = fillSkill(s.mode === "react" ? REACT_SYSTEM : CODEGEN_SYSTEM, skillFiles.skill);
  const user = [
    `## Instruction\n${instruction}`,
    base.instruction_type ? `Instruction type: ${base.instruction_type}` : "",
    position ? `Expected answer position: ${position}` : "",
    `## Input spreadsheet preview\n${preview}`,
    CODEGEN_TASK,
  ]
    .filter(Boolean)
    .join("\n\n");
  const deadline = s.budgetS > 0 ? Date.now() + s.budgetS * 1000 : Number.POSITIVE_INFINITY;
  const outDir = join(ctx.workDir, "spreadsheetbench", item.id.replace(/[^\w.-]/g, "_"), String(sampleIndex));
  const training = ctx.phase ? ctx.phase === "train" : itemSplit(item) === "train";
  const input: AgentInput = {
    ctx,
    system,
    user,
    cases,
    sampleIndex,
    maxTurns: s.maxTurns,
    deadline,
    goldFeedback: training && s.mode === "multi",
    python: s.python,
    outDir,
    position,
    sheet,
    cache: new Map(),
    skillFiles,
  };
  const attempt = exec
    ? await execAgent(input, skillFiles.skill, item.id)
    : s.mode === "react"
      ? await reactAgent(input)
      : await codegenAgent(input, s.mode === "multi");
  const common = {
    ...base,
    spreadsheet_preview: preview,
    target_system_prompt: system,
    target_user_prompt: user,
    n_cases: cases.length,
    n_turns: attempt.nTurns,
  };
  if (attempt.llmError) {
    return {
      ...failedResult(item.id, attempt.timedOut ? attempt.llmError : `llm-call-failed: ${attempt.llmError}`, common),
      trajectory: attempt.trajectory,
      phase: attempt.timedOut ? "timeout" : "llm",
      llm_ok: false,
    };
  }
  if (!attempt.code) {
    const reason = attempt.timedOut ? `task-timeout-${s.budgetS}s` : "empty-code-block";
    return {
      ...failedResult(item.id, reason, common),
      trajectory: attempt.trajectory,
      phase: attempt.timedOut ? "timeout" : "extract",
      llm_ok: true,
      code_ok: false,
      agent_ok: !attempt.timedOut,
    };
  }
  const results: CaseResult[] = [];
  for (const tc of cases) {
    const cached = input.cache.get(`${attempt.code}\u0000${tc.no}`);
    if (cached) {
      results.push(cached);
      continue;
    }
    results.push(
      await runCase(attempt.code, tc, {
        python: s.python,
        timeoutS: Math.max(10, Math.min(120, remaining(deadline) || 120)),
        outDir,
        position,
        sheet,
        signal: ctx.signal,
      }),
    );
  }
  const nExec = results.filter((r) => r.stage === "compare").length;
  const nPass = results.filter((r) => r.ok).length;
  const soft = nPass / cases.length;
  const hard = nPass === cases.length ? 1 : 0;
  const firstBad = results.find((r) => !r.ok);
  const failReason = !firstBad
    ? undefined
    : firstBad.stage === "exec"
      ? firstBad.error?.startsWith("output-not-found")
        ? "output-not-found"
        : `exec-error: ${(firstBad.error ?? "").trim().split("\n").pop()}`
      : `eval-mismatch: ${firstBad.reason}`;
  const trajectory = [...attempt.trajectory, { role: "system", content: verificationReport(results) }];
  return {
    id: item.id,
    hard,
    soft,
    trajectory,
    ...common,
    ok: hard === 1,
    phase: firstBad?.stage === "exec" ? "exec" : "done",
    fail_reason: failReason,
    llm_ok: true,
    code_ok: true,
    exec_ok: nExec === cases.length,
    n_exec_pass: nExec,
    n_pass: nPass,
    cases: results.map((r) => ({
      no: r.no,
      stage: r.stage,
      ok: r.ok,
      ...(r.error ? { error: r.error.slice(-500) } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
    })),
    code: attempt.code,
    predicted_answer: attempt.code,
    agent_ok: true,
  };
};

/** SpreadsheetBench: the target writes Python that edits a workbook; it runs isolated and is checked cell by cell (engine.md §6.6). */
const spreadsheetBenchmark: Benchmark = {
  name: "spreadsheetbench",
  readsSkillFiles: true,
  initialSkill: SPREADSHEET_INITIAL_SKILL,
  loadSplits: async (ctx) => {
    const { mode } = settings(ctx);
    if (mode !== "single" && ctx.model.taskRunner()) {
      throw new UnsupportedError(
        `SpreadsheetBench on an exec target (agent CLI) supports env.mode single only (got ${mode}); set --set env.mode=single`,
        { feature: "spreadsheetbench on an exec target", key: "env.mode", value: mode, needs: "single" },
      );
    }
    return loadConfiguredSplits(ctx, spreadsheetLoader);
  },
  rollout,
};

export default spreadsheetBenchmark;
