import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { errorMessage, log } from "../../lib/index.ts";
import type { HarvestStateStore, SessionFileMark, SessionState } from "../ports.ts";
import type { HarvestOptions } from "./options.ts";
import { shrinkReadBuffer } from "./read-lines.ts";
import { SOURCES } from "./sources.ts";
import { type Candidate, digestOf, type ReaderContext, type SessionSource } from "./source.ts";
import { isAgentSession, isHeadlessReplay, makeLexicon, projectMatches, settleFinals } from "./text.ts";
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
export async function harvest(opts: HarvestOptions): Promise<HarvestResult> {
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
  try {
    for (const name of [...new Set(opts.sources)]) lanes.push(openLane(SOURCES[name], ctx, opts, key));
    const queue = lanes.flatMap((lane) => lane.candidates.map((c) => ({ lane, c })));
    queue.sort((a, b) => b.c.mtimeMs - a.c.mtimeMs || (a.c.key < b.c.key ? -1 : 1));
    let done = 0;
    let bytes = 0;
    for (const { lane, c } of queue) {
      if (digests.length >= limit || opts.signal?.aborted) break;
      done++;
      const before = lane.stats.bytes_read;
      const got = visit(lane, c, ctx, opts);
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
    for (const lane of lanes) closeLane(lane, opts);
    shrinkReadBuffer();
  }
  for (const lane of lanes) opts.onProgress?.({ kind: "source_done", stats: lane.stats });
  let committed = false;
  return {
    digests,
    stats: lanes.map((l) => l.stats),
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

/** One candidate: skip it cheaply, serve it from the parse cache, or read what is new. */
function visit(
  lane: Lane,
  c: Candidate,
  ctx: ReaderContext,
  opts: HarvestOptions,
): { digest: SessionDigest; delivery: Delivery } | undefined {
  const { source, stats, files, delivered, writes } = lane;
  const state = opts.state;
  const since = opts.sinceMs;
  if (lane.seenIds.has(c.sessionId)) return undefined;
  lane.seenIds.add(c.sessionId);
  const prior = files.get(c.key);
  const unchanged = prior !== undefined && prior.size === c.size && prior.mtime_ms === c.mtimeMs && prior.revision >= 0;
  if (unchanged && delivered.get(c.key) === prior.revision) {
    stats.unchanged++;
    return undefined;
  }
  if (since !== undefined && (prior ? Math.max(prior.high_water_ms, c.mtimeMs) : c.mtimeMs) < since) {
    stats.filtered++;
    return undefined;
  }
  if (
    unchanged &&
    c.project === "" &&
    prior.project &&
    !projectMatches(prior.project, opts.scope, ctx.invokedProject)
  ) {
    stats.filtered++;
    return undefined;
  }
  let sessionState: SessionState | null;
  let mark: SessionFileMark;
  if (unchanged) {
    stats.unchanged++;
    mark = prior;
    // No state means the file was not a session (rejected, no messages): nothing to re-read.
    sessionState = state?.loadState(source.name, c.key) ?? null;
  } else {
    const priorState = prior && state ? state.loadState(source.name, c.key) : undefined;
    ({ sessionState, mark } = readOne(
      source,
      c,
      prior && priorState ? { mark: prior, state: priorState } : undefined,
      ctx,
      stats,
      writes,
    ));
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

function readOne(
  source: SessionSource,
  c: Candidate,
  prior: { mark: SessionFileMark; state: SessionState } | undefined,
  ctx: ReaderContext,
  stats: SourceStats,
  writes: { mark: SessionFileMark; state: SessionState | null }[],
): { sessionState: SessionState | null; mark: SessionFileMark } {
  try {
    const r = source.read(c, prior, ctx);
    // Before the digest is kept or mined: only the finals it keeps are redacted, once.
    if (r.state) settleFinals(r.state.digest);
    stats.bytes_read += r.bytesRead;
    const mark: SessionFileMark = { source: source.name, key: c.key, ...r.mark };
    writes.push({ mark, state: r.state });
    return { sessionState: r.state, mark };
  } catch (err) {
    stats.errors++;
    hlog.warn(`${source.name}: cannot read ${c.path}: ${errorMessage(err)}`);
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
