import { appendFileSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { RunCheckpoint, RunRecorder } from "../engine/index.ts";
import { collectWhenGrown, readInputText, removeOrphanTemps, shareFileAtomic, writeFileAtomic } from "../lib/index.ts";
import {
  checkpointHeads,
  commitCheckpoint,
  lastCheckpoint,
  skillTexts,
  stepArtifacts,
  stepRecords,
  type Store,
} from "../store/index.ts";
import { type RunPaths, runPaths } from "./layout.ts";
import { parseStepRecord } from "./records.ts";
import { stepLogLine } from "./step-log.ts";

/** A recorder that can also be told to finish its pending file writes. */
interface RunFolderRecorder extends RunRecorder {
  /** Write every derived file still pending (at the end of a run, or when it is interrupted). */
  flush(): void;
}

/** Write a derived file without fsync (atomic for readers; the store is what survives a crash). */
function derived(path: string, text: string): void {
  writeFileAtomic(path, text, { durable: false });
}

/** Write `text` unless the file already holds exactly it (resume repair touches only what is missing or stale). */
function ensure(path: string, text: string): boolean {
  try {
    if (readInputText(path, "") === text) return false;
  } catch {
    // missing: write it
  }
  derived(path, text);
  return true;
}

/**
 * The skill texts this run wrote last, and where: a skill version that did not change (a rejected
 * step) is a second name (a hard link) for the file that already holds the text, not another
 * copy. A small file costs a page of writes, so the unchanged versions of a long run were a sixth
 * of what it wrote. A few texts are kept (the current one, recent versions), never the whole run's.
 */
function skillFiles() {
  const KEPT = 8;
  const pathOf = new Map<string, string>();
  const textAt = new Map<string, string>();
  return (path: string, text: string) => {
    const source = pathOf.get(text);
    const held = source !== undefined && textAt.get(source) === text;
    // The same version again (an epoch's last step rewritten with an unchanged text): nothing to write.
    if (held && source === path) return;
    if (held) shareFileAtomic(source, path, text);
    else derived(path, text);
    if (source !== undefined) textAt.delete(source);
    pathOf.delete(text);
    pathOf.set(text, path);
    textAt.set(path, text);
    if (pathOf.size > KEPT) {
      const [oldText, oldPath] = pathOf.entries().next().value!;
      pathOf.delete(oldText);
      textAt.delete(oldPath);
    }
  };
}

const historyLine = (record: unknown) => `${JSON.stringify(record)}\n`;

/**
 * Rebuild every derived file of a run folder from its store: history.jsonl, steps.jsonl, skills/
 * and best_skill.md. Files that already match are left alone; returns how many were (re)written or
 * removed (the temp files of writes a crash cut short). A crash may lose a derived file's tail
 * (they are written without fsync, after the store's commit), never the store's committed step:
 * this puts the folder back as an uninterrupted run would have left it.
 */
export function repairRunFolder(store: Store, dir: string): number {
  const p = runPaths(dir);
  const orphans = removeRunTemps(p);
  const texts = skillTexts(store);
  const records = stepRecords(store);
  // What the folder should hold, in commit order (a later checkpoint of the same step wins, as in the run).
  const want = new Map<string, string>();
  if (records.length) want.set(p.history, records.map(historyLine).join(""));
  else rmSync(p.history, { force: true });
  let best: string | null = null;
  for (const h of checkpointHeads(store)) {
    if (h.kind !== "final" && h.current && texts[h.current] !== undefined)
      want.set(p.skillVersion(h.step), texts[h.current]!);
    if (h.best) best = h.best;
  }
  if (best && texts[best] !== undefined) want.set(p.bestSkill, texts[best]!);
  const artifacts = stepArtifacts(store);
  const stepLog: string[] = [];
  for (const raw of records) {
    const parsed = parseStepRecord(raw);
    if (!parsed.ok) continue;
    const r = parsed.value;
    const cand = r.candidate_hash === undefined ? undefined : texts[r.candidate_hash];
    const line = stepLogLine(r.step, artifacts.get(r.step) ?? {}, cand);
    if (line !== undefined) stepLog.push(line);
  }
  // A folder of the layout before steps.jsonl keeps its steps/ folders; steps.jsonl then holds every step.
  if (stepLog.length) want.set(p.stepLog, stepLog.join(""));
  else rmSync(p.stepLog, { force: true });
  let written = orphans;
  for (const [path, text] of want) written += Number(ensure(path, text));
  return written;
}

/**
 * The temp files a killed run left in its folder, skills/ and (a folder of the layout before
 * steps.jsonl) steps/step_*: removed; how many.
 */
function removeRunTemps(p: RunPaths): number {
  let removed = removeOrphanTemps(p.dir) + removeOrphanTemps(p.skills);
  let steps: string[] = [];
  try {
    steps = readdirSync(p.steps).filter((name) => name.startsWith("step_"));
  } catch {
    // no steps/ yet
  }
  for (const name of steps) removed += removeOrphanTemps(join(p.steps, name));
  return removed;
}

/**
 * The run folder's recorder: each checkpoint is committed to state.sqlite (the source of truth,
 * one transaction) and then mirrored into the derived files — history.jsonl and steps.jsonl
 * appended, skills/ and best_skill.md written without fsync. The file writes are queued behind
 * the commit and done on the next turn of the event loop, so the next step's calls start first
 * (at most one checkpoint's writes wait); `flush()` (and the final checkpoint) write whatever is
 * pending.
 */
export function runRecorder(store: Store, dir: string, skills: Map<string, string>): RunFolderRecorder {
  const p = runPaths(dir);
  const pending: (() => void)[] = [];
  let scheduled = false;
  let lastBest: string | undefined;
  const putSkill = skillFiles();
  // A deferred write that failed (disk full): kept and thrown by the next commit or flush, so the
  // run stops with that error instead of an uncaught exception on a timer.
  let failure: unknown;
  // 8 MB: a 768-step run peaks about 10 MB lower than with 16 MB, for about 15 % more CPU at 0 ms per call.
  // Measured again for issue 31 (×64 quickstart, load 15): without it the run peaked at 139 MB
  // instead of 121 MB, CPU 4.8 s either way (within the noise), so it is kept. Up to 16 MB while
  // the collections find little (warm-up): a 192-step run made 7 collections of 15-22 ms, most of
  // them giving back 2-5 MB of the 8; with this its steps' collections take 33-52 ms of CPU instead
  // of 140-160, and a 3 072-step run, whose collections give back about what it grew, is unchanged.
  const collect = collectWhenGrown(8 * 2 ** 20, { upTo: 16 * 2 ** 20 });
  const runJobs = () => {
    for (let job = pending.shift(); job; job = pending.shift()) job();
  };
  const flush = () => {
    if (failure === undefined) runJobs();
    if (failure !== undefined) throw failure;
  };
  const later = (job: () => void) => {
    // The previous checkpoint's writes never got a turn (the run did no I/O since, e.g. the
    // in-process simulator): write them now, so pending work stays one checkpoint deep.
    if (pending.length) flush();
    pending.push(job);
    // One turn is asked for at a time: a run that never yields (the in-process simulator) would
    // otherwise queue one more callback per step until it ends.
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        try {
          runJobs();
        } catch (err) {
          failure ??= err;
        }
      });
    }
  };
  return {
    path: p.state,
    resume() {
      const last = lastCheckpoint(store);
      if (!last) {
        // A folder taken over from a run stopped before its first checkpoint: nothing derived yet.
        rmSync(p.history, { force: true });
        rmSync(p.stepLog, { force: true });
        removeRunTemps(p);
        return undefined;
      }
      const texts = skillTexts(store);
      for (const [h, t] of Object.entries(texts)) skills.set(h, t);
      repairRunFolder(store, dir);
      lastBest = (last.state as { best?: { hash?: string } }).best?.hash;
      return { state: last.state, skills: texts };
    },
    commit(cp: RunCheckpoint) {
      if (failure !== undefined) throw failure;
      const status = cp.kind === "final" ? (cp.state.finished ? "finished" : "stopped") : "running";
      const currentHash = cp.state.current.hash;
      const bestHash = cp.state.best.hash;
      commitCheckpoint(store, {
        ...cp,
        currentHash,
        bestHash,
        meta: { status, ...(cp.kind === "final" && cp.record ? { summary: JSON.stringify(cp.record) } : {}) },
      });
      for (const s of cp.skills) skills.set(s.hash, s.text);
      // The texts are looked up now; records and artifacts are new objects per step that the
      // engine does not change after the commit, so they are serialized in the deferred write.
      const current = cp.kind !== "final" ? skills.get(currentHash) : undefined;
      const best = bestHash !== lastBest ? skills.get(bestHash) : undefined;
      lastBest = bestHash;
      const step = cp.kind === "step" ? cp : undefined;
      const record = step?.record;
      const candidate = record?.candidate_hash === undefined ? undefined : skills.get(record.candidate_hash);
      const artifacts = step?.artifacts ?? {};
      // Later checkpoints name a new skill in their own `skills`, or the current or best one.
      for (const h of skills.keys()) if (h !== currentHash && h !== bestHash) skills.delete(h);
      later(() => {
        if (current !== undefined) putSkill(p.skillVersion(cp.step), current);
        if (best !== undefined) derived(p.bestSkill, best);
        if (record) {
          appendFileSync(p.history, historyLine(record));
          // The step's artifacts and candidate: one line appended, not a folder of small files
          // (creating a step's files cost the kernel as much as a 0 ms step's own work).
          const line = stepLogLine(cp.step, artifacts, candidate);
          if (line !== undefined) appendFileSync(p.stepLog, line);
        }
      });
      if (cp.kind === "final") flush();
      // Between steps little is live: a long run's garbage is collected here, not left to pile up.
      collect();
    },
    flush,
  };
}
