import * as v from "valibot";

/** Agents whose local session history can be harvested (spec §2.1 `--source`). */
export const SOURCE_NAMES = ["claude", "codex", "copilot", "copilot_cli", "cursor", "devin", "opencode", "pi"] as const;
export type SourceName = (typeof SOURCE_NAMES)[number];

const StringList = v.optional(v.array(v.string()), () => []);
const Count = v.optional(v.pipe(v.number(), v.integer(), v.minValue(0)), 0);

/**
 * The normalised per-session record every harvester produces (spec §3.1). Disk/wire format:
 * snake_case keys as the spec's JSON. Unknown keys are dropped and missing optional fields
 * default when a persisted digest is read back.
 */
export const SessionDigestSchema = v.object({
  session_id: v.pipe(v.string(), v.minLength(1)),
  /** Which harvester produced it (not in upstream's record; additive). */
  source: v.optional(v.picklist(SOURCE_NAMES), "claude"),
  /** Absolute project/workspace path ("" when the source has none). */
  project: v.optional(v.string(), ""),
  git_branch: v.optional(v.string(), ""),
  /** Timestamps as UTC ISO-8601 `…Z` (every source is normalised; "" when unknown). */
  started_at: v.optional(v.string(), ""),
  ended_at: v.optional(v.string(), ""),
  /** Substantive user messages in order (meta prompts removed), redacted. */
  user_prompts: StringList,
  /**
   * What the agent did right before each kept prompt, index for index with user_prompts (its last
   * command or edit, and its last words; "" when nothing), redacted and short. Only the sources
   * that record tool calls in their sessions fill it (Claude Code, Codex).
   */
  agent_before: StringList,
  /**
   * What the agent did first after each kept prompt, index for index (its first command or edit;
   * "" when none): after a correction, the corrected action. agent_before's next entry is the
   * agent's last action of that turn, often the task going on. Absent in digests read before it.
   */
  agent_first: v.optional(StringList, []),
  /**
   * The agent's first words after each kept prompt, index for index ("" when it only acted), short:
   * "You're right, switching to pnpm" says the prompt corrected it. Absent in digests read before it.
   */
  agent_reply: v.optional(StringList, []),
  /** Non-empty assistant texts; only the last 5 are kept; redacted. */
  assistant_finals: StringList,
  tools_used: StringList,
  skills_used: StringList,
  files_touched: StringList,
  /** `neg:<phrase>` / `pos:<phrase>` plus source error tags (`neg:cursor_turn_error`, …). */
  feedback_signals: StringList,
  n_user_turns: Count,
  n_assistant_turns: Count,
  /** File path, `<store>#<id>` (Copilot CLI) or `opencode://<id>`. */
  raw_path: v.optional(v.string(), ""),
});
export type SessionDigest = v.InferOutput<typeof SessionDigestSchema>;

/** Which projects' sessions are harvested (spec §3.2 project matching). */
export type Scope = "all" | "invoked" | readonly string[];

/** Where each agent keeps its history; unset entries use the per-OS defaults of spec §3. */
export interface SourceLocations {
  claudeHome?: string;
  codexHome?: string;
  cursorHome?: string;
  piHome?: string;
  /** VS Code `User/workspaceStorage` root; unset = every per-OS default root. */
  vscodeWorkspaceStorage?: string;
  copilotCliSessionStore?: string;
  /** OpenCode database path (`:memory:` = nothing to harvest). */
  opencodeDb?: string;
  /** Devin CLI transcript directory (ATIF `*.json`); unset = the per-OS default. */
  devinTranscripts?: string;
  /** Devin's user-data directory (holds `User/workspaceStorage`); unset = the per-OS default. */
  devinUserDir?: string;
  /** Cursor's user-data directory (holds `User/globalStorage/state.vscdb`); unset = the per-OS default. */
  cursorUserDir?: string;
}

/** Per-source counters of one harvest. */
export interface SourceStats {
  source: SourceName;
  /** Files (or DB sessions) looked at. */
  candidates: number;
  /** Candidates with nothing new since the last committed harvest. */
  unchanged: number;
  /** Bytes actually read from disk (JSONL sources) this run. */
  bytes_read: number;
  /** Digests produced (after every filter and the limit). */
  sessions: number;
  /** Sessions dropped by a filter (meta-only, headless, agent, sentinel, project, window). */
  filtered: number;
  /** Sessions whose sentinel marks them as the engine's own calls. */
  own_replays: number;
  /** Unreadable files / databases (skipped with a warning). */
  errors: number;
}

/** Progress events, rendered by the CLI. */
export type HarvestProgress =
  | { kind: "source_start"; source: SourceName; candidates: number }
  | { kind: "session"; source: SourceName; done: number; total: number; bytes: number }
  | { kind: "source_done"; stats: SourceStats };

/** Result of a harvest: the digests with new content, and how to remember that they were seen. */
export interface HarvestResult {
  digests: SessionDigest[];
  stats: SourceStats[];
  /** Worker threads that read session files beside the main thread (0 = none started). */
  readWorkers: number;
  /** Whether a prefetch thread read files ahead for the main thread. */
  prefetch: boolean;
  /**
   * Persist the per-session high-water marks of everything returned (and of everything found
   * unchanged or filtered), so the next incremental harvest reads only what is new. Call it once
   * the night has consumed the digests; a harvest that is never committed changes nothing.
   */
  commit(): void;
}
