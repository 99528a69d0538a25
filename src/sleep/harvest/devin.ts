import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { workspaceProject } from "./copilot-vscode.ts";
import { fileCandidate, fileRevision } from "./jsonl-source.ts";
import { arr, type JsonObject, obj, parseLine, str } from "./jsonl.ts";
import { type Candidate, dirEntries, type ReaderContext, type ReadOutcome, type SessionSource } from "./source.ts";
import { addFinal, addTool, addUnique, addUserText, emptyDigest, toEpochMs, toIsoUtc, noteTime } from "./text.ts";

/** Devin CLI transcripts (ATIF trajectories, one `*.json` per session) per OS. */
function devinTranscriptDirs(ctx: ReaderContext): string[] {
  if (ctx.locations.devinTranscripts) return [ctx.locations.devinTranscripts];
  const home = homeDir();
  const env = ctx.env;
  if (ctx.platform === "win32") {
    return [env.LOCALAPPDATA, env.APPDATA]
      .filter((b): b is string => !!b)
      .map((b) => join(b, "devin", "cli", "transcripts"));
  }
  if (ctx.platform === "darwin") return [join(home, "Library", "Application Support", "devin", "cli", "transcripts")];
  return [join(env.XDG_DATA_HOME || join(home, ".local", "share"), "devin", "cli", "transcripts")];
}

/** Devin's VS Code-family workspace storage (for the project of a transcript that names none). */
function devinWorkspaces(ctx: ReaderContext): string[] {
  const home = homeDir();
  const env = ctx.env;
  const base =
    ctx.locations.devinUserDir ||
    (ctx.platform === "win32"
      ? join(env.APPDATA || join(home, "AppData", "Roaming"), "Devin")
      : ctx.platform === "darwin"
        ? join(home, "Library", "Application Support", "Devin")
        : join(env.XDG_CONFIG_HOME || join(home, ".config"), "Devin"));
  const root = join(base, "User", "workspaceStorage");
  return dirEntries(root)
    .filter((e) => e.isDirectory() && !e.isSymbolicLink())
    .map((e) => workspaceProject(join(root, e.name)))
    .filter(Boolean);
}

/**
 * Devin CLI sessions, read natively from their ATIF trajectories (`schema_version` "ATIF-…",
 * `steps[]` with `source` user / agent / system and `message`). Files are rewritten whole, so each
 * change re-reads the file.
 */
export const devinSource: SessionSource = {
  name: "devin",
  filters: { headless: true, agent: true },
  listsEverything: true,
  list(ctx) {
    const out: Candidate[] = [];
    for (const dir of devinTranscriptDirs(ctx)) {
      let files: import("node:fs").Dirent[];
      try {
        files = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const f of files) {
        if (!f.isFile() || f.isSymbolicLink() || !f.name.endsWith(".json")) continue;
        const c = fileCandidate(join(dir, f.name), f.name.slice(0, -5), "", `devin:${join(dir, f.name)}`);
        if (c) out.push(c);
      }
      break; // the first existing directory only
    }
    return out;
  },
  read(c, _prior, ctx): ReadOutcome {
    const buf = readFileSync(c.path);
    const doc = obj(parseLine(buf, 0, buf.length));
    const mark = {
      session_id: c.sessionId,
      project: c.project,
      high_water_ms: c.mtimeMs,
      ...fileRevision(c.path, buf.length),
      offset: buf.length,
      size: c.size,
      mtime_ms: c.mtimeMs,
    };
    const version = str(doc?.schema_version) ?? "";
    if (!doc || !version.startsWith("ATIF")) return { state: null, mark, bytesRead: buf.length };
    const id = str(doc.session_id) || c.sessionId;
    const state: SessionState = { digest: emptyDigest("devin", id, c.path), own: false };
    const d = state.digest;
    const extra = obj(doc.extra);
    d.project = str(extra?.cwd) ?? str(obj(obj(doc.agent)?.extra)?.cwd) ?? "";
    for (const s of arr(doc.steps) ?? []) {
      const step = obj(s);
      if (step) onStep(step, state, ctx);
    }
    if (!d.project) {
      // spec §3.10: the workspace whose folder name the first request mentions, else the first one.
      const ws = devinWorkspaces(ctx);
      const first = (d.user_prompts[0] ?? "").toLowerCase();
      d.project = ws.find((w) => first.includes(basename(w).toLowerCase())) ?? ws[0] ?? "";
    }
    d.started_at = toIsoUtc(d.started_at);
    d.ended_at = toIsoUtc(d.ended_at);
    mark.high_water_ms = Math.max(toEpochMs(d.ended_at) ?? 0, c.mtimeMs);
    return {
      state: d.n_user_turns > 0 ? state : null,
      mark: { ...mark, session_id: id, project: d.project },
      bytesRead: buf.length,
    };
  },
};

function onStep(step: JsonObject, st: SessionState, ctx: ReaderContext): void {
  const d = st.digest;
  const ts = str(step.timestamp);
  noteTime(d, ts);
  const source = str(step.source);
  const message = str(step.message) ?? "";
  if (source === "user") {
    if (message.trim()) addUserText(d, message, st, ctx.lex);
    return;
  }
  if (source !== "agent") return;
  d.n_assistant_turns++;
  for (const t of arr(step.tool_calls) ?? []) {
    const name = str(obj(t)?.function_name);
    if (name) addTool(d, name);
  }
  // A tool error the user saw is not feedback (recovered errors are normal), as for Pi.
  if (message.trim()) addFinal(d, message);
  if (obj(step.extra)?.interrupted === true) addUnique(d.feedback_signals, "neg:user_interrupt");
}
