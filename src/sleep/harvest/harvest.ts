import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { errorMessage, log } from "../../lib/index.ts";
import type { HarvestStateStore, SessionFileMark, SessionState } from "../ports.ts";
import type { HarvestOptions } from "./options.ts";
import { releaseParser } from "./jsonl.ts";
import { looksCold, type Prefetch, startPrefetch, stopPrefetch, wantPrefetch } from "./prefetch.ts";
import { shrinkReadBuffer } from "./read-lines.ts";
import { ReadPool, type ReadReply, type ReadRequest, readSession, readThreads } from "./read-pool.ts";
import { SOURCES } from "./sources.ts";
import { type Candidate, digestOf, type ReaderContext, type SessionSource } from "./source.ts";
import { isAgentSession, isHeadlessReplay, makeLexicon, projectMatches } from "./text.ts";
import type { HarvestResult, Scope, SessionDigest, SourceName, SourceStats } from "./types.ts";

const hlog = log.withTag("harvest");
const WRITE_BATCH = 256;

/** The delivery scope a harvest is for: one project, "all", or a sorted list. */
function scopeKey(scope: Scope, invoked: string): string {
  if (scope === "all") return "*";
  if (scope === "invoked") return invoked ? resolve(invoked) : "*";
  return [...scope]
    .map((s) => resolve(s))
    .sort()
    .join("\n");
}

/**
 * Read every requested source and return the sessions with content not yet delivered to this
 * scope, newest first across all sources, up to the limit (spec §3, §12.1 items 1–2). Sources
 * that are absent yield nothing.
 */
