import type { HarvestStateStore } from "../ports.ts";
import type { HarvestProgress, Scope, SourceLocations, SourceName } from "./types.ts";

/** What to harvest and how. */
export interface HarvestOptions {
  /** Sources to read (`auto` is the caller's policy: Codex, then Claude if Codex had nothing). */
  sources: readonly SourceName[];
  scope: Scope;
  /** Absolute path of the invoked project ("" = none: every project matches under `invoked`). */
  invokedProject: string;
  locations?: SourceLocations;
  /** Sessions with no activity since this instant (UTC epoch ms) are skipped unread. Unset = no window. */
  sinceMs?: number;
  /**
   * Maximum digests returned, newest first across all sources; 0 = unlimited. Sessions past the
   * limit stay undelivered and come first next time they are the newest.
   */
  limit?: number;
  /**
   * Also return sessions already delivered to this scope (a preview of everything, still read
   * through the parse cache). Used by `sleep harvest`, which never commits.
   */
  includeDelivered?: boolean;
  /** Incremental state; without it every session is read in full and commit() does nothing. */
  state?: HarvestStateStore;
  /** Environment used for per-OS locations (CODEX_HOME, XDG_*, APPDATA, OPENCODE_DB, …). */
  env?: Readonly<Record<string, string | undefined>>;
  platform?: NodeJS.Platform;
  onProgress?: (event: HarvestProgress) => void;
  /**
   * Worker threads reading session files besides the main thread: "auto" (the default) starts
   * some only when there is over half a gigabyte to read and more than one core; 0 never does.
   */
  readThreads?: number | "auto";
  /**
   * A thread that only reads files ahead while this one parses them (no read workers then):
   * "auto" (the default) past 16 MB to read on more than one core, unless readThreads is 0;
   * true whenever there is something to read, every read through it (the main thread waits for
   * it to start); false never.
   */
  prefetch?: boolean | "auto";
  signal?: AbortSignal;
}
