import { closeSync, openSync, readSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { SessionFileMark, SessionState } from "../ports.ts";
import { type JsonObject, obj, parseLine, type Shape } from "./jsonl.ts";
import { HEAD_BYTES, readLines } from "./read-lines.ts";
import { type Candidate, dirEntries, type ReadOutcome } from "./source.ts";
import { toEpochMs, toIsoUtc } from "./text.ts";

/** Hash of the first min(HEAD_BYTES, upTo) bytes of a file. */
function headHash(path: string, upTo: number): string {
  const n = Math.min(HEAD_BYTES, upTo);
  if (n <= 0) return "";
  const buf = Buffer.allocUnsafe(n);
  const fd = openSync(path, "r");
  try {
    const got = readSync(fd, buf, 0, n, 0);
    return Bun.hash(buf.subarray(0, got)).toString(16);
  } finally {
    closeSync(fd);
  }
}

/**
 * Revision of a file session: changes when bytes are consumed or the file is rewritten (the head
 * hash changes), even to the same length.
 */
export function fileRevision(path: string, consumed: number, head?: Buffer): { revision: number; head_hash: string } {
  // The head the line reader just read is the file's head: no second read.
  const n = Math.min(HEAD_BYTES, consumed);
  const head_hash =
    head && head.length >= n ? (n <= 0 ? "" : Bun.hash(head.subarray(0, n)).toString(16)) : headHash(path, consumed);
  return { revision: Bun.hash.crc32(`${head_hash}:${consumed}`), head_hash };
}

/** A candidate for one regular, non-symlink JSONL file (undefined if it vanished). */
export function fileCandidate(
  path: string,
  sessionId = basename(path, ".jsonl"),
  project = "",
  key = path,
): Candidate | undefined {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st?.isFile()) return undefined;
    return { key, path, sessionId, mtimeMs: Math.floor(st.mtimeMs), size: st.size, revision: st.size, project };
  } catch {
    return undefined;
  }
}

/** Recursively list `*.jsonl` files below dir, skipping symlinks and directories `skip` rejects. */
export function walkJsonl(dir: string, skip: (name: string, isDir: boolean) => boolean, out: string[] = []): string[] {
  for (const e of dirEntries(dir)) {
    if (e.isSymbolicLink()) continue;
    if (skip(e.name, e.isDirectory())) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walkJsonl(p, skip, out);
    else if (e.isFile() && e.name.endsWith(".jsonl")) out.push(p);
  }
  return out;
}

/**
 * Read a JSONL session incrementally: continue from the prior offset and state when the file
 * only grew (same head), else from the start. `onRecord` sees each JSON object line, built as far
 * as `shape` declares (everything the reader reads); the objects' long strings are only valid
 * during the call.
 */
export function readJsonlSession(
  c: Candidate,
  prior: { mark: SessionFileMark; state: SessionState } | undefined,
  fresh: () => SessionState,
  onRecord: (rec: JsonObject, state: SessionState) => void,
  shape?: Shape,
): ReadOutcome {
  let from = 0;
  let state: SessionState | undefined;
  if (prior && prior.mark.offset <= c.size && prior.mark.head_hash === headHash(c.path, prior.mark.offset)) {
    from = prior.mark.offset;
    state = prior.state;
  }
  state ??= fresh();
  const st = state;
  st.digest.raw_path = c.path;
  const { consumed, bytesRead, head } = readLines(c.path, from, c.size, (buf, s, e, last) => {
    // An unterminated last line is checked whole first: a writer may be half-way through it.
    if (last && parseLine(buf, s, e) === undefined) return false;
    const rec = obj(parseLine(buf, s, e, shape));
    if (!rec) return false;
    onRecord(rec, st);
    return true;
  });
  st.digest.started_at = toIsoUtc(st.digest.started_at);
  st.digest.ended_at = toIsoUtc(st.digest.ended_at);
  const ended = toEpochMs(st.digest.ended_at);
  return {
    state: st,
    mark: {
      session_id: st.digest.session_id,
      project: st.digest.project,
      high_water_ms: Math.max(ended ?? 0, c.mtimeMs),
      ...fileRevision(c.path, consumed, head),
      offset: consumed,
      size: c.size,
      mtime_ms: c.mtimeMs,
    },
    bytesRead,
  };
}
