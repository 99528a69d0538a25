import { noFTL } from "bun:jsc";
import { dirname, join, resolve } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { arr, type JsonObject, obj, recordShape, str } from "./jsonl.ts";
import { fileCandidate, readJsonlSession } from "./jsonl-source.ts";
import { type Candidate, dirEntries, type ReaderContext, type ReadOutcome, type SessionSource } from "./source.ts";
import { type AgentDb, openAgentDb, rowMark } from "./sqlite-source.ts";
import {
  addFinal,
  addTool,
  addUnique,
  addUserText,
  cleanMeta,
  cleanText,
  emptyDigest,
  sanitizeToolName,
  toEpochMs,
  toIsoUtc,
  noteTime,
} from "./text.ts";

/** `~/.copilot/session-store.db` on every OS (spec §3.6). */
function copilotCliStore(ctx: ReaderContext): string {
  return resolve(ctx.locations.copilotCliSessionStore || join(homeDir(), ".copilot", "session-store.db"));
}

let open: { path: string; db: AgentDb } | undefined;

interface SessionRow {
  id: string;
  cwd: string | null;
  branch: string | null;
  created_at: string | null;
  updated_at: string | null;
  n_turns: number;
}

/** `~/.copilot/session-state`, beside the session store: the CLI's own per-session event logs. */
function copilotCliStateDir(ctx: ReaderContext): string {
  return join(dirname(copilotCliStore(ctx)), "session-state");
}

/** Event logs: `session-state/<id>/events.jsonl` (current) and `session-state/<id>.jsonl` (older). */
function eventFiles(dir: string): Candidate[] {
  const entries = dirEntries(dir);
  const out: Candidate[] = [];
  for (const e of entries) {
    if (e.isSymbolicLink()) continue;
    let c: Candidate | undefined;
    if (e.isDirectory()) c = fileCandidate(join(dir, e.name, "events.jsonl"), e.name, "", `copilot-events:${e.name}`);
    else if (e.isFile() && e.name.endsWith(".jsonl"))
      c = fileCandidate(join(dir, e.name), e.name.slice(0, -6), "", `copilot-events:${e.name.slice(0, -6)}`);
    if (c) out.push(c);
  }
  return out;
}

/**
 * GitHub Copilot CLI: the per-session event logs the CLI writes (read first: they are the record),
 * and the derived session index (SQLite, read-only) for sessions that have no event log.
 */
