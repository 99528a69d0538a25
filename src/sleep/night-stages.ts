import { mapLimit } from "../engine/index.ts";
import type { SleepBackend } from "./backend/types.ts";
import { BudgetExhaustedError, type NightLedger } from "./budget.ts";
import type { SleepConfig } from "./config.ts";
import { consolidate } from "./consolidate.ts";
import { maskCredentials } from "../lib/index.ts";
import { dreamAugment, persistentVal, recallTasks } from "./dream.ts";
import type { Evidence } from "./evidence.ts";
import { fanOut } from "./fanout.ts";
import { getRules, skillScaffold } from "./learned-block.ts";
import { checkStanding, verifyLessons } from "./lesson-verify.ts";
import {
  applyLessonCards,
  type LessonBook,
  type LessonPlan,
  loadBook,
  type ModelRules,
  observe,
  planLessons,
  withRuleHead,
} from "./lessons.ts";
import { type DigestLike, ensureMinVal, mine } from "./mine/index.ts";
import type { NightEvent } from "./night-events.ts";
import { consolidateOptions } from "./night-parts.ts";
import { type ReplayContext, replayBatch } from "./replay.ts";
import type { TasksSource } from "./report.ts";
import { type Baseline, type Proposal, readBaseline } from "./stage.ts";
import type { SleepStore } from "./store-port.ts";
import type { ConsolidateResult, TaskRecord } from "./types.ts";

/** Harvest as the cycle sees it: digests with new content, and a commit of the high-water marks. */
export type HarvestPort = (req: {
  sinceMs: number | undefined;
  limit: number;
}) => Promise<{ digests: DigestLike[]; commit(): void; close?(): void }>;

/** Everything one night needs. */
export interface NightInput {
  config: SleepConfig;
  project: string;
  skillPath: string;
  memoryPath: string;
  /** Further memory files the night's lesson edits are staged for too (one staged file each). */
  extraMemoryPaths?: string[];
  stateDir: string;
  dry: boolean;
  backend: SleepBackend;
  store: SleepStore;
  harvest: HarvestPort;
  split: { val: number; test: number };
  /** Skill roots for fan-out resolution (spec §7.14). */
  skillRoots?: string[];
  /** Reviewed tasks to replay instead of harvesting. */
  seedTasks?: TaskRecord[];
  /**
   * Where the tasks came from, recorded in the report: mined from the sessions (default without
   * seed tasks), a --tasks-file (default with them), or the sealed pin of a handoff round.
   */
  tasksSource?: TasksSource;
  now?: () => number;
  /**
   * The night's typed events (phases, warnings). The caller words them (cli/ through report/'s
   * nightEventText), so sleep/ holds no wording and does not import report/.
   */
  onEvent: (e: NightEvent) => void;
  /** Replay progress per phase (done of total). */
  onProgress?: (phase: string, done: number, total: number) => void;
  /** Called with the mined (or seeded) tasks before replay, e.g. to pin them for handoff rounds. */
  onTasks?: (tasks: readonly TaskRecord[], nSessions: number) => void;
}

/** What every stage of one night shares: its input, number, start, evidence log, ledger and replay context. */
export interface NightContext {
  input: NightInput;
  cfg: SleepConfig;
  night: number;
  startedMs: number;
  now: () => number;
  emit: (e: NightEvent) => void;
  evidence: Evidence;
  ledger: NightLedger;
  replay: ReplayContext;
  /** Handles to release when the night ends, however it ends (the harvest's readers). */
  cleanup: Array<() => void>;
}

/** The live documents a night starts from. */
export interface Baselines {
  skill: Baseline;
  memory: Baseline;
  /** Further memory files lesson edits are staged for. */
  extra: Baseline[];
  /** The skill the night replays with (a scaffold when the live one is empty). */
  skillText: string;
}

/** Read the live skill and memory files the night may propose edits to. */
export function readBaselines(ctx: NightContext): Baselines {
  const { input } = ctx;
  const skill = readBaseline(input.skillPath);
  const memory = readBaseline(input.memoryPath);
  const extra = (input.extraMemoryPaths ?? []).filter((p) => p !== input.memoryPath).map((p) => readBaseline(p));
  ctx.emit({ type: "skill", path: input.skillPath, exists: skill.exists });
  return {
    skill,
    memory,
    extra,
    skillText: skill.text.trim() ? skill.text : skillScaffold(ctx.cfg.managed_skill_name),
  };
}

/** What harvest and mining produced: the tasks, the lesson book, and how to commit the harvest's marks. */
export interface Mined {
  tasks: TaskRecord[];
  nSessions: number;
  /** Lessons (recurring corrections and preferences), learned from harvested sessions, model or not. */
  book: LessonBook | undefined;
  sessionDates: Map<string, { source: string; at: string }>;
  /** Commit the harvest's high-water marks (only once the night has ended well). */
  commit: () => void;
  /** The secret guard's notes so far. */
  secretNotes: string[];
}

