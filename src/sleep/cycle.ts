import { rmSync } from "node:fs";
import { join } from "node:path";
import { PendingCallsError } from "./backend/handoff.ts";
import { log, maskCredentials, processAlive } from "../lib/index.ts";
import { mapLimit } from "../engine/index.ts";
import type { NightEvent } from "./night-events.ts";
import type { SleepBackend } from "./backend/types.ts";
import { BudgetExhaustedError, NightLedger } from "./budget.ts";
import type { SleepConfig } from "./config.ts";
import { consolidate } from "./consolidate.ts";
import { fanOut } from "./fanout.ts";
import { dreamAugment, persistentVal, recallTasks } from "./dream.ts";
import { Evidence, localIso } from "./evidence.ts";
import { getRules, skillScaffold } from "./learned-block.ts";
import { checkStanding, verifyLessons } from "./lesson-verify.ts";
import {
  applyLessonCards,
  editCards,
  type LessonBook,
  type LessonPlan,
  loadBook,
  type ModelRules,
  observe,
  planLessons,
  saveBook,
  withRuleHead,
} from "./lessons.ts";
import { type DigestLike, ensureMinVal, mine } from "./mine/index.ts";
import { replayBatch } from "./replay.ts";
import { guardEvidenceFile, guardProposals, guardReport } from "./secret-guard.ts";
import { consolidateOptions, emptyResult, type NightOutcome, persistNight, writeDiagnostics } from "./night-parts.ts";
import { buildReport, renderReportMd, type TasksSource } from "./report.ts";
import {
  isStaged,
  type Proposal,
  publishNight,
  readBaseline,
  removeStagingTemps,
  removeUnstaged,
  reserveNight,
} from "./stage.ts";
import type { NightRow, SleepStore } from "./store-port.ts";
import type { ConsolidateResult, TaskRecord } from "./types.ts";

/** Harvest as the cycle sees it: digests with new content, and a commit of the high-water marks. */
export type HarvestPort = (req: {
  sinceMs: number | undefined;
  limit: number;
}) => Promise<{ digests: DigestLike[]; commit(): void; close?(): void }>;

/** Everything one night needs. */
interface NightInput {
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
  /** Called with the mined (or seeded) tasks before replay, e.g. to pin them for handoff rounds. */
  /** Replay progress per phase (done of total). */
  onProgress?: (phase: string, done: number, total: number) => void;
  onTasks?: (tasks: readonly TaskRecord[], nSessions: number) => void;
}

export type { NightOutcome };

/** Whether a night left 'running' by a killed process had staged its proposal (it is then kept). */
const stagedBeforeDeath = (dead: NightRow) => Boolean(dead.staging_dir) && isStaged(dead.staging_dir);

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

/**
 * Settle the nights a killed process left 'running' (kill -9, a crash, a power cut). One that
 * staged nothing is forgotten: its rows go, so its number is given to the next night and the
 * nights a lesson waited are not counted one too many; its half-written folder goes too (§12.1
 * #18, as for a night that failed). One that had staged its proposal stays, marked interrupted.
 * The temp files killed writes left in the staging folders go too.
 */
function settleDeadNights(store: SleepStore, project: string): void {
  for (const dead of store.deadNights(processAlive)) {
    if (stagedBeforeDeath(dead)) {
      store.interruptNight(dead.night);
      removeStagingTemps(dead.project, dead.staging_dir);
      continue;
    }
    store.abandonNight(dead.night);
    removeUnstaged(dead.project, dead.staging_dir);
    log.debug(`night ${dead.night} was killed before it staged anything: forgotten`);
  }
  removeStagingTemps(project);
}

/** The dead nights the next real night will forget (a dry-run settles nothing, but numbers as if it had). */
function forgettable(store: SleepStore): number[] {
  return store
    .deadNights(processAlive)
    .filter((d) => !stagedBeforeDeath(d))
    .map((d) => d.night);
}

/** The night's staging folder, recorded in its row before it is created; the night is forgotten if that fails. */
function reserveFor(store: SleepStore, night: number, project: string, startedMs: number): string {
  try {
    return reserveNight(project, new Date(startedMs), (dir) => store.setNightDir(night, dir));
  } catch (err) {
    store.abandonNight(night);
    throw err;
  }
}

