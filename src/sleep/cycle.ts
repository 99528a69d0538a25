import { rmSync } from "node:fs";
import { join } from "node:path";
import { log, processAlive } from "../lib/index.ts";
import { PendingCallsError } from "./backend/handoff.ts";
import { NightLedger } from "./budget.ts";
import { Evidence, localIso } from "./evidence.ts";
import { editCards, saveBook } from "./lessons.ts";
import { emptyResult, type NightOutcome, persistNight, writeDiagnostics } from "./night-parts.ts";
import {
  type Baselines,
  type Gated,
  harvestAndMine,
  type Lessons,
  lessonStage,
  type Mined,
  type NightContext,
  type NightInput,
  planReplay,
  type ReplayPlan,
  readBaselines,
  replayAndGate,
} from "./night-stages.ts";
import { buildReport, renderReportMd } from "./report.ts";
import { guardEvidenceFile, guardProposals, guardReport } from "./secret-guard.ts";
import { isStaged, type Proposal, publishNight, removeStagingTemps, removeUnstaged, reserveNight } from "./stage.ts";
import type { NightRow, SleepStore } from "./store-port.ts";
import type { ConsolidateResult } from "./types.ts";

export type { HarvestPort } from "./night-stages.ts";
export type { NightOutcome };

/** Whether a night left 'running' by a killed process had staged its proposal (it is then kept). */
const stagedBeforeDeath = (dead: NightRow) => Boolean(dead.staging_dir) && isStaged(dead.staging_dir);

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

/** A night's number, staging folder and evidence log, begun in the store (a dry-run only peeks at its number). */
interface Opened {
  ctx: NightContext;
  stagingDir: string;
  evidencePath: string;
  modelChanged: boolean;
}

/** Open: settle dead nights, number this one, reserve its folder, start its evidence log and ledger. */
function openNight(input: NightInput): Opened {
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
  const replay = { backend, ledger, evidence, workers: cfg.workers, onProgress: input.onProgress };
  const ctx: NightContext = { input, cfg, night, startedMs, now, emit, evidence, ledger, replay, cleanup: [] };
  return { ctx, stagingDir, evidencePath, modelChanged };
}

/** The stage outputs a night's record is assembled from. */
interface NightParts {
  base: Baselines;
  mined: Mined;
  plan: ReplayPlan;
  gated: Gated;
  lessons: Lessons;
}

/** The proposals a night stages: only changed documents (§12.1 #13); lesson edits win over a memory rewrite. */
function proposalsOf(cfg: NightContext["cfg"], r: ConsolidateResult, p: NightParts): Proposal[] {
  const { base, lessons } = p;
  const proposals: Proposal[] = [];
  if (r.accepted && cfg.evolve_skill && r.newSkill !== base.skill.text)
    proposals.push({ which: "skill", text: r.newSkill, baseline: base.skill });
  if (lessons.plan?.memory && lessons.plan.memory !== base.memory.text)
    proposals.push({ which: "memory", text: lessons.plan.memory, baseline: base.memory });
  else if (r.accepted && cfg.evolve_memory && r.newMemory !== base.memory.text)
    proposals.push({ which: "memory", text: r.newMemory, baseline: base.memory });
  proposals.push(...lessons.extraMemory);
  return proposals;
}