export function harvest(opts: HarvestOptions): Promise<HarvestResult> {
  // One harvest at a time per process: the database sources keep their open handle in module
  // state between reads, and a harvest now waits on its read workers between sessions.
  const run = running.then(() => harvestNow(opts));
  running = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

let running: Promise<unknown> = Promise.resolve();

async function harvestNow(opts: HarvestOptions): Promise<HarvestResult> {
  const env = opts.env ?? {};
  const ctx: ReaderContext = {
    locations: opts.locations ?? {},
    env,
    platform: opts.platform ?? process.platform,
    lex: makeLexicon(env),
    scope: opts.scope,
    invokedProject: opts.invokedProject ? resolve(opts.invokedProject) : "",
  };
  const limit = opts.limit && opts.limit > 0 ? opts.limit : Number.POSITIVE_INFINITY;
  const key = scopeKey(opts.scope, ctx.invokedProject);
  const digests: SessionDigest[] = [];
  const deliveries: Delivery[] = [];
  const lanes: Lane[] = [];
  let reads: Reads | undefined;
  try {
    for (const name of [...new Set(opts.sources)]) lanes.push(openLane(SOURCES[name], ctx, opts, key));
    const queue = lanes.flatMap((lane) => lane.candidates.map((c) => ({ lane, c })));
    queue.sort((a, b) => b.c.mtimeMs - a.c.mtimeMs || (a.c.key < b.c.key ? -1 : 1));
    // What each candidate needs is known from the marks alone, before anything is read.
    const plan: Planned[] = queue.map(({ lane, c }) => ({ lane, c, step: decide(lane, c, ctx, opts) }));
    reads = new Reads(plan, ctx, opts, Number.isFinite(limit));
    let done = 0;
    let bytes = 0;
    for (let i = 0; i < plan.length; i++) {
      const item = plan[i]!;
      const { lane } = item;
      if (digests.length >= limit || opts.signal?.aborted) break;
      done++;
      const before = lane.stats.bytes_read;
      const got = visit(item, ctx, opts, await reads.take(i));
      bytes += lane.stats.bytes_read - before;
      if (before !== lane.stats.bytes_read || got) {
        opts.onProgress?.({ kind: "session", source: lane.source.name, done, total: queue.length, bytes });
      }
      if (!got) continue;
      digests.push(got.digest);
      deliveries.push(got.delivery);
      lane.stats.sessions++;
    }
  } finally {
    await reads?.close();
    for (const lane of lanes) closeLane(lane, opts);
    shrinkReadBuffer();
    releaseParser();
  }
  for (const lane of lanes) opts.onProgress?.({ kind: "source_done", stats: lane.stats });
  let committed = false;
  return {
    digests,
    stats: lanes.map((l) => l.stats),
    readWorkers: reads?.workers ?? 0,
    prefetch: reads?.prefetching ?? false,
    commit() {
      if (committed || !opts.state || deliveries.length === 0) return;
      opts.state.putDelivered(key, deliveries);
      committed = true;
    },
  };
}

interface Delivery {
  source: SourceName;
  key: string;
  revision: number;
  high_water_ms: number;
}

/** One source during a harvest: its candidates, cached marks, deliveries and pending writes. */
interface Lane {
  source: SessionSource;
  stats: SourceStats;
  candidates: Candidate[];
  files: Map<string, SessionFileMark>;
  delivered: Map<string, number>;
  writes: { mark: SessionFileMark; state: SessionState | null }[];
  seenIds: Set<string>;
  listed: boolean;
}

function openLane(source: SessionSource, ctx: ReaderContext, opts: HarvestOptions, scope: string): Lane {
  const stats: SourceStats = {
    source: source.name,
    candidates: 0,
    unchanged: 0,
    bytes_read: 0,
    sessions: 0,
    filtered: 0,
    own_replays: 0,
    errors: 0,
  };
  const lane: Lane = {
    source,
    stats,
    candidates: [],
    files: new Map(),
    delivered: new Map(),
    writes: [],
    seenIds: new Set(),
    listed: false,
  };
  try {
    lane.candidates = source.list(ctx);
    lane.listed = true;
  } catch (err) {
    hlog.warn(`${source.name}: cannot list sessions: ${errorMessage(err)}`);
    stats.errors++;
  }
  stats.candidates = lane.candidates.length;
  opts.onProgress?.({ kind: "source_start", source: source.name, candidates: lane.candidates.length });
  const state = opts.state;
  if (state) {
    lane.files = state.loadFiles(source.name);
    if (!opts.includeDelivered) lane.delivered = state.loadDelivered(scope, source.name);
  }
  return lane;
}

function closeLane(lane: Lane, opts: HarvestOptions): void {
  lane.source.close?.();
  const state = opts.state;
  if (!state) return;
  if (lane.writes.length > 0) state.putFiles(lane.writes.splice(0));
  if (lane.listed && lane.source.listsEverything && lane.candidates.length > 0)
    prune(state, lane.source, lane.files, lane.candidates);
}

/** What a candidate needs, decided from its marks before anything is read. */
type Step =
  /** A second file of a session already seen: nothing, not even counted. */
  | { kind: "duplicate" }
  /** Unchanged and already delivered to this scope. */
  | { kind: "delivered" }
  /** Outside the time window or the scope, known without reading. */
  | { kind: "filtered" }
  /** Unchanged: its state comes from the parse cache. */
  | { kind: "cached"; prior: SessionFileMark }
  /** New or changed: read (from the prior offset when the file only grew). */
  | { kind: "read"; prior: SessionFileMark | undefined };

interface Planned {
  lane: Lane;
  c: Candidate;
  step: Step;
}

function decide(lane: Lane, c: Candidate, ctx: ReaderContext, opts: HarvestOptions): Step {
  const { files, delivered } = lane;
  const since = opts.sinceMs;
  // A candidate whose listing already names a project outside the scope is filtered before its id
  // is claimed: a Copilot chat whose id also exists in another VS Code workspace must not hide the
  // in-project copy.
  if (c.project !== "" && !projectMatches(c.project, opts.scope, ctx.invokedProject)) return { kind: "filtered" };
  if (lane.seenIds.has(c.sessionId)) return { kind: "duplicate" };
  lane.seenIds.add(c.sessionId);
  const prior = files.get(c.key);
  const unchanged = prior !== undefined && prior.size === c.size && prior.mtime_ms === c.mtimeMs && prior.revision >= 0;
  if (unchanged && delivered.get(c.key) === prior.revision) return { kind: "delivered" };
  if (since !== undefined && (prior ? Math.max(prior.high_water_ms, c.mtimeMs) : c.mtimeMs) < since) {
    return { kind: "filtered" };
  }
  if (
    unchanged &&
    c.project === "" &&
    prior.project &&
    !projectMatches(prior.project, opts.scope, ctx.invokedProject)
  ) {
    return { kind: "filtered" };
  }
  return unchanged ? { kind: "cached", prior } : { kind: "read", prior };
}

/** The read of a planned candidate: its request and, once taken, its reply. */
function readRequest(item: Planned, state: HarvestStateStore | undefined): ReadRequest {
  const prior = item.step.kind === "read" ? item.step.prior : undefined;
  const priorState = prior && state ? state.loadState(item.lane.source.name, item.c.key) : undefined;
  return {
    source: item.lane.source.name,
    c: item.c,
    prior: prior && priorState ? { mark: prior, state: priorState } : undefined,
  };
}

/**
 * The reads of a harvest: on the read pool for `offThread` sources when there is enough to read
 * (submitted in the harvest's order, a bounded window ahead when a limit may stop it early), on
 * this thread otherwise, with their files read ahead by the prefetch thread when that pays. The
 * two do not combine: read workers read their own files, in parallel with this thread's reads.
 */
class Reads {
  private readonly pool: ReadPool | undefined;
  /** Workers started (0 = every read on this thread). */
  readonly workers: number = 0;
  /** The prefetch thread, when it was started. */
  private readonly prefetch: Prefetch | undefined;
  private readonly jobs = new Map<number, number>();
  private submitted = 0;
  private readonly offThread: number[];

  constructor(
    private readonly plan: Planned[],
    private readonly ctx: ReaderContext,
    private readonly opts: HarvestOptions,
    private readonly limited: boolean,
  ) {
    this.offThread = [];
    let bytes = 0;
    plan.forEach((item, i) => {
      if (item.step.kind !== "read" || !item.lane.source.offThread) return;
      this.offThread.push(i);
      bytes += Math.max(0, item.c.size - (item.step.prior?.offset ?? 0));
    });
    const threads = readThreads(opts.readThreads ?? "auto", bytes, this.offThread.length);
    if (threads === 0) {
      this.prefetch = this.startPrefetch(bytes);
      return;
    }
    this.workers = threads;
    const { lex: _lex, ...workerCtx } = ctx;
    this.pool = new ReadPool(
      threads,
      workerCtx,
      (req) => readSession(req, ctx),
      (reason) => hlog.debug(`${reason}; reading on the main thread`),
    );
    hlog.debug(`reading ${this.offThread.length} sessions (${(bytes / 2 ** 20).toFixed(0)} MiB) on ${threads} workers`);
  }

  /** The reply for plan[i] (undefined when it needs no read). */
  async take(i: number): Promise<ReadReply | undefined> {
    const item = this.plan[i]!;
    if (item.step.kind !== "read") return undefined;
    const pool = this.pool;
    if (!pool || !item.lane.source.offThread) return readSession(readRequest(item, this.opts.state), this.ctx);
    this.fill(i);
    const id = this.jobs.get(i)!;
    this.jobs.delete(i);
    return pool.result(id);
  }

  /** Whether the prefetch thread was started. */
  get prefetching(): boolean {
    return this.prefetch !== undefined;
  }

  async close(): Promise<void> {
    this.pool?.close();
    if (!this.prefetch) return;
    const { counts } = this.prefetch;
    const why = await stopPrefetch();
    if (why) hlog.debug(`${why}; its files were read on the main thread`);
    else
      hlog.debug(
        `prefetch: ${counts.ahead} reads began in the ring (${counts.handedBack} finished on the main thread), ${counts.here} on the main thread`,
      );
  }

  /**
   * Read the off-thread sources' files ahead, from their prior offset when only their end is new
   * (a read that turns out otherwise is made here). Auto: past some megabytes on two cores or
   * more, with a core to spare or files not in the page cache, unless read workers were turned
   * off (`readThreads: 0`).
   */
  private startPrefetch(bytes: number): Prefetch | undefined {
    const asked = this.opts.prefetch ?? "auto";
    const mode = asked === "auto" && this.opts.readThreads === 0 ? false : asked;
    if (mode === false || bytes <= 0) return undefined;
    const files = this.offThread.flatMap((i) => {
      const { c, step } = this.plan[i]!;
      const prior = step.kind === "read" ? step.prior : undefined;
      const from = prior && prior.offset <= c.size ? prior.offset : 0;
      return from < c.size ? [{ path: c.path, from, size: c.size }] : [];
    });
    if (!wantPrefetch(mode, bytes, undefined, undefined, () => looksCold(files))) return undefined;
    try {
      const prefetch = startPrefetch(files, { onBroken: (reason) => hlog.debug(reason), waitForThread: mode === true });
      hlog.debug(`reading ${files.length} files (${(bytes / 2 ** 20).toFixed(0)} MiB) ahead on a prefetch thread`);
      return prefetch;
    } catch (err) {
      // No thread (a runtime without workers, no memory for the ring): every read on this one.
      hlog.debug(`no prefetch thread: ${errorMessage(err)}; reading on the main thread`);
      return undefined;
    }
  }

  /** Submit off-thread reads up to a window past plan[i] (all of them when nothing can stop early). */
  private fill(i: number): void {
    const window = this.limited ? READ_AHEAD : Number.POSITIVE_INFINITY;
    while (this.submitted < this.offThread.length) {
      const at = this.offThread[this.submitted]!;
      if (at > i && at - i > window) break;
      this.jobs.set(at, this.pool!.submit(readRequest(this.plan[at]!, this.opts.state)));
      this.submitted++;
    }
  }
}

/** Candidates read ahead of the one being consumed when a limit may end the harvest early. */
const READ_AHEAD = 32;

/** One candidate: skip it cheaply, serve it from the parse cache, or take what was read. */
function visit(
  { lane, c, step }: Planned,
  ctx: ReaderContext,
  opts: HarvestOptions,
  reply: ReadReply | undefined,
): { digest: SessionDigest; delivery: Delivery } | undefined {
  const { source, stats, delivered, writes } = lane;
  const state = opts.state;
  const since = opts.sinceMs;
  if (step.kind === "duplicate") return undefined;
  if (step.kind === "delivered") {
    stats.unchanged++;
    return undefined;
  }
  if (step.kind === "filtered") {
    stats.filtered++;
    return undefined;
  }
  let sessionState: SessionState | null;
  let mark: SessionFileMark;
  if (step.kind === "cached") {
    stats.unchanged++;
    mark = step.prior;
    // No state means the file was not a session (rejected, no messages): nothing to re-read.
    sessionState = state?.loadState(source.name, c.key) ?? null;
  } else {
    ({ sessionState, mark } = taken(source, c, reply!, stats, writes));
    // Flush the parse cache in batches so memory stays flat on a large history.
    if (state && writes.length >= WRITE_BATCH) state.putFiles(writes.splice(0));
  }
  if (!sessionState) return undefined;
  if (since !== undefined && mark.high_water_ms < since) {
    stats.filtered++;
    return undefined;
  }
  if (delivered.get(c.key) === mark.revision) return undefined;
  const verdict = keep(sessionState, source, opts, ctx);
  if (verdict === "own") stats.own_replays++;
  if (verdict !== "keep") {
    stats.filtered++;
    return undefined;
  }
  return {
    digest: digestOf(sessionState),
    delivery: { source: source.name, key: c.key, revision: mark.revision, high_water_ms: mark.high_water_ms },
  };
}

/**
 * Forget sessions that are gone: a file key whose file no longer exists, or a row of the database
 * just listed that it no longer has. Keys of other homes or databases (another --claude-home) and
 * id keys are kept, so switching back never re-delivers old sessions.
 */
function prune(
  state: HarvestStateStore,
  source: SessionSource,
  files: Map<string, SessionFileMark>,
  candidates: Candidate[],
): void {
  const live = new Set(candidates.map((c) => c.key));
  const dbs = new Set(candidates.filter((c) => c.key.startsWith(`${c.path}#`)).map((c) => `${c.path}#`));
  const gone = [...files.keys()].filter((k) => {
    if (live.has(k)) return false;
    const hash = k.lastIndexOf("#");
    if (hash !== -1 && dbs.has(k.slice(0, hash + 1))) return true;
    return isAbsolute(k) && !existsSync(k);
  });
  if (gone.length > 0) state.deleteFiles(source.name, gone);
}

/** Account for a read's reply: its mark and state go to the parse cache, an error is counted and said. */
function taken(
  source: SessionSource,
  c: Candidate,
  reply: ReadReply,
  stats: SourceStats,
  writes: { mark: SessionFileMark; state: SessionState | null }[],
): { sessionState: SessionState | null; mark: SessionFileMark } {
  if ("outcome" in reply) {
    const r = reply.outcome;
    stats.bytes_read += r.bytesRead;
    const mark: SessionFileMark = { source: source.name, key: c.key, ...r.mark };
    writes.push({ mark, state: r.state });
    return { sessionState: r.state, mark };
  }
  stats.errors++;
  hlog.warn(`${source.name}: cannot read ${c.path}: ${reply.error}`);
  // Not remembered: a transient error (file vanished, DB busy) is retried next run.
  const mark: SessionFileMark = {
    source: source.name,
    key: c.key,
    session_id: c.sessionId,
    project: c.project,
    high_water_ms: c.mtimeMs,
    revision: -1,
    offset: 0,
    size: c.size,
    mtime_ms: c.mtimeMs,
    head_hash: "",
  };
  return { sessionState: null, mark };
}

type Verdict = "keep" | "own" | "empty" | "scope" | "headless" | "agent";

/** Shared filters (spec §3.2) on a session's full digest. */
function keep(state: SessionState, source: SessionSource, opts: HarvestOptions, ctx: ReaderContext): Verdict {
  const d = state.digest;
  if (state.own) return "own";
  if (d.n_user_turns === 0 && d.n_assistant_turns === 0) return "empty";
  if (!projectMatches(d.project, opts.scope, ctx.invokedProject)) return "scope";
  if (source.filters.headless && isHeadlessReplay(d)) return "headless";
  if (source.filters.agent && isAgentSession(d, ctx.lex)) return "agent";
  return "keep";
}