/** Run one night: harvest → mine → replay → consolidate behind the gate → stage (spec §6.8). */
export async function runNight(input: NightInput): Promise<NightOutcome> {
  const { config: cfg, store, backend, project } = input;
  const now = input.now ?? Date.now;
  const startedMs = now();
  const emit = input.onEvent;
  const previousKey = store.lastModelKey();
  const modelChanged = previousKey !== undefined && previousKey !== backend.modelKey;
  if (previousKey !== undefined && modelChanged)
    emit({ type: "model_changed", previous: previousKey, current: backend.modelKey });
  if (!input.dry) settleDeadNights(store, project);
  const night = input.dry
    ? store.peekNight(forgettable(store))
    : store.beginNight(project, startedMs, backend.modelKey);
  const stagingDir = input.dry ? "" : reserveFor(store, night, project, startedMs);
  const evidencePath = input.dry
    ? join(input.stateDir, "evidence", `dryrun-${night}-${startedMs}.jsonl`)
    : join(stagingDir, "evidence.jsonl");
  const evidence = new Evidence(cfg.evidence_log ? evidencePath : undefined, {
    maxChars: cfg.evidence_max_chars,
    redact: cfg.redact_secrets,
  });
  const ledger = new NightLedger(
    {
      tokens: cfg.max_tokens_per_night,
      calls: cfg.max_calls_per_night,
      seconds: cfg.max_seconds_per_night,
      costUsd: cfg.max_cost_usd_per_night,
    },
    now,
  );
  backend.ledger = ledger;
  evidence.log("cycle", "start", {
    night,
    project,
    backend: backend.name,
    model: cfg.model,
    dry: input.dry,
    edit_budget: cfg.edit_budget,
    gate_mode: cfg.gate_mode,
  });
  emit({ type: "night", night, project, backend: backend.name });
  let closeHarvest: (() => void) | undefined;
  try {
    const skillBase = readBaseline(input.skillPath);
    const memoryBase = readBaseline(input.memoryPath);
    const extraBases = (input.extraMemoryPaths ?? []).filter((p) => p !== input.memoryPath).map((p) => readBaseline(p));
    const extraMemory: Proposal[] = [];
    emit({ type: "skill", path: input.skillPath, exists: skillBase.exists });
    const skillText = skillBase.text.trim() ? skillBase.text : skillScaffold(cfg.managed_skill_name);

    let nSessions = 0;
    let tasks: TaskRecord[];
    // Lessons (recurring corrections and preferences) are learned from harvested sessions, model or not.
    let book: LessonBook | undefined;
    const sessionDates = new Map<string, { source: string; at: string }>();
    let commitHarvest = () => {};
    const secretNotes: string[] = [];
    if (input.seedTasks) {
      tasks = input.seedTasks;
      emit({ type: "tasks_file", tasks: tasks.length });
    } else {
      const limit = cfg.max_sessions_per_night ?? 3 * cfg.max_tasks_per_night;
      const last = store.lastHarvestMs(project);
      // Per-session delivery marks make re-reads free, so the window is only a bound on what was
      // never seen: the lookback, widened back to the last night after a longer break.
      const sinceMs =
        cfg.lookback_hours > 0
          ? Math.min(last ?? Number.POSITIVE_INFINITY, startedMs - cfg.lookback_hours * 3_600_000)
          : undefined;
      emit({ type: "harvest_start", source: String(cfg.transcript_source), maxSessions: limit });
      const h = await input.harvest({ sinceMs, limit });
      nSessions = h.digests.length;
      commitHarvest = h.commit;
      closeHarvest = h.close;
      for (const d of h.digests as Array<DigestLike & { source?: string; ended_at?: string; started_at?: string }>)
        sessionDates.set(d.session_id, { source: d.source ?? "", at: d.ended_at || d.started_at || "" });
      if (cfg.learn_lessons && cfg.evolve_memory) {
        book = loadBook(input.stateDir, project);
        // With a model (or handoff), the model reads each new session's standing rules; mock reads them by rule.
        const modelRules =
          backend.rules && cfg.llm_mine ? await readRules(backend, h.digests, cfg.workers, secretNotes) : undefined;
        const seen = observe(book, h.digests, night, modelRules);
        if (seen.credentialSentences)
          secretNotes.push(
            `secret guard: ${seen.credentialSentences} sentence(s) holding something credential-shaped were kept out of lessons`,
          );
      }
      for (const d of h.digests)
        evidence.log("harvest", "session", {
          id: d.session_id,
          project: d.project,
          prompts: d.user_prompts.length,
          first_prompts: d.user_prompts.slice(0, 6).map((p) => p.slice(0, 200)),
          feedback: d.feedback_signals,
        });
      emit({ type: "harvest_done", sessions: nSessions });
      const useLlm = backend.remote && cfg.llm_mine;
      emit({ type: "mine_start", maxTasks: cfg.max_tasks_per_night, llm: Boolean(useLlm) });
      const target =
        cfg.target_task_filter && cfg.target_skill_path && skillBase.text.trim()
          ? { text: skillBase.text, path: input.skillPath }
          : undefined;
      tasks = await mine(h.digests, {
        maxTasks: cfg.max_tasks_per_night,
        maxSessions: limit,
        val: input.split.val,
        test: input.split.test,
        seed: cfg.seed,
        llm: useLlm ? backend : undefined,
        evidence,
        target,
      });
      // Credentials said in prose leave the tasks before they are replayed, archived or reported.
      tasks = tasks.map(maskTask);
      emit({ type: "mine_done", tasks: tasks.length });
    }
    input.onTasks?.(tasks, nSessions);
    for (const t of tasks)
      evidence.log("mine", "task_ready", {
        id: t.id,
        split: t.split,
        origin: t.origin,
        intent: t.intent.slice(0, 300),
        kind: t.reference_kind,
        checks: t.judge,
        rubric: t.reference_kind === "rubric" ? t.reference : "",
        sources: t.source_sessions,
      });

    const checkable = cfg.replay_uncheckable ? tasks : tasks.filter((t) => t.reference_kind !== "none");
    const archive = checkable.length ? store.archivedTasks(project, 300) : [];
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
    const ctx = { backend, ledger, evidence, workers: cfg.workers, onProgress: input.onProgress };
    let result: ConsolidateResult | undefined;
    if (replayable.length > 0) {
      emit({ type: "consolidate_start", tasks: replayable.length });
      const rejectedBefore = store.rejectedEditTexts(project, 50);
      result = await consolidate(ctx, {
        ...consolidateOptions(cfg, memoryBase.text, rejectedBefore),
        tasks: replayable,
        skill: skillText,
      });
      result.notes.unshift(...notes);
      emit({
        type: "consolidate_done",
        gateAction: result.gateAction,
        accepted: result.accepted,
        applied: result.applied.length,
        rejected: result.rejected.length,
        unmatched: result.unmatched.length,
      });
      const test = tasks.filter((t) => t.split === "test" && t.reference_kind !== "none");
      if (test.length) {
        // Only a night ceiling skips the held-out score; any other failure stops the night, as in the
        // engine (an auth or transport failure is never reported as "0 tasks, hard 0.000").
        const tr = await replayBatch(ctx, test, result.newSkill, result.newMemory, "test").catch((err: unknown) => {
          if (err instanceof BudgetExhaustedError) return undefined;
          throw err;
        });
        if (tr) {
          const hard = tr.reduce((a, r) => a + r.hard, 0) / Math.max(1, tr.length);
          evidence.log("test", "held_out_score", { night, n_test: tr.length, hard, accepted: result.accepted });
          result.notes.push(`held-out test split: ${tr.length} task(s), hard ${hard.toFixed(3)}`);
        } else {
          result.notes.push("held-out test split not scored: the night's budget ran out");
        }
      }
    }
    let fan: Awaited<ReturnType<typeof fanOut>> = { rows: [], proposals: [], notes: [] };
    const fanoutOn = cfg.multi_skill_fanout ?? cfg.multi_skill_report;
    if (result && fanoutOn && cfg.evolve_skill) {
      emit({ type: "fanout_start" });
      fan = await fanOut(
        ctx,
        replayable,
        consolidateOptions(cfg, memoryBase.text, store.rejectedEditTexts(project, 50)),
        {
          managedName: cfg.managed_skill_name,
          roots: input.skillRoots ?? [],
          managedSkillPath: skillBase.realpath,
        },
      );
      result.notes.push(...fan.notes);
      emit({ type: "fanout_done", groups: fan.rows.length, accepted: fan.proposals.length });
    }
    backend.settle?.();
    let lessons: LessonPlan | undefined;
    if (book) {
      const memoryNow = result?.accepted && result.newMemory !== memoryBase.text ? result.newMemory : memoryBase.text;
      const covered = [...getRules(skillBase.text), ...(result?.accepted ? getRules(result.newSkill) : [])];
      lessons = planLessons(book, night, memoryNow, {
        target: input.memoryPath,
        retireAfterNights: cfg.lesson_retire_nights,
        covered,
      });
      lessons.memory = withRuleHead(memoryNow, lessons.memory, input.memoryPath);
      // With a model: standing rule or one-off? asked before anything is replayed.
      if (backend.standing && cfg.llm_mine && lessons.cards.length) {
        const st = await checkStanding(backend, lessons.cards, {
          baseMemory: memoryNow,
          proposedMemory: lessons.memory,
        });
        lessons.memory = withRuleHead(memoryNow, st.memory, input.memoryPath);
        lessons.notes.push(...st.notes);
        // Handoff: the questions just written are waiting for answers; nothing is staged before them.
        backend.settle?.();
      }
      if (backend.remote && lessons.cards.length) {
        emit({ type: "lessons_verify", edits: lessons.cards.length });
        const v = await verifyLessons(ctx, lessons.cards, {
          skill: result?.accepted ? result.newSkill : skillText,
          baseMemory: memoryNow,
          proposedMemory: lessons.memory,
        });
        lessons.memory = v.memory;
        lessons.notes.push(...v.notes);
      }
      // One lesson, every agent: the same edits, staged for each further memory file the project uses.
      if (lessons.memory) {
        for (const base of extraBases) {
          const text = applyLessonCards(base.text, lessons.cards, base.path);
          if (text) extraMemory.push({ which: "memory", text, baseline: base });
        }
      }
      const lessonTargets = [input.memoryPath, ...extraMemory.map((p) => p.baseline.path)];
      for (const c of lessons.cards) {
        c.cost = { tokens: ledger.tokens, cost_usd: ledger.costUsd };
        if (lessonTargets.length > 1) c.targets = lessonTargets;
      }
      for (const c of lessons.cards)
        evidence.log("lessons", "proposed", {
          id: c.id,
          op: c.op,
          rule: c.rule,
          recurrences: c.recurrences,
          sessions: c.sources.map((x) => x.session_id),
          verification: c.verification,
        });
      emit({ type: "lessons_done", edits: lessons.cards.length });
    }
    const outcome = (status: "completed" | "no_tasks"): NightOutcome => {
      const r: ConsolidateResult =
        result ??
        emptyResult(
          skillText,
          memoryBase.text,
          tasks.length === 0 ? "no tasks mined" : "no task has a checkable reference",
          notes,
        );
      const report = buildReport(r, {
        night,
        project,
        started_at: localIso(new Date(startedMs)),
        ended_at: localIso(new Date(now())),
        backend: backend.name,
        replay_mode: cfg.replay_mode,
        n_sessions: nSessions,
        n_tasks: tasks.length,
        tasks_source: input.tasksSource ?? (input.seedTasks ? "tasks_file" : "mined"),
        n_replayed: replayable.length,
        tokens_used: ledger.tokens,
        gate_no_regression: cfg.gate_no_regression,
        budget: {
          calls: ledger.calls,
          tokens: ledger.tokens,
          cost_usd: ledger.costUsd,
          seconds: ledger.elapsedSeconds(),
          stages: ledger.entries(),
        },
      });
      report.skill_groups = fan.rows;
      if (r.accepted && r.applied.length) {
        report.edit_evidence = editCards(r.applied, {
          tasks,
          trials: r.gateTrials,
          targets: { skill: input.skillPath, memory: input.memoryPath },
          dates: sessionDates,
          cost: { tokens: ledger.tokens, cost_usd: ledger.costUsd },
        });
      }
      if (lessons?.cards.length) {
        report.lessons = lessons.cards;
        const unverified = lessons.cards.filter((c) => c.verification === "unverified").length;
        report.notes.push(
          `${lessons.cards.length} memory lesson edit(s) from recurring corrections/preferences (${unverified} unverified: no replay was run); review \
the evidence with \`skillopt sleep diff\``,
        );
      }
      if (lessons?.notes.length) report.notes.push(...lessons.notes);
      const proposals: Proposal[] = [];
      // An unchanged proposal is not staged (§12.1 #13).
      if (r.accepted && cfg.evolve_skill && r.newSkill !== skillBase.text)
        proposals.push({ which: "skill", text: r.newSkill, baseline: skillBase });
      if (lessons?.memory && lessons.memory !== memoryBase.text)
        proposals.push({ which: "memory", text: lessons.memory, baseline: memoryBase });
      else if (r.accepted && cfg.evolve_memory && r.newMemory !== memoryBase.text)
        proposals.push({ which: "memory", text: r.newMemory, baseline: memoryBase });
      proposals.push(...extraMemory);
      evidence.log("cycle", "end", {
        outcome: status,
        baseline: r.baseline,
        candidate: r.candidate,
        accepted: r.accepted,
        n_edits: r.applied.length,
        n_rejected: r.rejected.length,
        tokens: ledger.tokens,
        calls: ledger.calls,
      });
      return {
        night,
        report,
        result,
        stagingDir,
        proposals,
        skillProposals: fan.proposals,
        nSessions,
        tasks,
        evidencePath: cfg.evidence_log ? evidencePath : "",
        modelChanged,
      };
    };
    // The last scan: nothing credential-shaped is staged, reported or left in the evidence log.
    if (lessons) secretNotes.push(...guardProposals([], [], lessons.cards));
    const out0 = outcome(tasks.length > 0 || (lessons?.cards.length ?? 0) > 0 ? "completed" : "no_tasks");
    secretNotes.push(...guardProposals(out0.proposals, out0.skillProposals, lessons?.cards ?? []));
    const guarded = guardReport(out0.report);
    if (guarded.masked) secretNotes.push("secret guard: credential-shaped text was masked in the report");
    const evidenceMasked = out0.evidencePath ? guardEvidenceFile(out0.evidencePath) : 0;
    if (evidenceMasked) secretNotes.push(`secret guard: ${evidenceMasked} evidence line(s) were masked`);
    const out = { ...out0, report: guarded.report };
    out.report.notes.push(...secretNotes);
    if (out.report.lessons && lessons) out.report.lessons = lessons.cards;
    const staged = tasks.length > 0 || (lessons?.cards.length ?? 0) > 0;
    if (input.dry) return out;

    if (result) persistNight(store, night, tasks, result, ledger);
    if (staged) {
      emit({ type: "stage", dir: stagingDir });
      publishNight(stagingDir, {
        stateDir: input.stateDir,
        skillPath: input.skillPath,
        memoryPath: input.memoryPath,
        accepted: out.report.accepted,
        proposals: out.proposals,
        skills: out.skillProposals,
        skillRoots: input.skillRoots ?? [],
        reportJson: out.report,
        reportMd: renderReportMd(out.report, cfg.gate_mode === "on"),
      });
      writeDiagnostics(stagingDir, cfg, out);
      evidence.log("stage", "staged", { dir: stagingDir, proposals: out.proposals.map((p) => p.which) });
    } else {
      // Nothing to stage (no task, no lesson): no folder is left for `sleep diff` to ignore; the state store records the night.
      rmSync(stagingDir, { recursive: true, force: true });
    }
    if (book && saveBook(input.stateDir, book, night).masked)
      log.warn("sleep: secret guard: credential-shaped text was masked in the lesson store before it was written");
    commitHarvest();
    store.setLastHarvestMs(project, startedMs);
    store.setLastModelKey(backend.modelKey);
    store.finishNight({
      night,
      status: staged ? "completed" : "no_tasks",
      ended_ms: now(),
      staging_dir: staged ? stagingDir : "",
      accepted: out.report.accepted,
      gate_action: out.report.gate_action,
      baseline: out.report.baseline_score,
      candidate: out.report.candidate_score,
      n_tasks: tasks.length,
      n_sessions: nSessions,
    });
    return { ...out, stagingDir: staged ? stagingDir : "" };
  } catch (err) {
    if (!input.dry) {
      // An aborted night leaves no half-written folder behind (§12.1 #18).
      removeUnstaged(project, stagingDir);
      if (err instanceof PendingCallsError) store.abandonNight(night);
      else
        store.finishNight({
          night,
          status: "failed",
          ended_ms: now(),
          staging_dir: "",
          accepted: false,
          gate_action: "",
          baseline: null,
          candidate: null,
          n_tasks: 0,
          n_sessions: 0,
        });
    }
    throw err;
  } finally {
    closeHarvest?.();
  }
}
