import type { RoundBatching } from "../../engine/index.ts";
import type { NightLedger } from "../budget.ts";
import type { ConnectModels } from "../ports.ts";
import type { JudgeScore } from "../judges.ts";
import type { EditRecord, ReplayResult, TaskRecord } from "../types.ts";

/** What building a Sleep backend takes. */
export interface SleepBackendOptions {
  project: string;
  env: Readonly<Record<string, string | undefined>>;
  stateDir?: string;
  /** The model layer for a provider backend, built by the CLI (mock and handoff need none). */
  connect?: ConnectModels;
}

/** What reflection sees (spec §6.2). */
export interface ReflectInput {
  failures: Array<{ task: TaskRecord; result: ReplayResult }>;
  successes: Array<{ task: TaskRecord; result: ReplayResult }>;
  skill: string;
  memory: string;
  editBudget: number;
  target: "skill" | "memory";
  /** Edits rejected on earlier nights (never re-propose them; spec §12.2). */
  rejectedBefore: readonly string[];
  preferences: string;
}

/** Good vs bad attempts of one task, for contrastive reflection (spec §5.6). */
export interface ContrastSet {
  task: TaskRecord;
  best: ReplayResult;
  worst: ReplayResult;
  bestScore: number;
  worstScore: number;
}

/** A digest summary for the LLM miner. */
export interface MineInput {
  project: string;
  sessionId: string;
  prompts: readonly string[];
  finalAnswer: string;
  feedback: readonly string[];
}

/** One session's turns as the rules reader sees them: what the agent did, then what the user said. */
export interface RulesInput {
  sessionId: string;
  turns: ReadonlyArray<{ agent: string; user: string }>;
}

/** Raw task candidate returned by an LLM miner. */
export interface MinedCandidate {
  intent: string;
  checks: Array<{ op: string; arg: unknown }>;
  rubric: string;
  satisfied: boolean | undefined;
}

/** One attempt's answer; `error` (with the reason) when it got none: a transport failure, a 5xx after retries, a crashed agent. */
interface Attempt {
  text: string;
  toolsCalled: string[];
  tokens: number;
  error?: string;
}

/**
 * A Sleep backend (spec §5.1). `attempt` answers one task under a skill + memory; `judge` scores a
 * rubric/none task (rule and exact references are scored locally, never here); `reflect` proposes
 * at most `editBudget` edits. Implementations never throw for a per-task failure: they return no
 * text with `error` (and set `lastError`), and a judge whose verdict does not parse returns `error`;
 * the replay is then an error, never a score. They throw only for systemic failures (auth, budget,
 * pending handoff calls).
 * A backend on the model layer batches a phase's replays through it (sleep.batch, `RoundBatching`).
 */
export interface SleepBackend extends RoundBatching {
  readonly name: string;
  /** One line naming the backend and what answers each role (printed when a night starts). */
  readonly describe: string;
  /** `<backend>::<model>` (spec §6.11). */
  readonly modelKey: string;
  /** Makes provider calls (false for mock and handoff). */
  readonly remote: boolean;
  /** A role as errors name it: its backend, model and endpoint (a provider backend's; others have none). */
  label?(role: "optimizer" | "target"): string;
  lastError: string;
  /** The night's ledger; set by the cycle, checked before and charged after every provider call. */
  ledger?: NightLedger;
  attempt(
    task: TaskRecord,
    skill: string,
    memory: string,
    sampleId: number,
    tools: readonly string[],
  ): Promise<Attempt>;
  judge(task: TaskRecord, response: string): Promise<JudgeScore & { tokens: number; error?: string }>;
  reflect(input: ReflectInput): Promise<{ edits: EditRecord[]; raw: string; tokens: number }>;
  /** Contrastive reflection over good/bad attempt pairs; undefined when not offered (then plain reflect runs). */
  contrast?(
    sets: readonly ContrastSet[],
    input: Omit<ReflectInput, "failures" | "successes">,
  ): Promise<{ edits: EditRecord[]; raw: string; tokens: number }>;
  /** Throw when answers are still outstanding (handoff), so an unfinished night is never staged. */
  settle?(): void;
  /** Release provider resources (the call cache handle, child backends). */
  close?(): Promise<void>;
  /** LLM mining of one session; undefined when the backend does not mine (mock). */
  mine?(input: MineInput): Promise<MinedCandidate[]>;
  /** A session's standing rules, normalised, each with the user's words; undefined when the backend reads none (mock). */
  rules?(input: RulesInput): Promise<Array<{ rule: string; quote: string }>>;
  /** Whether a recurring rule is a standing rule (true) or a one-off request (false); undefined when unanswered. */
  standing?(rule: string, quotes: readonly string[]): Promise<boolean | undefined>;
}
