import { noFTL } from "bun:jsc";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { arr, type JsonObject, obj, recordShape, str } from "./jsonl.ts";
import { fileCandidate, readJsonlSession } from "./jsonl-source.ts";
import { blockText } from "./claude.ts";
import { closeCursorDb, listCursorDb, readCursorDb } from "./cursor-db.ts";
import { type Candidate, dirEntries, type ReaderContext, type SessionSource } from "./source.ts";
import { addFinal, addTool, addUserText, emptyDigest, hasSentinel, isWithin, toIsoUtc } from "./text.ts";

/** `~/.cursor` (spec §3.7). */
function cursorHome(ctx: ReaderContext): string {
  return ctx.locations.cursorHome || join(homeDir(), ".cursor");
}

/** Cursor's workspace slug: the absolute path with every non-alphanumeric run turned into `-`. */
export function cursorSlug(path: string): string {
  return resolve(path)
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

interface Workspace {
  dir: string;
  path: string;
}

function workspacePath(dir: string): string {
  try {
    const meta = JSON.parse(readFileSync(join(dir, ".workspace-trusted"), "utf8")) as { workspacePath?: unknown };
    if (typeof meta.workspacePath === "string" && isAbsolute(meta.workspacePath)) return meta.workspacePath;
  } catch {
    // no metadata: fall back to the directory name
  }
  return "";
}

function norm(p: string, platform: NodeJS.Platform): string {
  let r = resolve(p);
  try {
    r = realpathSync(r);
  } catch {
    // keep the lexical path
  }
  return platform === "win32" || platform === "darwin" ? r.toLowerCase() : r;
}

/** Workspaces to read for the invoked project (spec §3.7 selection), or every one. */
function selectWorkspaces(ctx: ReaderContext): Workspace[] {
  const root = join(cursorHome(ctx), "projects");
  let names: string[];
  try {
    names = readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.isSymbolicLink())
      .map((e) => e.name);
  } catch {
    return [];
  }
  const all = names
    .map((n) => ({ dir: join(root, n), path: workspacePath(join(root, n)) }))
    .filter((w) => existsSync(join(w.dir, "agent-transcripts")));
  const requested =
    ctx.scope === "all"
      ? []
      : ctx.scope === "invoked"
        ? ctx.invokedProject
          ? [ctx.invokedProject]
          : []
        : [...ctx.scope];
  // Every workspace is labelled with its own path, never the ~/.cursor/projects/<slug> folder.
  if (requested.length === 0)
    return all.map((w) => ({ ...w, path: w.path || slugToPath(basename(w.dir), ctx.platform) }));
  const out = new Map<string, Workspace>();
  for (const project of requested) for (const w of workspacesFor(project, all, root, ctx.platform)) out.set(w.dir, w);
  return [...out.values()];
}

/**
 * The existing directory whose Cursor slug is `slug`, found by walking down from the filesystem
 * root one matching component at a time ("" when none matches: the slug is lossy, so an unknown
 * workspace stays unlabelled rather than mislabelled).
 */
export function slugToPath(slug: string, platform: NodeJS.Platform, root = "/"): string {
  if (platform === "win32" || !slug) return "";
  const walk = (dir: string, rest: string, depth: number): string => {
    if (depth > 16) return "";
    for (const e of dirEntries(dir)) {
      if (!e.isDirectory() || e.isSymbolicLink()) continue;
      const s = e.name.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
      if (!s) continue;
      if (rest === s) return join(dir, e.name);
      if (rest.startsWith(`${s}-`)) {
        const hit = walk(join(dir, e.name), rest.slice(s.length + 1), depth + 1);
        if (hit) return hit;
      }
    }
    return "";
  };
  return walk(root, slug, 0);
}

