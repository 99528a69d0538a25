import type { SourceName } from "./harvest/types.ts";

/**
 * What the harvester remembers about one session between runs. JSONL sources track the bytes
 * already consumed (`offset`) plus the parser state needed to extend the digest from there;
 * database sources track only the session's update time.
 */
export interface SessionMark {
  source: SourceName;
  /** File path (JSONL sources) or `<db>#<id>` (SQLite sources). */
  key: string;
  session_id: string;
  /** Newest activity of the session seen, UTC epoch ms. */
  high_water_ms: number;
  /** Bytes of the file consumed up to the end of the last complete line. */
  offset: number;
  size: number;
  mtime_ms: number;
  /** sha256 of the first bytes of the file, to detect a rewritten (not appended) file. */
  head_hash: string;
  /** Opaque JSON parser state (the partial digest and carry-over), redacted; "" for DB sources. */
  state_json: string;
}

/** The cheap part of a mark, loaded for every candidate at the start of a harvest. */
export type SessionMarkHead = Omit<SessionMark, "state_json">;

/**
 * Incremental harvest state (implemented over the Sleep state database by src/store/sleep-harvest.ts).
 * Implementations must be safe to call from a single process; `putMarks` is atomic (all or none).
 */
export interface HarvestStateStore {
  /** Every mark of one source, without parser state, keyed by `key`. */
  loadHeads(source: SourceName): Map<string, SessionMarkHead>;
  /** The parser state of one mark ("" when unknown). */
  loadState(source: SourceName, key: string): string;
  /** Insert or replace marks in one transaction. */
  putMarks(marks: readonly SessionMark[]): void;
}
