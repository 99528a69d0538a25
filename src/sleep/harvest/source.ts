import type { SessionFileMark, SessionState } from "../ports.ts";
import type { Lexicon } from "./text.ts";
import type { Scope, SessionDigest, SourceLocations, SourceName } from "./types.ts";

/** One session the source can see, found cheaply (a stat or one index row). */
export interface Candidate {
  /** Identity of the session in the state (a path, or a stable session id when files move). */
  key: string;
  /** Where to read it (file path, or the database path). */
  path: string;
  sessionId: string;
  /** Last modification (file mtime or DB update time), UTC epoch ms: the newest-first order. */
  mtimeMs: number;
  size: number;
  /** Changes whenever the session changes (size for files, update time for DB rows). */
  revision: number;
  /** Project known before reading ("" = only the content knows). */
  project: string;
}

/** Shared, per-harvest context handed to readers. */
export interface ReaderContext {
  locations: SourceLocations;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  lex: Lexicon;
  scope: Scope;
  invokedProject: string;
}

/** A reader's answer for one candidate. */
export interface ReadOutcome {
  /** null when the file is not a session (no user/assistant records, rejected by a strict parse). */
  state: SessionState | null;
  mark: Omit<SessionFileMark, "source" | "key">;
  bytesRead: number;
}

/**
 * One agent's read-only session store (spec §3). Implementations never write to the agent's
 * files, open databases read-only, and apply redaction to every text before returning it.
 */
export interface SessionSource {
  readonly name: SourceName;
  /** Which shared filters of spec §3.2 apply (the sentinel and scope always do). */
  readonly filters: { headless: boolean; agent: boolean };
  list(ctx: ReaderContext): Candidate[];
  /** Read a candidate, continuing from `prior` when the source supports appends. */
  read(c: Candidate, prior: { mark: SessionFileMark; state: SessionState } | undefined, ctx: ReaderContext): ReadOutcome;
  /** Release handles (databases) after a harvest. */
  close?(): void;
}

/** The digest a state yields (a copy, so callers cannot mutate the cached state). */
export function digestOf(state: SessionState): SessionDigest {
  return structuredClone(state.digest);
}