/** Assemble the night's record (report, proposals, evidence) from the stage outputs. */
function assembleRecord(o: Opened, p: NightParts, status: "completed" | "no_tasks"): NightOutcome {
  const { ctx } = o;
  const { cfg, input, ledger } = ctx;
  const { tasks, nSessions } = p.mined;
  const result = p.gated.result;
  const lessons = p.lessons.plan;
  const reason = tasks.length === 0 ? "no tasks mined" : "no task has a checkable reference";
  const r: ConsolidateResult = result ?? emptyResult(p.base.skillText, p.base.memory.text, reason, p.plan.notes);
  const report = buildReport(r, {
    night: ctx.night,
    project: input.project,
    started_at: localIso(new Date(ctx.startedMs)),
    ended_at: localIso(new Date(ctx.now())),
    backend: input.backend.name,
    replay_mode: cfg.replay_mode,
    n_sessions: nSessions,
    n_tasks: tasks.length,
    tasks_source: input.tasksSource ?? (input.seedTasks ? "tasks_file" : "mined"),
    n_replayed: p.plan.replayable.length,
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
  report.skill_groups = p.gated.fan.rows;
  if (r.accepted && r.applied.length) {
    report.edit_evidence = editCards(r.applied, {
      tasks,
      trials: r.gateTrials,
      targets: { skill: input.skillPath, memory: input.memoryPath },
      dates: p.mined.sessionDates,
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
  const proposals = proposalsOf(cfg, r, p);
  ctx.evidence.log("cycle", "end", {
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
    night: ctx.night,
    report,
    result,
    stagingDir: o.stagingDir,
    proposals,
    skillProposals: p.gated.fan.proposals,
    nSessions,
    tasks,
    evidencePath: cfg.evidence_log ? o.evidencePath : "",
    modelChanged: o.modelChanged,
  };
}

/** The last scan: nothing credential-shaped is staged, reported or left in the evidence log. */
function guardRecord(o: Opened, p: NightParts): NightOutcome {
  const lessons = p.lessons.plan;
  const secretNotes = [...p.mined.secretNotes];
  if (lessons) secretNotes.push(...guardProposals([], [], lessons.cards));
  const out0 = assembleRecord(
    o,
    p,
    p.mined.tasks.length > 0 || (lessons?.cards.length ?? 0) > 0 ? "completed" : "no_tasks",
  );
  secretNotes.push(...guardProposals(out0.proposals, out0.skillProposals, lessons?.cards ?? []));
  const guarded = guardReport(out0.report);
  if (guarded.masked) secretNotes.push("secret-guard: credential-shaped text was masked in the report");
  const evidenceMasked = out0.evidencePath ? guardEvidenceFile(out0.evidencePath) : 0;
  if (evidenceMasked) secretNotes.push(`secret-guard: ${evidenceMasked} evidence line(s) were masked`);
  const out = { ...out0, report: guarded.report };
  out.report.notes.push(...secretNotes);
  if (out.report.lessons && lessons) out.report.lessons = lessons.cards;
  return out;
}

/** Stage: publish the night folder for review (or remove it when there is nothing), save the book, commit the harvest. */
function stageNight(o: Opened, p: NightParts, out: NightOutcome): NightOutcome {
  const { ctx, stagingDir } = o;
  const { cfg, input } = ctx;
  const { store, project } = input;
  const { tasks, nSessions } = p.mined;
  const staged = tasks.length > 0 || (p.lessons.plan?.cards.length ?? 0) > 0;
  if (p.gated.result) persistNight(store, ctx.night, tasks, p.gated.result, ctx.ledger);
  if (staged) {
    ctx.emit({ type: "stage", dir: stagingDir });
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
    ctx.evidence.log("stage", "staged", { dir: stagingDir, proposals: out.proposals.map((x) => x.which) });
  } else {
    // Nothing to stage (no task, no lesson): no folder is left for `sleep diff` to ignore; the state store records the night.
    rmSync(stagingDir, { recursive: true, force: true });
  }
  if (p.mined.book && saveBook(input.stateDir, p.mined.book, ctx.night).masked)
    log.warn("sleep: secret-guard: credential-shaped text was masked in the lesson store before it was written");
  p.mined.commit();
  store.setLastHarvestMs(project, ctx.startedMs);
  store.setLastModelKey(input.backend.modelKey);
  store.finishNight({
    night: ctx.night,
    status: staged ? "completed" : "no_tasks",
    ended_ms: ctx.now(),
    staging_dir: staged ? stagingDir : "",
    accepted: out.report.accepted,
    gate_action: out.report.gate_action,
    baseline: out.report.baseline_score,
    candidate: out.report.candidate_score,
    n_tasks: tasks.length,
    n_sessions: nSessions,
  });
  return { ...out, stagingDir: staged ? stagingDir : "" };
}

/** A night that stopped: no half-written folder is left (§12.1 #18); it is recorded failed (or forgotten, when calls are pending). */
function failNight(o: Opened, err: unknown): void {
  const { ctx, stagingDir } = o;
  const { input } = ctx;
  if (input.dry) return;
  removeUnstaged(input.project, stagingDir);
  if (err instanceof PendingCallsError) input.store.abandonNight(ctx.night);
  else
    input.store.finishNight({
      night: ctx.night,
      status: "failed",
      ended_ms: ctx.now(),
      staging_dir: "",
      accepted: false,
      gate_action: "",
      baseline: null,
      candidate: null,
      n_tasks: 0,
      n_sessions: 0,
    });
}

/**
 * Run one night (spec §6.8): harvest → mine → plan → replay → gate → lessons → stage, each a
 * stage with a typed output; the night's record is assembled from them.
 */
export async function runNight(input: NightInput): Promise<NightOutcome> {
  const opened = openNight(input);
  const { ctx } = opened;
  try {
    const base = readBaselines(ctx);
    const mined = await harvestAndMine(ctx, base);
    const plan = planReplay(ctx, mined.tasks);
    const gated = await replayAndGate(ctx, base, mined.tasks, plan);
    const lessons = await lessonStage(ctx, base, mined.book, gated.result);
    const parts = { base, mined, plan, gated, lessons };
    const out = guardRecord(opened, parts);
    return input.dry ? out : stageNight(opened, parts, out);
  } catch (err) {
    failNight(opened, err);
    throw err;
  } finally {
    for (const close of ctx.cleanup) close();
  }
}
