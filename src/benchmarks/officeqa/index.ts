import { readFileSync } from "node:fs";
import { basename } from "node:path";
import type {
  Benchmark,
  BenchmarkContext,
  ChatMessage,
  RolloutResult,
  TaskItem,
  TrajectoryEntry,
} from "../../engine/index.ts";
import { ConfigError, DataError, errorMessage, UnsupportedError } from "../../lib/index.ts";
import { callTarget, isSystemic, fillSkill } from "../shared/chat.ts";
import { EnvReader } from "../shared/env.ts";
import { environOf } from "../shared/environ.ts";
import { asString, asStringList, tryJson } from "../shared/formats.ts";
import { evaluationEntry } from "../shared/qa.ts";
import { loadConfiguredSplits } from "../shared/splits.ts";
import { firstAnswerTag, lastNonEmptyLine } from "../shared/text.ts";
import { skillFileAccess } from "../shared/skill-files.ts";
import { documentRoots, listDocuments, officeQaLoader } from "./loader.ts";
import { oraclePages } from "./oracle.ts";
import { OFFICEQA_INITIAL_SKILL, OFFICEQA_NUDGE, OFFICEQA_SYSTEM, OFFICEQA_SYSTEM_NO_TOOLS } from "./prompts.ts";
import { scoreOfficeQa } from "./score.ts";
import { customSearch, SEARCH_TOOL } from "./search.ts";
import { DocumentTools, LOCAL_TOOLS } from "./tools.ts";

type Mode = "offline" | "custom" | "azure";

function modeOf(env: EnvReader): Mode {
  return env.oneOf("search_mode", ["offline", "custom", "azure"], "offline", {
    custom_search: "custom",
    azure_search: "azure",
  });
}

interface Prepared {
  user: string;
  docs: Array<{ rel: string; abs: string }>;
  oracleChars: number;
}

function prepare(item: TaskItem, ctx: BenchmarkContext): Prepared {
  const roots = documentRoots(ctx);
  const sourceFiles = asStringList(item.source_files);
  const wanted = new Set(sourceFiles.map((f) => basename(f)));
  const docs = listDocuments(roots).filter((d) => wanted.size === 0 || wanted.has(basename(d.abs)));
  const oracle = oraclePages(sourceFiles, asStringList(item.source_docs), roots);
  const sections = [`## Question\n${asString(item.question)}`];
  if (oracle) sections.push(`## Oracle Parsed Pages\n${oracle}`);
  sections.push(
    `## Candidate Files\n${
      docs.length
        ? docs
            .slice(0, 20)
            .map((d) => `- ${d.rel}`)
            .join("\n")
        : "- none resolved"
    }`,
  );
  const hints = asStringList(item.source_docs);
  if (hints.length) sections.push(`## Source Hints\n${hints.map((h) => `- ${h}`).join("\n")}`);
  return { user: sections.join("\n\n"), docs, oracleChars: oracle.length };
}

