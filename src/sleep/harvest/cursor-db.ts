import { constants, Database } from "bun:sqlite";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { errorMessage, homeDir, log } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { workspaceProject } from "./copilot-vscode.ts";
import { fileUri, rowMark } from "./sqlite-source.ts";
import { type Candidate, dirEntries, type ReaderContext, type ReadOutcome } from "./source.ts";
import { addFinal, addTool, addUnique, addUserText, emptyDigest, toEpochMs, toIsoUtc } from "./text.ts";

/**
 * Cursor's editor chat and composer history in `state.vscdb` (VS Code-style SQLite key/value
 * stores). The databases are opened read-only and immutable (no lock, no -wal/-shm, nothing ever
 * written), and only conversation keys are read: `composerData:<id>` and `bubbleId:<id>:<bubble>`
 * from the global `cursorDiskKV` table, and `composer.composerData` from each workspace's
 * `ItemTable` (which composer ran in which folder). Auth tokens, encryption keys and every other
 * row are never selected.
 */

/** Cursor's user-data directory per OS. */
function cursorUserDir(ctx: ReaderContext): string {
  if (ctx.locations.cursorUserDir) return ctx.locations.cursorUserDir;
  const home = homeDir();
  if (ctx.platform === "win32") return join(ctx.env.APPDATA || join(home, "AppData", "Roaming"), "Cursor");
  if (ctx.platform === "darwin") return join(home, "Library", "Application Support", "Cursor");
  return join(ctx.env.XDG_CONFIG_HOME || join(home, ".config"), "Cursor");
}

function openImmutable(path: string): Database | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const db = new Database(fileUri(path), constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI);
    db.exec("PRAGMA query_only = ON");
    return db;
  } catch (err) {
    log.withTag("harvest").warn(`cannot read ${path}: ${errorMessage(err)}`);
    return undefined;
  }
}

function parse(value: unknown): Record<string, unknown> | undefined {
  try {
    const text = typeof value === "string" ? value : value instanceof Uint8Array ? new TextDecoder().decode(value) : "";
    const v = JSON.parse(text) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** composerId → workspace folder, from every workspace DB's `composer.composerData` row. */
function composerProjects(userDir: string): Map<string, string> {
  const out = new Map<string, string>();
  const root = join(userDir, "User", "workspaceStorage");
  for (const e of dirEntries(root)) {
    if (!e.isDirectory() || e.isSymbolicLink()) continue;
    const project = workspaceProject(join(root, e.name));
    if (!project) continue;
    const db = openImmutable(join(root, e.name, "state.vscdb"));
    if (!db) continue;
    try {
      const row = db.query("SELECT value FROM ItemTable WHERE key = 'composer.composerData'").get() as {
        value: unknown;
      } | null;
      const all = parse(row?.value)?.allComposers;
      for (const c of Array.isArray(all) ? all : []) {
        const id = (c as { composerId?: unknown }).composerId;
        if (typeof id === "string") out.set(id, project);
      }
    } catch {
      // a workspace DB without the table holds no composers
    } finally {
      db.close();
    }
  }
  return out;
}

let open: { db: Database; path: string } | undefined;

/** One candidate per composer conversation in the global database. */
export function listCursorDb(ctx: ReaderContext): Candidate[] {
  const path = join(cursorUserDir(ctx), "User", "globalStorage", "state.vscdb");
  const db = openImmutable(path);
  if (!db) return [];
  let rows: { key: string; value: unknown }[];
  try {
    rows = db.query("SELECT key, value FROM cursorDiskKV WHERE key LIKE 'composerData:%'").all() as {
      key: string;
      value: unknown;
    }[];
  } catch (err) {
    log.withTag("harvest").warn(`cannot read ${path}: ${errorMessage(err)}`);
    db.close();
    return [];
  }
  open = { db, path };
  const projects = composerProjects(cursorUserDir(ctx));
  const out: Candidate[] = [];
  for (const r of rows) {
    const id = r.key.slice("composerData:".length);
    const data = parse(r.value);
    if (!id || !data) continue;
    const updated = toEpochMs(data.lastUpdatedAt) ?? toEpochMs(data.createdAt) ?? 0;
    const headers = Array.isArray(data.fullConversationHeadersOnly) ? data.fullConversationHeadersOnly.length : 0;
    const inline = Array.isArray(data.conversation) ? data.conversation.length : 0;
    out.push({
      key: `cursor-db:${id}`,
      path,
      sessionId: id,
      mtimeMs: updated,
      size: headers + inline,
      revision: updated + headers + inline,
      project: projects.get(id) ?? "",
    });
  }
  return out;
}

export function closeCursorDb(): void {
  open?.db.close();
  open = undefined;
}

/** Read one composer conversation: its bubbles in header order (or the older inline list). */
export function readCursorDb(c: Candidate, ctx: ReaderContext): ReadOutcome {
  const mark = rowMark(c);
  const db = open?.db;
  if (!db) throw new Error(`${c.path} is not open`);
  const row = db.query("SELECT value FROM cursorDiskKV WHERE key = ?").get(`composerData:${c.sessionId}`) as {
    value: unknown;
  } | null;
  const data = parse(row?.value);
  if (!data) return { state: null, mark, bytesRead: 0 };
  const state: SessionState = {
    digest: { ...emptyDigest("cursor", c.sessionId, `${c.path}#${c.sessionId}`), project: c.project },
    own: false,
  };
  const d = state.digest;
  d.started_at = toIsoUtc(data.createdAt);
  d.ended_at = toIsoUtc(data.lastUpdatedAt) || d.started_at;
  let bubbles: Record<string, unknown>[] = [];
  let bytes = 0;
  if (Array.isArray(data.conversation) && data.conversation.length)
    bubbles = data.conversation as Record<string, unknown>[];
  else if (Array.isArray(data.fullConversationHeadersOnly)) {
    const get = db.query("SELECT value FROM cursorDiskKV WHERE key = ?");
    for (const h of data.fullConversationHeadersOnly as { bubbleId?: unknown }[]) {
      if (typeof h?.bubbleId !== "string") continue;
      const b = get.get(`bubbleId:${c.sessionId}:${h.bubbleId}`) as { value: unknown } | null;
      const v = parse(b?.value);
      if (v) bubbles.push(v);
      bytes += typeof b?.value === "string" ? b.value.length : 0;
    }
  }
  for (const b of bubbles) {
    const text = typeof b.text === "string" ? b.text : "";
    if (b.type === 1) {
      if (text.trim()) addUserText(d, text, state, ctx.lex);
    } else if (b.type === 2) {
      const tool = (b.toolFormerData as { name?: unknown } | undefined)?.name;
      if (typeof tool === "string") addTool(d, tool);
      if (text.trim()) {
        d.n_assistant_turns++;
        addFinal(d, text);
      } else if (typeof tool !== "string") d.n_assistant_turns++;
      if ((b.toolFormerData as { status?: unknown } | undefined)?.status === "error")
        addUnique(d.feedback_signals, "neg:cursor_tool_error");
    }
  }
  return { state: d.n_user_turns > 0 ? state : null, mark, bytesRead: bytes };
}
