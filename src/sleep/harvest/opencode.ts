import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import type { Candidate, ReaderContext, ReadOutcome, SessionSource } from "./source.ts";
import { type AgentDb, openAgentDb, rowMark } from "./sqlite-source.ts";
import { addFinal, addTool, addUserText, cleanMeta, emptyDigest, toIsoUtc } from "./text.ts";

/** OpenCode's data directory candidates (spec §3.8). */
function dataDirs(ctx: ReaderContext): string[] {
  const env = ctx.env;
  if (env.XDG_DATA_HOME) return [join(env.XDG_DATA_HOME, "opencode")];
  const out: string[] = [];
  if (ctx.platform === "win32") {
    if (env.LOCALAPPDATA) out.push(join(env.LOCALAPPDATA, "opencode"));
    if (env.APPDATA) out.push(join(env.APPDATA, "opencode"));
  }
  out.push(join(homeDir(), ".local", "share", "opencode"));
  return out;
}

/** The OpenCode database path; "" means nothing to harvest (`:memory:`). */
export function opencodeDbPath(ctx: ReaderContext): string {
  const explicit = ctx.locations.opencodeDb || ctx.env.OPENCODE_DB;
  const dirs = dataDirs(ctx);
  if (explicit) {
    if (explicit === ":memory:") return "";
    return isAbsolute(explicit) ? explicit : resolve(dirs[0]!, explicit);
  }
  const found = dirs.find((d) => existsSync(join(d, "opencode.db")));
  return join(found ?? dirs[0]!, "opencode.db");
}

const OWN_AGENT = /^skillopt-sleep-[0-9a-f]{32}$/;
let open: { path: string; db: AgentDb } | undefined;

interface SessionRow {
  id: unknown;
  directory: unknown;
  agent: unknown;
  time_created: unknown;
  time_updated: unknown;
  metadata?: unknown;
}

/** OpenCode history (`opencode.db`, read-only; root sessions only). */
export const opencodeSource: SessionSource = {
  name: "opencode",
  filters: { headless: true, agent: true },
  listsEverything: true,
  list(ctx) {
    const path = opencodeDbPath(ctx);
    if (!path) return [];
    const db = openAgentDb(
      path,
      "SELECT s.id, s.parent_id, s.directory, s.agent, s.time_created, s.time_updated, m.id, m.data, p.id, p.data FROM session s, message m, part p LIMIT 0",
    );
    if (!db) return [];
    open = { path, db };
    const rows = db.db
      .query(
        `SELECT id, directory, agent, time_created, time_updated,
                (SELECT COUNT(*) FROM message m WHERE m.session_id = session.id) AS n
           FROM session WHERE parent_id IS NULL ORDER BY time_updated DESC, id DESC`,
      )
      .all() as (SessionRow & { n: number })[];
    const out: Candidate[] = [];
    for (const r of rows) {
      if (typeof r.id !== "string" || !r.id || typeof r.directory !== "string" || !isAbsolute(r.directory)) continue;
      if (
        typeof r.time_updated !== "number" ||
        r.time_updated <= 0 ||
        typeof r.time_created !== "number" ||
        r.time_created <= 0
      )
        continue;
      out.push({
        key: `${path}#${r.id}`,
        path,
        sessionId: r.id,
        mtimeMs: r.time_updated,
        size: r.n,
        revision: r.time_updated,
        project: r.directory,
      });
    }
    return out;
  },
  read(c, _prior, ctx): ReadOutcome {
    const db = open?.db.db;
    if (!db) throw new Error(`${c.path} is not open`);
    const mark = rowMark(c);
    const hasMeta =
      (
        db.query("SELECT COUNT(*) AS n FROM pragma_table_info('session') WHERE name = 'metadata'").get() as {
          n: number;
        }
      ).n > 0;
    const s = db
      .query(
        `SELECT id, directory, agent, time_created, time_updated${hasMeta ? ", metadata" : ""} FROM session WHERE id = ?`,
      )
      .get(c.sessionId) as SessionRow | null;
    if (!s) return { state: null, mark, bytesRead: 0 };
    const state: SessionState = {
      digest: emptyDigest("opencode", c.sessionId, `opencode://${c.sessionId}`),
      own: false,
    };
    const d = state.digest;
    if (typeof s.agent === "string" && OWN_AGENT.test(s.agent)) state.own = true;
    d.project = String(s.directory);
    d.started_at = toIsoUtc(s.time_created);
    d.ended_at = toIsoUtc(s.time_updated);
    if (typeof s.metadata === "string") {
      try {
        const meta = JSON.parse(s.metadata) as { gitBranch?: unknown };
        if (typeof meta.gitBranch === "string") d.git_branch = cleanMeta(meta.gitBranch);
      } catch {
        // metadata is optional and free-form
      }
    }
    const messages = db
      .query("SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id")
      .all(c.sessionId) as { id: string; data: string }[];
    const parts = db
      .query("SELECT message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id")
      .all(c.sessionId) as { message_id: string; data: string }[];
    let bytes = 0;
    const byMessage = new Map<string, Record<string, unknown>[]>();
    try {
      for (const p of parts) {
        bytes += p.data.length;
        const list = byMessage.get(p.message_id) ?? [];
        list.push(JSON.parse(p.data) as Record<string, unknown>);
        byMessage.set(p.message_id, list);
      }
      for (const m of messages) {
        bytes += m.data.length;
        const data = JSON.parse(m.data) as Record<string, unknown>;
        const ps = byMessage.get(m.id) ?? [];
        const text = ps
          .filter((p) => p.type === "text" && p.synthetic !== true && p.ignored !== true && typeof p.text === "string")
          .map((p) => p.text as string)
          .join("\n");
        if (data.role === "user") {
          if (text) addUserText(d, text, state, ctx.lex);
        } else if (data.role === "assistant") {
          d.n_assistant_turns++;
          for (const p of ps) {
            if (p.type === "tool" && typeof p.tool === "string") addTool(d, p.tool);
            const inv = p.toolInvocation as { toolName?: unknown } | undefined;
            if (p.type === "tool-invocation" && typeof inv?.toolName === "string") addTool(d, inv.toolName);
          }
          if (data.error) {
            if (!d.feedback_signals.includes("neg:opencode_message_error"))
              d.feedback_signals.push("neg:opencode_message_error");
          }
          if (text) addFinal(d, text);
        }
      }
    } catch {
      // spec §3.8: any unparsable JSON drops the whole session
      return { state: null, mark, bytesRead: bytes };
    }
    return { state, mark, bytesRead: bytes };
  },
  close() {
    open?.db.close();
    open = undefined;
  },
};