/** spec §3.7: workspaces whose path contains the project, plus the nearest slug dir; longest path wins. */
function workspacesFor(project: string, all: Workspace[], root: string, platform: NodeJS.Platform): Workspace[] {
  const target = norm(project, platform);
  const matches = all.filter((w) => w.path && isWithin(target, norm(w.path, platform)));
  for (let p = resolve(project); ; p = dirname(p)) {
    const slugDir = join(root, cursorSlug(p));
    if (existsSync(join(slugDir, "agent-transcripts"))) {
      if (!matches.some((w) => w.dir === slugDir)) matches.push({ dir: slugDir, path: workspacePath(slugDir) || p });
      break;
    }
    if (dirname(p) === p) break;
  }
  if (matches.length === 0) return [];
  const longest = Math.max(...matches.map((w) => w.path.length));
  return matches.filter((w) => w.path.length === longest);
}

/** Cursor Agent transcripts: `<cursor_home>/projects/<ws>/agent-transcripts/<session>/*.jsonl`. */
export const cursorSource: SessionSource = {
  name: "cursor",
  filters: { headless: false, agent: false },
  listsEverything: false,
  list(ctx) {
    // Editor chat/composer history (state.vscdb) first; Agent CLI transcripts below.
    const out: Candidate[] = listCursorDb(ctx);
    for (const ws of selectWorkspaces(ctx)) {
      const dir = join(ws.dir, "agent-transcripts");
      for (const e of dirEntries(dir)) {
        if (e.isSymbolicLink()) continue;
        const p = join(dir, e.name);
        if (e.isFile() && e.name.endsWith(".jsonl")) pushFile(out, p, e.name.slice(0, -6), ws.path);
        else if (e.isDirectory()) {
          for (const f of dirEntries(p)) {
            if (f.isFile() && !f.isSymbolicLink() && f.name.endsWith(".jsonl"))
              pushFile(out, join(p, f.name), e.name, ws.path);
          }
        }
      }
    }
    return out;
  },
  read(c, prior, ctx) {
    if (c.key.startsWith("cursor-db:")) return readCursorDb(c, ctx);
    const r = readJsonlSession(
      c,
      prior,
      () => ({ digest: { ...emptyDigest("cursor", c.sessionId, c.path), project: c.project }, own: false }),
      (rec, st) => onRecord(rec, st, ctx),
      CURSOR_SHAPE,
    );
    // Cursor records carry no timestamps: the file's mtime is the session's end.
    if (r.state) r.state.digest.ended_at = toIsoUtc(c.mtimeMs);
    return r;
  },
  close() {
    closeCursorDb();
  },
};

function pushFile(out: Candidate[], path: string, sessionId: string, project: string): void {
  const c = fileCandidate(path, sessionId, project);
  if (c) out.push(c);
}

/** Everything onRecord reads of a transcript line; the parser builds nothing else. */
const CURSOR_SHAPE = recordShape({
  type: true,
  status: true,
  role: true,
  message: { role: true, content: { type: true, text: true, name: true } },
});

const USER_QUERY = /<user_query>([\s\S]*?)<\/user_query>\s*$/;

function onRecord(rec: JsonObject, st: SessionState, ctx: ReaderContext): void {
  const d = st.digest;
  if (str(rec.type) === "turn_ended" && str(rec.status) === "error") {
    if (!d.feedback_signals.includes("neg:cursor_turn_error")) d.feedback_signals.push("neg:cursor_turn_error");
    return;
  }
  const msg = obj(rec.message);
  if (!msg) return;
  const role = str(rec.role) ?? str(msg.role);
  let text = blockText(msg.content).replaceAll("\u0000", "");
  if (hasSentinel(text)) st.own = true;
  const q = USER_QUERY.exec(text);
  if (q) text = q[1]!;
  if (role === "user") {
    if (text) addUserText(d, text, st, ctx.lex);
    return;
  }
  if (role !== "assistant") return;
  d.n_assistant_turns++;
  for (const b of arr(msg.content) ?? []) {
    const o = obj(b);
    if (o && str(o.type) === "tool_use") {
      const name = str(o.name);
      if (name) addTool(d, name);
    }
  }
  if (text) addFinal(d, text);
}

// The per-record reader stays out of the FTL tier, like the parser (jsonl.ts): it inlines the
// text helpers, and compiling it with FTL took ~140 ms of CPU in half the runs of a 0.4 s harvest
// of the 256 MB bench corpus, for no measurable gain in the time it ran.
for (const f of [onRecord]) noFTL(f as () => void);