/**
 * A model's reading of each session's standing rules (sessions with a follow-up turn only; the
 * opening request alone holds none). Transport and answer failures stop the night like any other
 * model call; a night ceiling leaves the remaining sessions to the rule-based reading, with a note.
 */
async function readRules(
  backend: SleepBackend,
  digests: readonly DigestLike[],
  workers: number,
  notes: string[],
): Promise<Map<string, ModelRules>> {
  const out = new Map<string, ModelRules>();
  const withFollowUps = (digests as ReadonlyArray<DigestLike & { agent_before?: string[] }>).filter(
    (d) => d.user_prompts.length > 1,
  );
  let capped = 0;
  await mapLimit(withFollowUps, Math.max(1, workers), async (d) => {
    try {
      const rules = await backend.rules!({
        sessionId: d.session_id,
        turns: d.user_prompts.map((user, i) => ({ user, agent: d.agent_before?.[i] ?? "" })),
      });
      out.set(d.session_id, { session_id: d.session_id, rules });
    } catch (err) {
      if (!(err instanceof BudgetExhaustedError)) throw err;
      capped++;
    }
  });
  if (capped)
    notes.push(
      `budget: ${capped} session(s) were read for lessons by rule, not by the model (the night's ceiling was reached)`,
    );
  return out;
}

/** A task with its texts masked of credential-shaped values (ids and checks untouched). */
function maskTask(t: TaskRecord): TaskRecord {
  const m = (s: string) => (s ? maskCredentials(s) : s);
  return {
    ...t,
    intent: m(t.intent) || t.intent,
    context_excerpt: m(t.context_excerpt),
    system: m(t.system),
    attempted_solution: m(t.attempted_solution),
    reference: m(t.reference),
  };
}

/** Harvest: the sessions with new content since the last night, read once, and the lessons they teach. */
async function harvestStage(ctx: NightContext, limit: number) {
  const { cfg, input, emit } = ctx;
  const last = input.store.lastHarvestMs(input.project);
  // Per-session delivery marks make re-reads free, so the window is only a bound on what was
  // never seen: the lookback, widened back to the last night after a longer break.
  const sinceMs =
    cfg.lookback_hours > 0
      ? Math.min(last ?? Number.POSITIVE_INFINITY, ctx.startedMs - cfg.lookback_hours * 3_600_000)
      : undefined;
  emit({ type: "harvest_start", source: String(cfg.transcript_source), maxSessions: limit });
  const h = await input.harvest({ sinceMs, limit });
  if (h.close) ctx.cleanup.push(h.close);
  const sessionDates = new Map<string, { source: string; at: string }>();
  for (const d of h.digests as Array<DigestLike & { source?: string; ended_at?: string; started_at?: string }>)
    sessionDates.set(d.session_id, { source: d.source ?? "", at: d.ended_at || d.started_at || "" });
  const secretNotes: string[] = [];
  let book: LessonBook | undefined;
  if (cfg.learn_lessons && cfg.evolve_memory) {
    book = loadBook(input.stateDir, input.project);
    // With a model (or handoff), the model reads each new session's standing rules; mock reads them by rule.
    const modelRules =
      input.backend.rules && cfg.llm_mine
        ? await readRules(input.backend, h.digests, cfg.workers, secretNotes)
        : undefined;
    const seen = observe(book, h.digests, ctx.night, modelRules);
    if (seen.credentialSentences)
      secretNotes.push(
        `secret-guard: ${seen.credentialSentences} sentence(s) holding something credential-shaped were kept out of lessons`,
      );
  }
  for (const d of h.digests)
    ctx.evidence.log("harvest", "session", {
      id: d.session_id,
      project: d.project,
      prompts: d.user_prompts.length,
      first_prompts: d.user_prompts.slice(0, 6).map((p) => p.slice(0, 200)),
      feedback: d.feedback_signals,
    });
  emit({ type: "harvest_done", sessions: h.digests.length });
  return { digests: h.digests, commit: h.commit, book, sessionDates, secretNotes };
}

