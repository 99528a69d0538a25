import { isAbsolute, join } from "node:path";
import type { Benchmark, BenchmarkContext, RolloutResult, TaskItem, TrajectoryEntry } from "../../engine/index.ts";
import { ConfigError, DataError, errorMessage, UnsupportedError } from "../../lib/index.ts";
import { callTarget } from "../shared/chat.ts";
import { refuseExecTarget } from "../shared/qa.ts";
import { EnvReader } from "../shared/env.ts";
import { environOf } from "../shared/environ.ts";
import { asString, readJson } from "../shared/formats.ts";
import { firstJsonArray, loadConfiguredSplits, type SplitLoader } from "../shared/splits.ts";
import { AlfworldBridge, type BridgeReply } from "./bridge.ts";
import {
  ALFWORLD_INITIAL_SKILL,
  ALFWORLD_SKILL_BLOCK,
  ALFWORLD_SYSTEM,
  firstStepPrompt,
  laterStepPrompt,
} from "./prompts.ts";

const TASK_TYPES = [
  "pick_and_place",
  "pick_two_obj_and_place",
  "look_at_obj_in_light",
  "pick_heat_then_place_in_recep",
  "pick_cool_then_place_in_recep",
  "pick_clean_then_place_in_recep",
] as const;

/** Task type from the gamefile path (`…/pick_heat_then_place_in_recep-…/…`), else "other". */
export function taskTypeOf(gamefile: string): string {
  for (const segment of gamefile.split("/")) {
    const name = segment.split("-")[0]!.replace(/_simple$/, "");
    if (segment.includes("-") && (TASK_TYPES as readonly string[]).includes(name)) return name;
  }
  return "other";
}

const loader: SplitLoader = {
  label: "ALFWorld",
  name: "alfworld",
  loadSplitItems: (dir) =>
    firstJsonArray(dir).map((r, i) => {
      const o = r as Record<string, unknown>;
      const id = asString(o.id);
      const gamefile = asString(o.gamefile);
      if (!id || !gamefile) {
        const data = { path: dir, item: i, field: id ? "gamefile" : "id", problem: "missing_field" };
        throw new DataError(`${dir} item ${i}: expected {"id", "gamefile", "task_type"}`, { data });
      }
      return { ...o, id, gamefile, task_type: asString(o.task_type) || taskTypeOf(gamefile) };
    }),
  loadRawItems: (path) => {
    const data = readJson(path);
    if (!Array.isArray(data))
      throw new DataError(`${path}: expected a JSON array of {"id", "gamefile"}`, {
        data: { path, problem: "not_an_array" },
      });
    return data as TaskItem[];
  },
};

/** $ALFWORLD_DATA (spec §3.5: the root that relative gamefiles are resolved against). */
function dataRoot(ctx: BenchmarkContext): string {
  return environOf(ctx).ALFWORLD_DATA ?? "";
}

/** The action the env receives: the text inside <action>, lowercased; "look" when there is none. */
export function projectAction(response: string): { action: string; valid: boolean; reasoning: string } {
  const reasoning = /<think>([\s\S]*?)<\/think>/i.exec(response)?.[1]?.trim() ?? "";
  const m = /<action>([\s\S]*?)<\/action>/i.exec(response);
  if (!m || !m[1]!.trim()) return { action: "look", valid: false, reasoning };
  const action = m[1]!.trim().toLowerCase().replace(/\s+/g, " ");
  const valid = Boolean(reasoning) && !/[\u4e00-\u9fff]/.test(action);
  return { action, valid, reasoning };
}

