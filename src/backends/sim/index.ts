import { family, lastJsonBlock, parseTaskValue } from "./conventions.ts";
import type { TrainConfig } from "../../config/index.ts";
import type { ChatMessage, ChatRequest, Role } from "../../engine/index.ts";
import { sha256Parts } from "../../lib/index.ts";
import type { ChatBackend, RawCompletion } from "../types.ts";
import { simAnalyst, type SimKnobs } from "./analyst.ts";
import { makeDraw } from "./draw.ts";
import { simJudge } from "./judge.ts";
import { simRules, simStanding } from "./lessons.ts";
import { crowdLapse, followedRules, sampleAnswer } from "./stochastic.ts";
import { simTriggerAnalyst, simTriggerReply, triggerEvidence } from "./trigger.ts";
import {
  simAppendix,
  simLr,
  simMerge,
  simMetaSkill,
  simRanking,
  simRewrite,
  simShorten,
  simSlowUpdate,
} from "./stages.ts";

/** The model name the simulator reports, so no output can mistake it for a real model. */
export const SIM_MODEL = "skillopt-sim (offline simulator, not a real model)";

export interface SimOptions {
  seed: number;
  /** Probability that the target ignores its skill on a call. */
  lapseRate: number;
  /** Probability that the optimizer proposes a wrong or vague rule. */
  noiseRate: number;
  latencyMs: number;
  /** Stochastic target (0 = off): answers are draws whose success probability is known exactly (stochastic.ts). */
  temperature?: number;
  /** The crowded target (env.conventions_shape: crowded or conflict_crowded): it lapses more as its skill holds more instructions (stochastic.ts). */
  crowded?: boolean;
}

/**
 * Simulator settings from a config (train.seed, env.sim_lapse_rate, env.sim_noise_rate, env.sim_temperature,
 * env.conventions_shape, model.sim_latency_ms).
 */
export function simOptions(config: TrainConfig): SimOptions {
  return {
    seed: config.train.seed,
    lapseRate: config.env.sim_lapse_rate ?? 0.05,
    noiseRate: config.env.sim_noise_rate ?? 0.3,
    latencyMs: config.model.sim_latency_ms ?? 0,
    temperature: config.env.sim_temperature ?? 0,
    ...(config.env.conventions_shape === "crowded" || config.env.conventions_shape === "conflict_crowded"
      ? { crowded: true }
      : {}),
  };
}

function text(c: ChatMessage["content"]): string {
  return typeof c === "string" ? c : c.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

/**
 * Answer one chat request as the simulator. Which part it plays is read from the request itself:
 * a `stage` in the structured JSON block is an optimizer prompt; a conventions task is a target
 * call. Deterministic: the same request (and sample index) always gets the same answer.
 */
export function simAnswer(messages: readonly ChatMessage[], sampleIndex: number, o: SimOptions): string {
  const system = messages
    .filter((m) => m.role === "system")
    .map((m) => text(m.content))
    .join("\n");
  const user = text([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
  const block = lastJsonBlock(user);
  // Hashed in parts: an optimizer prompt is up to a few hundred thousand characters, not copied again here.
  const reqKey = sha256Parts([system, "\u0000", user, `\u0000${sampleIndex}`]).slice(0, 16);
  const draw = makeDraw(o.seed);
  const k: SimKnobs = { draw, noise: o.noiseRate };
  const data = (block && typeof block === "object" ? block : {}) as Record<string, unknown>;
  const json = (v: unknown) => `\`\`\`json\n${JSON.stringify(v, null, 2)}\n\`\`\``;
  switch (data.stage) {
    case "analyst": {
      const trig = triggerEvidence(Array.isArray(data.trajectories) ? data.trajectories : []);
      if (trig) return json(simTriggerAnalyst(k, user, data as never, trig, reqKey));
      return json(simAnalyst(k, user, data as never, reqKey));
    }
    case "merge":
    case "merge_final":
      return json(simMerge(data));
    case "ranking":
      return json(simRanking(data));
    case "rewrite":
      return json(simRewrite(user, data));
    case "lr_autonomous":
      return json(simLr(data));
    case "slow_update":
      return json(simSlowUpdate(k, data, reqKey));
    case "meta_skill":
      return json(simMetaSkill(data));
    case "appendix_consolidate":
      return json(simAppendix(data));
    case "shorten":
      return json(simShorten(k, user, reqKey));
    case "sleep_rules":
      return json(simRules(data));
    case "sleep_standing":
      return json(simStanding(data));
    default:
      break;
  }
  if (data.task === "skill_trigger") return simTriggerReply(data, draw, o.lapseRate, reqKey);
  const value = parseTaskValue(block);
  if (!value)
    return "The SkillOpt simulator only answers conventions tasks, trigger tasks and SkillOpt optimizer prompts; it cannot answer this request.";
  if (o.temperature && o.temperature > 0)
    return sampleAnswer(system, value, o.temperature, o.seed, draw(`answer/${reqKey}`), user, o.crowded);
  const lapse = draw(`lapse/${reqKey}`) < o.lapseRate + crowdLapse(system, o.crowded ?? false);
  const fam = family(value.kind);
  // The rule the skill states for this task (scoped rules: stochastic.ts); a confused scope is a draw of its own.
  const rules = followedRules(system, value, user);
  const stated = lapse
    ? undefined
    : rules.length > 1 && draw(`scope/${reqKey}`) < rules[1]![1]
      ? rules[1]![0]
      : rules[0]![0];
  const conv = stated ?? fam.conventions.find((c) => c.id === fam.defaultConvention)!;
  return conv.render(value);
}

const tokens = (s: string) => Math.ceil(s.length / 4);

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return;
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
      },
      { once: true },
    );
  });
}

/** The in-process simulator as a ChatBackend for one role (deterministic for a seed). */
export function createSimBackend(role: Role, config: TrainConfig): ChatBackend {
  const o = simOptions(config);
  return {
    name: "sim",
    endpoint: `sim:${role}`,
    defaultModel: SIM_MODEL,
    async complete(
      request: ChatRequest & { model: string },
      opts: { signal?: AbortSignal; timeoutMs: number },
    ): Promise<RawCompletion> {
      await sleep(o.latencyMs, opts.signal);
      // The judge's verdicts come from the simulated judge (quoted texts in the rubric), not the target.
      const reply =
        request.stage === "judge"
          ? simJudge(request.messages)
          : simAnswer(request.messages, request.sampleIndex ?? 0, o);
      const prompt = request.messages.reduce((n, m) => n + tokens(text(m.content)), 0);
      return {
        text: reply,
        finishReason: "stop",
        toolCalls: [],
        usage: { promptTokens: prompt, completionTokens: tokens(reply), cachedTokens: 0, reasoningTokens: 0 },
        model: SIM_MODEL,
        providerCostUsd: 0,
      };
    },
  };
}
