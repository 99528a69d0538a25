import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import type { ModelClient } from "../../engine/index.ts";
import {
  answerSample,
  BackendError,
  contextTooSmall,
  endpointHost,
  ModelUnfitError,
  InternalError,
  UnsupportedError,
  errorMessage,
  extractJson,
  redactText,
} from "../../lib/index.ts";
import type { SleepConfig } from "../config.ts";
import type { EditRecord } from "../types.ts";
import {
  attemptPrompt,
  contrastPrompt,
  judgePrompt,
  minerPrompt,
  reflectPrompt,
  rulesPrompt,
  standingPrompt,
  toolShim,
  toolTaskPrompt,
} from "./prompts.ts";
import { parseRules, parseStanding } from "./rules.ts";
import type { MinedCandidate, SleepBackend, SleepBackendOptions } from "./types.ts";

const JudgeSchema = v.object({
  score: v.pipe(v.number(), v.minValue(0), v.maxValue(1)),
  reason: v.optional(v.string(), ""),
});
const EditSchema = v.looseObject({
  op: v.optional(v.string(), "add"),
  content: v.string(),
  anchor: v.optional(v.string(), ""),
  rationale: v.optional(v.string(), ""),
});
const CandidateSchema = v.looseObject({
  intent: v.optional(v.string(), ""),
  checks: v.optional(v.array(v.looseObject({ op: v.string(), arg: v.optional(v.unknown(), null) })), () => []),
  rubric: v.optional(v.string(), ""),
  satisfied: v.optional(v.boolean()),
});

/** An attempt that got no answer (its `error` says why). */
const NO_ANSWER = { text: "", toolsCalled: [] as string[], tokens: 0 };

/**
 * Consecutive unusable answers of one stage that stop a night: judge verdicts, reflections (after
 * their firmer re-ask), a session's rules, standing verdicts, mined tasks.
 */
const UNUSABLE_CALLS = 2;

const FIX = {
  optimizer:
    "use a stronger optimizer model (sleep config optimizer_model / optimizer_backend, or another --backend); the night staged nothing",
  target:
    "use a target model with a larger context window (sleep config target_model / target_backend); the night staged nothing",
} as const;

/**
 * What stops a night whose model cannot do the job: a prompt refused as longer than the model's
 * context, or a stage whose answers never parse, call after call.
 */
function unfitWatch(label: (role: "optimizer" | "target") => string) {
  const streak = new Map<string, number>();
  return {
    /** A context-length refusal as the night's error; any other failure passes through. */
    context(err: unknown, role: "optimizer" | "target", stage: string): unknown {
      if (!(err instanceof BackendError) || err.kind !== "context_length") return err;
      return contextTooSmall(err, { role, stage, hint: FIX[role], who: label(role) });
    },
    /** Count one answer of a stage; the error to stop with once UNUSABLE_CALLS in a row were unusable. */
    answered(stage: string, usable: boolean, why: string, text: string): ModelUnfitError | undefined {
      const n = usable ? 0 : (streak.get(stage) ?? 0) + 1;
      streak.set(stage, n);
      if (n < UNUSABLE_CALLS) return undefined;
      const said = answerSample(text);
      return new ModelUnfitError(
        `${label("optimizer")} gave no usable ${stage} answer in ${n} consecutive calls (${why})${said ? `; it answered: "${said}"` : ""}`,
        {
          hint: FIX.optimizer,
          data: {
            role: "optimizer",
            stage,
            cause: "unusable_answers",
            steps: n,
            reason: why,
            ...(said ? { sample: said } : {}),
          },
        },
      );
    },
  };
}

/** What a model backend's calls share: the client, the backend's ledger and last error, the unfit watch. */
interface Parts {
  client: ModelClient;
  self: Pick<SleepBackend, "ledger" | "lastError">;
  watch: ReturnType<typeof unfitWatch>;
}