function parseArgs(text: string): Record<string, unknown> {
  const v = tryJson(text || "{}");
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** OfficeQA: a multi-turn tool loop over local Treasury bulletins (engine.md §6.4). */
const officeQaBenchmark: Benchmark = {
  name: "officeqa",
  readsSkillFiles: true,
  initialSkill: OFFICEQA_INITIAL_SKILL,
  async loadSplits(ctx) {
    const env = new EnvReader(ctx.env, "officeqa");
    const mode = modeOf(env);
    if (mode !== "offline" && ctx.model.taskRunner()) {
      throw new UnsupportedError("OfficeQA on an exec target (agent CLI) supports env.search_mode offline only", {
        feature: "officeqa on an exec target",
        key: "env.search_mode",
        value: mode,
        needs: "offline",
      });
    }
    if (mode === "azure") {
      throw new UnsupportedError(
        "env.search_mode azure (Azure web_search tool) is not supported; use offline (local documents) or custom (a search endpoint)",
        { feature: "officeqa azure search", key: "env.search_mode", value: mode, needs: "offline or custom" },
      );
    }
    if (mode === "custom" && !env.str("search_api_url", ""))
      throw new ConfigError("env.search_api_url is empty but env.search_mode is custom", { key: "env.search_api_url" });
    const splits = loadConfiguredSplits(ctx, officeQaLoader);
    if (mode === "offline" && documentRoots(ctx).length === 0) {
      throw new DataError(
        "OfficeQA: no document directory found (env.data_dirs, $OFFICEQA_DOCS_DIR, data/officeqa_docs_official)",
        {
          hint: "point env.data_dirs at the directory holding the treasury_bulletin_*.txt files",
          data: { input: "env.data_dirs", problem: "not_found" },
        },
      );
    }
    return splits;
  },
  async rollout(item, skill, ctx, sampleIndex): Promise<RolloutResult> {
    if (ctx.model.taskRunner()) return execRollout(item, skillFileAccess(skill, false).skill, ctx);
    const env = new EnvReader(ctx.env, "officeqa");
    const mode = modeOf(env);
    const useLocal = mode === "offline" && env.bool("use_local_tools", true);
    const maxTurns = useLocal || mode === "custom" ? env.int("max_tool_turns", 12) : 1;
    const perTurn = env.int("max_queries_per_turn", 4);
    const { user, docs, oracleChars } = prepare(item, ctx);
    // A skill package's files are read with a tool in the tool loops, inlined when there are no tools.
    const files = skillFileAccess(skill, useLocal || mode === "custom");
    const system = fillSkill(useLocal || mode === "custom" ? OFFICEQA_SYSTEM : OFFICEQA_SYSTEM_NO_TOOLS, files.skill);
    const tools = [...(useLocal ? LOCAL_TOOLS : mode === "custom" ? [SEARCH_TOOL] : []), ...files.tools];
    const local = new DocumentTools(docs);
    const messages: ChatMessage[] = [
      { role: "system", content: system },
      { role: "user", content: user },
    ];
    const trajectory: TrajectoryEntry[] = [{ role: "user", content: user }];
    let text = "";
    let failure: string | undefined;
    let callFailed = false;
    let lastFinish: string | undefined;
    let turns = 0;
    for (let turn = 0; turn < maxTurns; turn++) {
      turns = turn + 1;
      const call = await callTarget(ctx, messages, { sampleIndex, tools });
      if (!call.ok) {
        failure = call.error;
        callFailed = true;
        break;
      }
      const r = call.response;
      lastFinish = r.finishReason;
      text = r.text;
      if (text) trajectory.push({ role: "assistant", content: text });
      if (r.toolCalls.length > 0 && tools.length > 0) {
        messages.push({ role: "assistant", content: text, toolCalls: r.toolCalls });
        for (const [i, tc] of r.toolCalls.entries()) {
          const args = parseArgs(tc.arguments);
          let obs: string;
          const fileObs = files.run(tc.name, args);
          if (i >= perTurn) obs = `skipped: at most ${perTurn} tool calls per turn`;
          else if (fileObs !== undefined) obs = fileObs;
          else if (tc.name === "search" && mode === "custom") {
            const queries = asStringList(args.queries ?? args.query).slice(0, perTurn);
            // spec §3.5: the search token lives in the environment variable that env.search_auth_env names
            const token = environOf(ctx)[env.str("search_auth_env", "OFFICEQA_CUSTOM_SEARCH_AUTH")] ?? "";
            const results: string[] = [];
            for (const q of queries) {
              results.push(
                `### ${q}\n${await customSearch(q, {
                  url: env.str("search_api_url", ""),
                  token,
                  provider: env.str("search_provider", "duckduckgo"),
                  maxResults: env.int("search_max_num_results", 4),
                  timeoutS: env.num("search_timeout_seconds", 20),
                  signal: ctx.signal,
                })}`,
              );
            }
            obs = results.join("\n\n") || "error: no queries given";
          } else obs = local.run(tc.name, args);
          trajectory.push({
            type: "tool_call",
            cmd: `${tc.name}(${tc.arguments})`,
            obs: obs.length > 2000 ? `${obs.slice(0, 2000)}…` : obs,
          });
          messages.push({ role: "tool", content: obs, toolCallId: tc.id });
        }
        if (turn === maxTurns - 1) failure = `Exceeded tool-turn budget (${maxTurns})`;
        continue;
      }
      if (/<answer>/i.test(text)) break;
      if (turn === maxTurns - 1) {
        failure = maxTurns > 1 ? `Exceeded tool-turn budget (${maxTurns})` : "Model gave no final answer";
        break;
      }
      if (tools.length === 0) {
        failure = "Model gave no final answer";
        break;
      }
      // upstream fails here ("neither a tool request nor a final answer"); one nudge is cheaper than a lost task
      messages.push({ role: "assistant", content: text });
      messages.push({ role: "user", content: OFFICEQA_NUDGE });
      trajectory.push({ role: "user", content: OFFICEQA_NUDGE });
    }
    return scoreRow(item, ctx, {
      text,
      failure,
      callFailed,
      trajectory,
      docs,
      oracleChars,
      useLocal,
      turns,
      lastFinish,
      system,
      user,
    });
  },
};

interface Attempt {
  text: string;
  failure: string | undefined;
  /** The target gave no answer (a call failed after retries), as opposed to a wrong or missing final answer. */
  callFailed: boolean;
  trajectory: TrajectoryEntry[];
  docs: Array<{ rel: string; abs: string }>;
  oracleChars: number;
  useLocal: boolean;
  turns: number;
  lastFinish: string | undefined;
  system: string;
  user: string;
}

function scoreRow(item: TaskItem, ctx: BenchmarkContext, a: Attempt): RolloutResult {
  const env = new EnvReader(ctx.env, "officeqa");
  const { text, failure, callFailed, trajectory, docs, oracleChars, useLocal, turns, lastFinish, system, user } = a;
  const truth = asString(item.ground_truth);
  const predicted = failure && !/<answer>/i.test(text) ? "" : (firstAnswerTag(text) ?? lastNonEmptyLine(text));
  const { em, f1 } = predicted ? scoreOfficeQa(predicted, truth, env.num("numeric_tolerance", 0)) : { em: 0, f1: 0 };
  trajectory.push(
    evaluationEntry({ predicted_answer: predicted, ground_truth: truth, exact_match: em, f1: Number(f1.toFixed(4)) }),
  );
  return {
    id: item.id,
    hard: em,
    soft: f1,
    trajectory,
    question: asString(item.question),
    task_type: asString(item.task_type) || "officeqa",
    task_description: asString(item.question),
    predicted_answer: predicted,
    response: text,
    ground_truth: truth,
    source_files: asStringList(item.source_files),
    resolved_source_paths: docs.map((d) => d.abs),
    oracle_parsed_pages_included: oracleChars > 0,
    oracle_parsed_pages_chars: oracleChars,
    use_local_tools: useLocal,
    fail_reason: failure ?? (em ? undefined : `EM=0: predicted '${predicted}' but expected '${truth}'`),
    agent_ok: !callFailed,
    n_turns: turns,
    last_finish_reason: lastFinish,
    target_system_prompt: system,
    target_user_prompt: user,
  };
}

/**
 * Offline mode on an exec target (engine.md §6.4): the candidate documents are copied into the
 * agent's workspace under docs/, task.md holds the question, oracle pages and hints; the agent is
 * run again (up to max_tool_turns times) until its final message contains an answer tag.
 */
async function execRollout(item: TaskItem, skill: string, ctx: BenchmarkContext): Promise<RolloutResult> {
  const env = new EnvReader(ctx.env, "officeqa");
  const runner = ctx.model.taskRunner()!;
  const { user, docs, oracleChars } = prepare(item, ctx);
  const files: Record<string, Uint8Array> = {};
  for (const d of docs) files[`docs/${d.rel}`] = new Uint8Array(readFileSync(d.abs));
  let task = user.replace(/^- (.+)$/gm, (line, rel: string) =>
    docs.some((d) => d.rel === rel) ? `- docs/${rel}` : line,
  );
  task +=
    "\n\nThe documents are under docs/ in the working directory; the candidate files above are the likely sources.";
  const trajectory: TrajectoryEntry[] = [{ role: "user", content: task }];
  const system = fillSkill(OFFICEQA_SYSTEM, "");
  let text = "";
  let failure: string | undefined;
  let callFailed = false;
  const maxRuns = env.int("max_tool_turns", 12);
  let runs = 0;
  for (; runs < maxRuns; runs++) {
    let t: Awaited<ReturnType<typeof runner.runTask>>;
    try {
      t = await runner.runTask(
        skill,
        {
          id: item.id,
          prompt: `${system}\n\nRead task.md, search and read the documents under docs/, and end your final message with the answer inside \
<answer></answer> tags.${runs > 0 ? " Your previous attempt gave no answer tag." : ""}`,
          files: { "task.md": task, ...files },
          skillDescription: "How to answer questions from U.S. Treasury Bulletin documents.",
        },
        ctx.signal ? { signal: ctx.signal } : undefined,
      );
    } catch (err) {
      if (isSystemic(err, ctx.signal)) throw err;
      failure = `exec-failed: ${errorMessage(err)}`;
      callFailed = true;
      break;
    }
    for (const st of t.steps) trajectory.push({ role: st.role, content: st.content });
    text = t.finalAnswer;
    if (t.error || t.timedOut) {
      failure = t.timedOut ? "exec-timeout" : `exec-failed: ${t.error}`;
      callFailed = true;
      break;
    }
    failure = undefined;
    if (/<answer>/i.test(text)) break;
    failure = `Exceeded tool-turn budget (${maxRuns})`;
  }
  return scoreRow(item, ctx, {
    text,
    failure,
    callFailed,
    trajectory,
    docs,
    oracleChars,
    useLocal: true,
    turns: Math.min(runs + 1, maxRuns),
    lastFinish: undefined,
    system,
    user: task,
  });
}

export default officeQaBenchmark;
