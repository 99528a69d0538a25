import type { SkilloptModelClient } from "../backends/index.ts";
import type { HarvestStateStore as HarvestState, SessionFileMark as FileMark } from "../store/index.ts";
import type { SleepBackendName, SleepConfig } from "./config.ts";
import type { Lexicon } from "./harvest/text.ts";
import type { Scope, SessionDigest, SourceLocations, SourceName } from "./harvest/types.ts";

/** What the harvester remembers about one session between runs (a row of the harvest state). */
export type SessionFileMark = FileMark<SourceName>;

/** Parser state of one session: the redacted digest so far plus source-specific carry-over. */
export interface SessionState {
  digest: SessionDigest;
  /** The session carries the engine's sentinel. */
  own: boolean;
  /** Source-specific JSON-safe parser carry-over. */
  carry?: unknown;
}

/** The harvest state over the Sleep state database (src/store/sleep-harvest.ts), in Sleep's types. */
export type HarvestStateStore = HarvestState<SourceName, SessionState>;

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
 * files, open databases read-only, and apply redaction to every text before returning it
 * (assistant texts given to `addFinal` are held in memory and redacted by the harvest's
 * `settleFinals`, once, for the last few it keeps).
 */
export interface SessionSource {
  readonly name: SourceName;
  /** Which shared filters of spec §3.2 apply (the sentinel and scope always do). */
  readonly filters: { headless: boolean; agent: boolean };
  /** list() returns every session of the source whatever the scope, so absent ones are gone. */
  readonly listsEverything: boolean;
  list(ctx: ReaderContext): Candidate[];
  /** Read a candidate, continuing from `prior` when the source supports appends. */
  read(
    c: Candidate,
    prior: { mark: SessionFileMark; state: SessionState } | undefined,
    ctx: ReaderContext,
  ): ReadOutcome;
  /** Release handles (databases) after a harvest. */
  close?(): void;
  /**
   * read() depends only on the candidate's file, the prior state and the context (no handle kept
   * between reads), so it may run on a read worker (sleep/harvest/read-pool.ts).
   */
  readonly offThread?: boolean;
}

/** The backend and model one role of a night resolved to (spec §5.9). */
interface SleepRole {
  backend: SleepBackendName;
  model: string;
}

/**
 * The model layer as a night sees it. Sleep imports no backend at run time: the CLI builds the
 * client for both roles from the Sleep config (src/cli/sleep/models.ts) and passes this port in.
 * `describe` names what answers each role (the night's first line).
 */
export type ConnectModels = (
  roles: { target: SleepRole; optimizer: SleepRole },
  cfg: SleepConfig,
  opts: { env: Readonly<Record<string, string | undefined>>; stateDir?: string },
) => Promise<{ client: SkilloptModelClient; describe: string }>;