/** One attempt on the target role (tools through the agent runner when the task needs them); no answer is `error`, never a wrong answer. */
function attemptCall({ client, self, watch }: Parts): SleepBackend["attempt"] {
  return async (task, skill, memory, sampleId, tools) => {
    self.ledger?.check();
    const runner = tools.length ? client.taskRunner() : undefined;
    if (runner) {
      // Honest tool detection: the agent runs real shim scripts that log their own name.
      let log = "";
      const files = Object.fromEntries(tools.map((t) => [`tools/${t}`, toolShim(t)]));
      const traj = await runner.runTask(
        `${skill}\n\n${memory}`,
        { id: task.id, prompt: toolTaskPrompt(task, skill, memory, tools), files, allowEdits: true },
        {
          inspect: async (ws) => {
            const f = join(ws, "_tool_calls.log");
            log = existsSync(f) ? readFileSync(f, "utf8") : "";
          },
        },
      );
      const tokens = traj.usage.promptTokens + traj.usage.completionTokens;
      self.ledger?.record("attempt_tools", tokens, traj.costUsd, false);
      const ran = new Set(log.split("\n").map((l) => l.trim().toLowerCase()));
      const toolsCalled = tools.filter((t) => ran.has(t.toLowerCase()));
      if (!traj.error) return { text: traj.finalAnswer, toolsCalled, tokens };
      self.lastError = redactText(traj.error);
      // An agent run that failed and said nothing got no answer: an error, never a wrong answer.
      return traj.finalAnswer
        ? { text: traj.finalAnswer, toolsCalled, tokens }
        : { ...NO_ANSWER, error: self.lastError };
    }
    try {
      const r = await client.chat("target", {
        stage: "sleep_attempt",
        messages: [{ role: "user", content: attemptPrompt(task, skill, memory, tools) }],
        maxTokens: 1024,
        sampleIndex: sampleId,
      });
      const tokens = r.usage.promptTokens + r.usage.completionTokens;
      self.ledger?.record("attempt", tokens, r.costUsd, r.cached);
      const called = tools.filter((t) =>
        new RegExp(`\\bTOOL_CALL:\\s*${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(r.text),
      );
      return { text: r.text, toolsCalled: called, tokens };
    } catch (err) {
      self.ledger?.release();
      if (err instanceof BackendError && (err.kind === "auth" || err.kind === "not_found")) throw err;
      if (err instanceof BackendError && err.kind === "context_length")
        throw watch.context(err, "target", "sleep_attempt");
      if (!(err instanceof BackendError)) throw err;
      // A transport failure or a 5xx after the layer's retries: no answer, never scored as a wrong one.
      self.lastError = redactText(errorMessage(err));
      return { ...NO_ANSWER, error: self.lastError };
    }
  };
}

/** A rubric verdict from the optimizer; one that does not parse is `error` (two in a row stop the night as unfit). */
function judgeCall({ client, self, watch }: Parts): SleepBackend["judge"] {
  return async (task, response) => {
    self.ledger?.check();
    let r: Awaited<ReturnType<typeof client.chatJson<typeof JudgeSchema>>>;
    try {
      r = await client.chatJson(
        "optimizer",
        {
          stage: "sleep_judge",
          messages: [{ role: "user", content: judgePrompt(task.reference || task.intent, response) }],
          maxTokens: 200,
          json: true,
        },
        JudgeSchema,
      );
    } catch (err) {
      throw watch.context(err, "optimizer", "sleep_judge");
    }
    const tokens = r.response ? r.response.usage.promptTokens + r.response.usage.completionTokens : 0;
    self.ledger?.record("judge", tokens, r.response?.costUsd ?? null, r.response?.cached ?? false);
    const unfit = watch.answered("sleep_judge", r.ok, r.ok ? "" : r.reason, r.response?.text ?? "");
    if (unfit) throw unfit;
    // A verdict that does not parse is no verdict: the replay errs, it does not score 0.
    if (!r.ok)
      return {
        hard: 0,
        soft: 0,
        rationale: "judge-parse-failed",
        tokens,
        error: `judge verdict did not parse (${r.reason})`,
      };
    return {
      hard: r.value.score >= 0.8 ? 1 : 0,
      soft: r.value.score,
      rationale: r.value.reason || `score ${r.value.score}`,
      tokens,
    };
  };
}

/** Edits from the failures, asked once and once more firmly; two unusable answers in a row stop the night. */
function reflectCall({ client, self, watch }: Parts): SleepBackend["reflect"] {
  return async (input) => {
    if (input.failures.length === 0) return { edits: [], raw: "", tokens: 0 };
    let raw = "";
    let tokens = 0;
    for (const firm of [false, true]) {
      self.ledger?.check();
      const r = await client
        .chat("optimizer", {
          stage: "sleep_reflect",
          messages: [{ role: "user", content: reflectPrompt(input, firm) }],
          maxTokens: 1024,
        })
        .catch((err: unknown) => {
          throw watch.context(err, "optimizer", "sleep_reflect");
        });
      tokens += r.usage.promptTokens + r.usage.completionTokens;
      self.ledger?.record("reflect", r.usage.promptTokens + r.usage.completionTokens, r.costUsd, r.cached);
      raw = r.text;
      const arr = extractJson(raw, "array");
      const unfit = watch.answered("sleep_reflect", arr !== undefined, "no JSON array of edits in the reply", raw);
      if (unfit) throw unfit;
      if (!arr || arr.length === 0) continue;
      const edits: EditRecord[] = [];
      for (const item of arr) {
        const p = v.safeParse(EditSchema, item);
        if (!p.success || !p.output.content.trim()) continue;
        const op = p.output.op.toLowerCase();
        edits.push({
          target: input.target,
          op: op === "delete" || op === "replace" ? op : "add",
          content: p.output.content.trim(),
          anchor: p.output.anchor.trim(),
          rationale: p.output.rationale.trim(),
        });
        if (edits.length >= input.editBudget) break;
      }
      return { edits, raw, tokens };
    }
    return { edits: [], raw, tokens };
  };
}

/** Edits from good-versus-bad attempt pairs (contrastive reflection, spec §5.6). */
function contrastCall({ client, self, watch }: Parts): SleepBackend["contrast"] {
  return async (sets, input) => {
    if (sets.length === 0) return { edits: [], raw: "", tokens: 0 };
    self.ledger?.check();
    const r = await client
      .chat("optimizer", {
        stage: "sleep_contrast",
        messages: [{ role: "user", content: contrastPrompt(sets, input) }],
        maxTokens: 1024,
      })
      .catch((err: unknown) => {
        throw watch.context(err, "optimizer", "sleep_contrast");
      });
    const tokens = r.usage.promptTokens + r.usage.completionTokens;
    self.ledger?.record("contrast", tokens, r.costUsd, r.cached);
    const edits: EditRecord[] = [];
    for (const item of extractJson(r.text, "array") ?? []) {
      const p = v.safeParse(EditSchema, item);
      if (p.success && p.output.content.trim())
        edits.push({
          target: input.target,
          op: "add",
          content: p.output.content.trim(),
          anchor: "",
          rationale: p.output.rationale.trim(),
        });
      if (edits.length >= input.editBudget) break;
    }
    return { edits, raw: r.text, tokens };
  };
}

/** A session's standing rules, read by the optimizer. */
function rulesCall({ client, self, watch }: Parts): SleepBackend["rules"] {
  return async (input) => {
    self.ledger?.check();
    const r = await client
      .chat("optimizer", {
        stage: "sleep_rules",
        messages: [{ role: "user", content: rulesPrompt(input) }],
        maxTokens: 800,
      })
      .catch((err: unknown) => {
        throw watch.context(err, "optimizer", "sleep_rules");
      });
    self.ledger?.record("rules", r.usage.promptTokens + r.usage.completionTokens, r.costUsd, r.cached);
    // "[]" says the session holds no rule; prose is no answer, and twice in a row stops the night.
    const usable = extractJson(r.text, "array") !== undefined;
    const unfit = watch.answered("sleep_rules", usable, "no JSON array of rules in the reply", r.text);
    if (unfit) throw unfit;
    return parseRules(r.text);
  };
}

/** Whether a recurring rule is standing or a one-off, by the optimizer. */
function standingCall({ client, self, watch }: Parts): SleepBackend["standing"] {
  return async (rule, quotes) => {
    self.ledger?.check();
    const r = await client
      .chat("optimizer", {
        stage: "sleep_standing",
        messages: [{ role: "user", content: standingPrompt(rule, quotes) }],
        maxTokens: 200,
      })
      .catch((err: unknown) => {
        throw watch.context(err, "optimizer", "sleep_standing");
      });
    self.ledger?.record("standing", r.usage.promptTokens + r.usage.completionTokens, r.costUsd, r.cached);
    const verdict = parseStanding(r.text);
    const unfit = watch.answered(
      "sleep_standing",
      verdict !== undefined,
      'no {"standing": true|false} in the reply',
      r.text,
    );
    if (unfit) throw unfit;
    return verdict;
  };
}

/** Task candidates from one session, by the optimizer. */
function mineCall({ client, self, watch }: Parts): SleepBackend["mine"] {
  return async (input) => {
    self.ledger?.check();
    const r = await client
      .chat("optimizer", {
        stage: "sleep_mine",
        messages: [{ role: "user", content: minerPrompt(input) }],
        maxTokens: 800,
      })
      .catch((err: unknown) => {
        throw watch.context(err, "optimizer", "sleep_mine");
      });
    self.ledger?.record("mine", r.usage.promptTokens + r.usage.completionTokens, r.costUsd, r.cached);
    const parsed = extractJson(r.text, "array");
    const unfit = watch.answered("sleep_mine", parsed !== undefined, "no JSON array of tasks in the reply", r.text);
    if (unfit) throw unfit;
    const arr = parsed ?? [];
    const out: MinedCandidate[] = [];
    for (const item of arr) {
      const p = v.safeParse(CandidateSchema, item);
      if (p.success)
        out.push({
          intent: p.output.intent,
          checks: p.output.checks.map((c) => ({ op: c.op, arg: c.arg })),
          rubric: p.output.rubric,
          satisfied: p.output.satisfied,
        });
    }
    return out;
  };
}

/**
 * A Sleep backend over the shared model layer (spec §5.9 expressed as configurations of it): attempts
 * go to the target role, judging, reflection and mining to the optimizer; retries, the call cache and
 * cost accounting are the layer's. Every call is checked against and recorded in the night ledger.
 */
function modelSleepBackend(
  client: ModelClient,
  o: {
    name: string;
    model: string;
    modelKey?: string;
    describe: string;
    label: (role: "optimizer" | "target") => string;
  },
): SleepBackend {
  // The calls charge the night's ledger the cycle gives the backend, and leave their last error on it.
  const state: Parts["self"] = { lastError: "" };
  const parts: Parts = { client, self: state, watch: unfitWatch(o.label) };
  return {
    name: o.name,
    describe: o.describe,
    modelKey: o.modelKey ?? `${o.name}::${o.model}`,
    remote: true,
    get lastError() {
      return state.lastError;
    },
    set lastError(e: string) {
      state.lastError = e;
    },
    get ledger() {
      return state.ledger;
    },
    set ledger(l) {
      state.ledger = l;
    },
    label: o.label,
    ...(client.round && client.batching
      ? { round: client.round.bind(client), batching: client.batching.bind(client) }
      : {}),
    attempt: attemptCall(parts),
    judge: judgeCall(parts),
    reflect: reflectCall(parts),
    contrast: contrastCall(parts),
    rules: rulesCall(parts),
    standing: standingCall(parts),
    mine: mineCall(parts),
  };
}

/** The model a role uses when the config names none: the backend's SKILLOPT_SLEEP_*_MODEL variable, else the backend's own default. */
function defaultModel(b: string, env: SleepBackendOptions["env"]): string {
  const envModel: Record<string, string> = {
    claude: "SKILLOPT_SLEEP_CLAUDE_MODEL",
    codex: "SKILLOPT_SLEEP_CODEX_MODEL",
    copilot: "SKILLOPT_SLEEP_COPILOT_MODEL",
  };
  return (envModel[b] ? env[envModel[b]!] : undefined) ?? "";
}

/**
 * Build a provider-backed Sleep backend as a configuration of the shared model layer (claude and
 * copilot CLIs, codex, the cursor / pi / opencode CLIs headless, Azure / OpenAI-compatible APIs).
 * The client comes through the `connect` port the CLI passes in (Sleep imports no backend).
 */
export async function createModelSleepBackend(cfg: SleepConfig, opts: SleepBackendOptions): Promise<SleepBackend> {
  const target = cfg.target_backend || cfg.backend;
  const optimizer = cfg.optimizer_backend || cfg.backend;
  if (target === "mock" || target === "handoff" || optimizer === "mock" || optimizer === "handoff") {
    throw new UnsupportedError(
      "dual-role routing needs provider backends for both roles (mock and handoff cannot be mixed with a provider)",
      { feature: "dual-role routing", needs: "provider backends for both roles", backend: `${target}+${optimizer}` },
    );
  }
  if (!opts.connect) throw new InternalError(`sleep backend ${cfg.backend} was built without the model layer's port`);
  const { client, describe } = await opts.connect(
    {
      target: { backend: target, model: cfg.target_model || cfg.model || defaultModel(target, opts.env) },
      optimizer: { backend: optimizer, model: cfg.optimizer_model || cfg.model || defaultModel(optimizer, opts.env) },
    },
    cfg,
    { env: opts.env, ...(opts.stateDir ? { stateDir: opts.stateDir } : {}) },
  );
  const model = cfg.target_model || cfg.model || defaultModel(target, opts.env);
  const name = target === optimizer ? cfg.backend : `target=${target}/optimizer=${optimizer}`;
  // spec §6.11: `<backend>::<model>`, or `optimizer=<key>;target=<key>` under dual-role routing.
  const key = (b: string, m: string) => `${b}::${m}`;
  const dual = target !== optimizer || (cfg.optimizer_model && cfg.optimizer_model !== model);
  const modelKey = dual
    ? `optimizer=${key(optimizer, cfg.optimizer_model || cfg.model)};target=${key(target, model)}`
    : key(cfg.backend, model);
  const label = (role: "optimizer" | "target") => {
    const i = client.info[role];
    const host = i?.endpoint ? endpointHost(i.endpoint) : undefined;
    return `${role} (${[i?.backend, i?.model ? `model ${i.model}` : undefined, host ? `endpoint ${host}` : undefined].filter(Boolean).join(", ")})`;
  };
  const backend = modelSleepBackend(client, { name, model, modelKey, describe, label });
  backend.close = () => client.close();
  return backend;
}