export const copilotCliSource: SessionSource = {
  name: "copilot_cli",
  filters: { headless: true, agent: true },
  listsEverything: true,
  list(ctx) {
    const events = eventFiles(copilotCliStateDir(ctx));
    const withEvents = new Set(events.map((c) => c.sessionId));
    const path = copilotCliStore(ctx);
    const db = openAgentDb(path, "SELECT 1 FROM sessions LIMIT 1");
    if (!db) return events;
    open = { path, db };
    const rows = db.db
      .query(
        `SELECT s.id, s.cwd, s.branch, s.created_at, s.updated_at,
                (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS n_turns
           FROM sessions s ORDER BY s.updated_at DESC`,
      )
      .all() as SessionRow[];
    const out: Candidate[] = [...events];
    for (const r of rows) {
      if (typeof r.id !== "string" || !r.id || !r.cwd || withEvents.has(r.id)) continue;
      const updated = toEpochMs(r.updated_at) ?? toEpochMs(r.created_at) ?? 0;
      out.push({
        key: `${path}#${r.id}`,
        path,
        sessionId: r.id,
        mtimeMs: updated,
        size: r.n_turns,
        revision: updated,
        project: r.cwd,
      });
    }
    return out;
  },
  read(c, prior, ctx): ReadOutcome {
    if (c.key.startsWith("copilot-events:")) {
      return readJsonlSession(
        c,
        prior,
        () => ({ digest: emptyDigest("copilot_cli", c.sessionId, c.path), own: false }),
        (rec, st) => onEvent(rec, st, ctx),
        EVENT_SHAPE,
      );
    }
    const db = open?.db.db;
    if (!db) throw new Error(`${c.path} is not open`);
    const s = db
      .query("SELECT id, cwd, branch, created_at, updated_at FROM sessions WHERE id = ?")
      .get(c.sessionId) as Omit<SessionRow, "n_turns"> | null;
    const mark = rowMark(c);
    if (!s) return { state: null, mark, bytesRead: 0 };
    const state: SessionState = {
      digest: emptyDigest("copilot_cli", c.sessionId, `${c.path}#${c.sessionId}`),
      own: false,
    };
    const d = state.digest;
    d.project = s.cwd ?? "";
    d.git_branch = cleanMeta(s.branch ?? "");
    d.started_at = toIsoUtc(s.created_at);
    d.ended_at = toIsoUtc(s.updated_at);
    const turns = db
      .query("SELECT user_message, assistant_response FROM turns WHERE session_id = ? ORDER BY turn_index")
      .all(c.sessionId) as { user_message: string | null; assistant_response: string | null }[];
    let bytes = 0;
    for (const t of turns) {
      const u = t.user_message ?? "";
      const a = t.assistant_response ?? "";
      bytes += u.length + a.length;
      if (u.trim()) addUserText(d, u, state, ctx.lex);
      if (cleanText(a)) {
        d.n_assistant_turns++;
        addFinal(d, a);
      }
    }
    const files = db
      .query("SELECT DISTINCT file_path, tool_name FROM session_files WHERE session_id = ? ORDER BY file_path")
      .all(c.sessionId) as { file_path: string | null; tool_name: string | null }[];
    for (const f of files) if (f.file_path) addUnique(d.files_touched, cleanMeta(f.file_path));
    const tools = [...new Set(files.map((f) => sanitizeToolName(f.tool_name ?? "")).filter(Boolean))].sort();
    d.tools_used = tools;
    d.feedback_signals = [...new Set(d.feedback_signals)].sort();
    return { state, mark, bytesRead: bytes };
  },
  close() {
    open?.db.close();
    open = undefined;
  },
};

/** Everything onEvent reads of an event; the parser builds nothing else (tool results are skipped). */
const EVENT_SHAPE = recordShape({
  timestamp: true,
  type: true,
  data: {
    context: { cwd: true, branch: true },
    cwd: true,
    content: true,
    toolRequests: { name: true },
    toolName: true,
  },
});

/** One Copilot CLI event (`{type, data, id, timestamp, parentId}`). */
function onEvent(rec: JsonObject, st: SessionState, ctx: ReaderContext): void {
  const d = st.digest;
  const ts = str(rec.timestamp);
  noteTime(d, ts);
  const data = obj(rec.data);
  if (!data) return;
  const type = str(rec.type);
  if (type === "session.start" || type === "session.resume") {
    const context = obj(data.context);
    const cwd = str(context?.cwd) ?? str(data.cwd);
    if (cwd && !d.project) d.project = cwd;
    const branch = str(context?.branch);
    if (branch && !d.git_branch) d.git_branch = cleanMeta(branch);
  } else if (type === "user.message") {
    // `content` is what the user typed; `transformedContent` adds injected context.
    const text = str(data.content) ?? "";
    if (text.trim()) addUserText(d, text, st, ctx.lex);
  } else if (type === "assistant.message") {
    for (const t of arr(data.toolRequests) ?? []) {
      const name = str(obj(t)?.name);
      if (name) addTool(d, name);
    }
    const text = str(data.content) ?? "";
    if (cleanText(text)) {
      d.n_assistant_turns++;
      addFinal(d, text);
    }
  } else if (type === "tool.execution_start") {
    const name = str(data.toolName);
    if (name) addTool(d, name);
  } else if (type === "abort") addUnique(d.feedback_signals, "neg:user_interrupt");
  else if (type === "session.error") addUnique(d.feedback_signals, "neg:copilot_cli_error");
}

// The per-record reader stays out of the FTL tier, like the parser (jsonl.ts): it inlines the
// text helpers, and compiling it with FTL took ~140 ms of CPU in half the runs of a 0.4 s harvest
// of the 256 MB bench corpus, for no measurable gain in the time it ran.
for (const f of [onEvent]) noFTL(f as () => void);