/** Harvest → mine: tasks from the sessions (or the reviewed seed tasks), masked of credentials. */
export async function harvestAndMine(ctx: NightContext, base: Baselines): Promise<Mined> {
  const { cfg, input, emit } = ctx;
  let mined: Mined;
  if (input.seedTasks) {
    emit({ type: "tasks_file", tasks: input.seedTasks.length });
    mined = {
      tasks: input.seedTasks,
      nSessions: 0,
      book: undefined,
      sessionDates: new Map(),
      commit: () => {},
      secretNotes: [],
    };
  } else {
    const limit = cfg.max_sessions_per_night ?? 3 * cfg.max_tasks_per_night;
    const h = await harvestStage(ctx, limit);
    const useLlm = input.backend.remote && cfg.llm_mine;
    emit({ type: "mine_start", maxTasks: cfg.max_tasks_per_night, llm: Boolean(useLlm) });
    const target =
      cfg.target_task_filter && cfg.target_skill_path && base.skill.text.trim()
        ? { text: base.skill.text, path: input.skillPath }
        : undefined;
    const tasks = await mine(h.digests, {
      maxTasks: cfg.max_tasks_per_night,
      maxSessions: limit,
      val: input.split.val,
      test: input.split.test,
      seed: cfg.seed,
      llm: useLlm ? input.backend : undefined,
      evidence: ctx.evidence,
      target,
    });
    // Credentials said in prose leave the tasks before they are replayed, archived or reported.
    mined = { ...h, tasks: tasks.map(maskTask), nSessions: h.digests.length };
    emit({ type: "mine_done", tasks: mined.tasks.length });
  }
  input.onTasks?.(mined.tasks, mined.nSessions);
  for (const t of mined.tasks)
    ctx.evidence.log("mine", "task_ready", {
      id: t.id,
      split: t.split,
      origin: t.origin,
      intent: t.intent.slice(0, 300),
      kind: t.reference_kind,
      checks: t.judge,
      rubric: t.reference_kind === "rubric" ? t.reference : "",
      sources: t.source_sessions,
    });
  return mined;
}

/** What the night replays: the checkable tasks, held-out ones carried over, recalled and dreamt variants. */
export interface ReplayPlan {
  replayable: TaskRecord[];
  notes: string[];
}

/** Plan: which tasks are replayed, and the notes that say why some are not. */
export function planReplay(ctx: NightContext, tasks: readonly TaskRecord[]): ReplayPlan {
  const { cfg, input } = ctx;
  const checkable = cfg.replay_uncheckable ? [...tasks] : tasks.filter((t) => t.reference_kind !== "none");
  const archive = checkable.length ? input.store.archivedTasks(input.project, 300) : [];
  const carried = persistentVal(checkable, archive, cfg.min_val_tasks);
  const gated = ensureMinVal([...checkable, ...carried], cfg.min_val_tasks, cfg.seed);
  const replayable = dreamAugment([...gated, ...recallTasks(gated, archive, cfg.recall_k)], cfg.dream_factor);
  const notes: string[] = [];
  if (carried.length)
    notes.push(
      `${carried.length} held-out task(s) carried over from earlier nights to reach min_val_tasks=${cfg.min_val_tasks}`,
    );
  if (checkable.length < tasks.length)
    notes.push(
      `${tasks.length - checkable.length} task(s) without a checkable reference were not replayed (to judge them against their own intent, set \
replay_uncheckable: true in the Sleep config file, ~/.skillopt-sleep/config.yaml; there is no flag for it)`,
    );
  return { replayable, notes };
}

/** What replay behind the gate decided: the managed documents' verdict, and the per-skill fan-out. */
export interface Gated {
  result: ConsolidateResult | undefined;
  fan: Awaited<ReturnType<typeof fanOut>>;
}

/** Score the held-out test split under the accepted documents (a report figure; a night ceiling skips it). */
async function scoreTestSplit(
  ctx: NightContext,
  tasks: readonly TaskRecord[],
  result: ConsolidateResult,
): Promise<void> {
  const test = tasks.filter((t) => t.split === "test" && t.reference_kind !== "none");
  if (!test.length) return;
  // Only a night ceiling skips the held-out score; any other failure stops the night, as in the
  // engine (an auth or transport failure is never reported as "0 tasks, hard 0.000").
  const tr = await replayBatch(ctx.replay, test, result.newSkill, result.newMemory, "test").catch((err: unknown) => {
    if (err instanceof BudgetExhaustedError) return undefined;
    throw err;
  });
  if (tr) {
    const hard = tr.reduce((a, r) => a + r.hard, 0) / Math.max(1, tr.length);
    ctx.evidence.log("test", "held_out_score", {
      night: ctx.night,
      n_test: tr.length,
      hard,
      accepted: result.accepted,
    });
    result.notes.push(`held-out test split: ${tr.length} task(s), hard ${hard.toFixed(3)}`);
  } else {
    result.notes.push("held-out test split not scored: the night's budget ran out");
  }
}

