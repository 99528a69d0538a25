import { join, resolve } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import type { Candidate, ReaderContext, ReadOutcome, SessionSource } from "./source.ts";
import { type AgentDb, openAgentDb, rowMark } from "./sqlite-source.ts";
import { addFinal, addUnique, addUserText, cleanMeta, cleanText, emptyDigest, sanitizeToolName, toEpochMs, toIsoUtc } from "./text.ts";

/** `~/.copilot/session-store.db` on every OS (spec §3.6). */
export function copilotCliStore(ctx: ReaderContext): string {
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

/** GitHub Copilot CLI session index (SQLite, read-only). */
export const copilotCliSource: SessionSource = {
  name: "copilot_cli",
  filters: { headless: true, agent: true },
  listsEverything: true,
  list(ctx) {
    const path = copilotCliStore(ctx);
    const db = openAgentDb(path, "SELECT 1 FROM sessions LIMIT 1");
    if (!db) return [];
    open = { path, db };
    const rows = db.db
      .query(
        `SELECT s.id, s.cwd, s.branch, s.created_at, s.updated_at,
                (SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS n_turns
           FROM sessions s ORDER BY s.updated_at DESC`,
      )
      .all() as SessionRow[];
    const out: Candidate[] = [];
    for (const r of rows) {
      if (typeof r.id !== "string" || !r.id || !r.cwd) continue;
      const updated = toEpochMs(r.updated_at) ?? toEpochMs(r.created_at) ?? 0;
      out.push({ key: `${path}#${r.id}`, path, sessionId: r.id, mtimeMs: updated, size: r.n_turns, revision: updated, project: r.cwd });
    }
    return out;
  },
  read(c, _prior, ctx): ReadOutcome {
    const db = open?.db.db;
    if (!db) throw new Error(`${c.path} is not open`);
    const s = db.query("SELECT id, cwd, branch, created_at, updated_at FROM sessions WHERE id = ?").get(c.sessionId) as
      | Omit<SessionRow, "n_turns">
      | null;
    const mark = rowMark(c);
    if (!s) return { state: null, mark, bytesRead: 0 };
    const state: SessionState = { digest: emptyDigest("copilot_cli", c.sessionId, `${c.path}#${c.sessionId}`), own: false };
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