async function episode(
  item: TaskItem,
  skill: string,
  ctx: BenchmarkContext,
  sampleIndex: number,
): Promise<RolloutResult> {
  const env = new EnvReader(ctx.env, "alfworld");
  const maxSteps = env.int("max_steps", 50);
  const python = env.str("alfworld_python", "python3");
  const rel = asString(item.gamefile);
  const root = dataRoot(ctx);
  if (!isAbsolute(rel) && !root)
    throw new ConfigError(
      "ALFWorld: ALFWORLD_DATA is not set; point it at the directory that alfworld-download filled (it holds json_2.1.1/)",
      { key: "ALFWORLD_DATA" },
    );
  const gamefile = isAbsolute(rel) ? rel : join(root, rel);
  const taskType = asString(item.task_type) || taskTypeOf(rel);
  const timeoutMs = Math.max(30, env.num("exec_timeout", 120)) * 1000;
  const childEnv: Record<string, string> = {};
  for (const k of [
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "ALFWORLD_DATA",
    "PYTHONPATH",
    "PYTHONDONTWRITEBYTECODE",
    "VIRTUAL_ENV",
    "TMPDIR",
  ]) {
    const val = k === "ALFWORLD_DATA" ? root || undefined : environOf(ctx)[k];
    if (val !== undefined) childEnv[k] = val;
  }
  const bridge = AlfworldBridge.start(python, childEnv);
  const trajectory: TrajectoryEntry[] = [];
  const base = { gamefile: rel, task_type: taskType, agent_ok: true };
  try {
    let obs: BridgeReply;
    try {
      obs = await bridge.request({ cmd: "reset", gamefile, max_steps: maxSteps }, timeoutMs);
    } catch (err) {
      if (err instanceof UnsupportedError) throw err;
      return {
        id: item.id,
        hard: 0,
        soft: 0,
        trajectory: [{ role: "system", content: `Environment failed to start: ${errorMessage(err)}` }],
        ...base,
        agent_ok: false,
        n_turns: 0,
        fail_reason: `env-error: ${errorMessage(err)}`,
      };
    }
    const task = /Your task is to:\s*(.*)/i.exec(obs.observation)?.[1]?.trim() ?? "";
    trajectory.push({ role: "user", content: obs.observation });
    const history: Array<{ observation: string; action: string }> = [];
    let won = false;
    let done = false;
    let steps = 0;
    for (let step = 1; step <= maxSteps && !done; step++) {
      steps = step;
      const prompt =
        step === 1
          ? firstStepPrompt(obs.observation, obs.admissible)
          : laterStepPrompt(task, step, history.slice(-2), obs.observation, obs.admissible);
      const call = await callTarget(
        ctx,
        [
          { role: "system", content: ALFWORLD_SYSTEM },
          { role: "user", content: `${ALFWORLD_SKILL_BLOCK(skill)}${prompt}` },
        ],
        { sampleIndex },
      );
      const response = call.ok ? call.response.text : "";
      const { action, reasoning } = projectAction(response);
      let next: BridgeReply;
      try {
        next = await bridge.request({ cmd: "step", action }, timeoutMs);
      } catch (err) {
        if (err instanceof UnsupportedError) throw err;
        trajectory.push({ role: "system", content: `Environment error: ${errorMessage(err)}` });
        return {
          id: item.id,
          hard: 0,
          soft: 0,
          trajectory,
          ...base,
          agent_ok: false,
          n_turns: step,
          fail_reason: `env-error: ${errorMessage(err)}`,
          task_description: task,
        };
      }
      trajectory.push({
        step,
        action,
        env_feedback: next.observation,
        reasoning: reasoning || (call.ok ? "" : `(target call failed: ${call.error})`),
      });
      history.push({ observation: obs.observation, action });
      obs = next;
      won = next.won;
      done = next.done || next.won;
    }
    const failReason = won
      ? undefined
      : done
        ? "Episode ended without completing the task"
        : `Timeout after ${maxSteps} steps`;
    trajectory.push({
      role: "system",
      content: `Evaluation result\nwon: ${won}\nsteps: ${steps}${failReason ? `\nreason: ${failReason}` : ""}`,
    });
    return {
      id: item.id,
      hard: won ? 1 : 0,
      soft: won ? 1 : 0,
      trajectory,
      ...base,
      n_turns: steps,
      fail_reason: failReason,
      task_description: task,
      question: task,
    };
  } finally {
    await bridge.close();
  }
}

/** ALFWorld through a JSON-lines bridge to the user's own ALFWorld install (engine.md §6.5). */
const alfworldBenchmark: Benchmark = {
  name: "alfworld",
  initialSkill: ALFWORLD_INITIAL_SKILL,
  loadSplits: async (ctx) => {
    refuseExecTarget(ctx, "ALFWorld");
    return loadConfiguredSplits(ctx, loader);
  },
  rollout: episode,
};

export default alfworldBenchmark;