/** Replay → gate: consolidate the managed skill and memory, score the test split, fan out per skill. */
export async function replayAndGate(
  ctx: NightContext,
  base: Baselines,
  tasks: readonly TaskRecord[],
  plan: ReplayPlan,
): Promise<Gated> {
  const { cfg, input, emit } = ctx;
  let result: ConsolidateResult | undefined;
  if (plan.replayable.length > 0) {
    emit({ type: "consolidate_start", tasks: plan.replayable.length });
    const rejectedBefore = input.store.rejectedEditTexts(input.project, 50);
    result = await consolidate(ctx.replay, {
      ...consolidateOptions(cfg, base.memory.text, rejectedBefore),
      tasks: plan.replayable,
      skill: base.skillText,
    });
    result.notes.unshift(...plan.notes);
    emit({
      type: "consolidate_done",
      gateAction: result.gateAction,
      accepted: result.accepted,
      applied: result.applied.length,
      rejected: result.rejected.length,
      unmatched: result.unmatched.length,
    });
    await scoreTestSplit(ctx, tasks, result);
  }
  let fan: Gated["fan"] = { rows: [], proposals: [], notes: [] };
  const fanoutOn = cfg.multi_skill_fanout ?? cfg.multi_skill_report;
  if (result && fanoutOn && cfg.evolve_skill) {
    emit({ type: "fanout_start" });
    fan = await fanOut(
      ctx.replay,
      plan.replayable,
      consolidateOptions(cfg, base.memory.text, input.store.rejectedEditTexts(input.project, 50)),
      {
        managedName: cfg.managed_skill_name,
        roots: input.skillRoots ?? [],
        managedSkillPath: base.skill.realpath,
      },
    );
    result.notes.push(...fan.notes);
    emit({ type: "fanout_done", groups: fan.rows.length, accepted: fan.proposals.length });
  }
  input.backend.settle?.();
  return { result, fan };
}

/** The lesson edits a night proposes, and the further memory files they are staged for. */
export interface Lessons {
  plan: LessonPlan | undefined;
  extraMemory: Proposal[];
}

/** Lessons: plan the memory edits the book holds, ask the model whether each is standing, verify them by replay. */
export async function lessonStage(
  ctx: NightContext,
  base: Baselines,
  book: LessonBook | undefined,
  result: ConsolidateResult | undefined,
): Promise<Lessons> {
  const { cfg, input, emit, ledger } = ctx;
  const backend = input.backend;
  const extraMemory: Proposal[] = [];
  if (!book) return { plan: undefined, extraMemory };
  const memoryNow = result?.accepted && result.newMemory !== base.memory.text ? result.newMemory : base.memory.text;
  const covered = [...getRules(base.skill.text), ...(result?.accepted ? getRules(result.newSkill) : [])];
  const lessons = planLessons(book, ctx.night, memoryNow, {
    target: input.memoryPath,
    retireAfterNights: cfg.lesson_retire_nights,
    covered,
  });
  lessons.memory = withRuleHead(memoryNow, lessons.memory, input.memoryPath);
  // With a model: standing rule or one-off? asked before anything is replayed.
  if (backend.standing && cfg.llm_mine && lessons.cards.length) {
    const st = await checkStanding(backend, lessons.cards, { baseMemory: memoryNow, proposedMemory: lessons.memory });
    lessons.memory = withRuleHead(memoryNow, st.memory, input.memoryPath);
    lessons.notes.push(...st.notes);
    // Handoff: the questions just written are waiting for answers; nothing is staged before them.
    backend.settle?.();
  }
  if (backend.remote && lessons.cards.length) {
    emit({ type: "lessons_verify", edits: lessons.cards.length });
    const v = await verifyLessons(ctx.replay, lessons.cards, {
      skill: result?.accepted ? result.newSkill : base.skillText,
      baseMemory: memoryNow,
      proposedMemory: lessons.memory,
    });
    lessons.memory = v.memory;
    lessons.notes.push(...v.notes);
  }
  // One lesson, every agent: the same edits, staged for each further memory file the project uses.
  if (lessons.memory) {
    for (const b of base.extra) {
      const text = applyLessonCards(b.text, lessons.cards, b.path);
      if (text) extraMemory.push({ which: "memory", text, baseline: b });
    }
  }
  const lessonTargets = [input.memoryPath, ...extraMemory.map((p) => p.baseline.path)];
  for (const c of lessons.cards) {
    c.cost = { tokens: ledger.tokens, cost_usd: ledger.costUsd };
    if (lessonTargets.length > 1) c.targets = lessonTargets;
  }
  for (const c of lessons.cards)
    ctx.evidence.log("lessons", "proposed", {
      id: c.id,
      op: c.op,
      rule: c.rule,
      recurrences: c.recurrences,
      sessions: c.sources.map((x) => x.session_id),
      verification: c.verification,
    });
  emit({ type: "lessons_done", edits: lessons.cards.length });
  return { plan: lessons, extraMemory };
}
