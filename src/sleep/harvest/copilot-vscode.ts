import { lstatSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { arr, type JsonObject, type JsonValue, materialize, obj, parseLine, str } from "./jsonl.ts";
import { readLines } from "./read-lines.ts";
import { fileCandidate, fileRevision } from "./jsonl-source.ts";
import { type Candidate, dirEntries, type ReaderContext, type ReadOutcome, type SessionSource } from "./source.ts";
import {
  addTool,
  addUnique,
  addUserText,
  cleanText,
  emptyDigest,
  MAX_FINALS,
  toEpochMs,
  toIsoUtc,
  noteTime,
} from "./text.ts";

/** VS Code `User/workspaceStorage` roots per OS (spec §3.5), portable install first. */
export function vscodeStorageRoots(ctx: ReaderContext): string[] {
  if (ctx.locations.vscodeWorkspaceStorage) return [ctx.locations.vscodeWorkspaceStorage];
  const env = ctx.env;
  const home = homeDir();
  const bases: string[] = [];
  if (env.VSCODE_PORTABLE) bases.push(join(env.VSCODE_PORTABLE, "user-data"));
  if (ctx.platform === "win32") {
    const appData = env.APPDATA || join(home, "AppData", "Roaming");
    bases.push(join(appData, "Code"), join(appData, "Code - Insiders"));
  } else if (ctx.platform === "darwin") {
    const sup = join(home, "Library", "Application Support");
    bases.push(join(sup, "Code"), join(sup, "Code - Insiders"));
  } else {
    const cfg = env.XDG_CONFIG_HOME || join(home, ".config");
    bases.push(join(cfg, "Code"), join(cfg, "Code - Insiders"));
  }
  return bases.map((b) => join(b, "User", "workspaceStorage"));
}

/** A `file:` URI as a local path (percent-decoded; `file://host/x` → `//host/x`; `/C:/x` → `C:/x`). */
export function fileUriToPath(uri: string): string {
  if (!uri.startsWith("file://")) return "";
  const rest = uri.slice("file://".length);
  const slash = rest.indexOf("/");
  const host = slash === -1 ? rest : rest.slice(0, slash);
  let path = slash === -1 ? "/" : rest.slice(slash);
  try {
    path = decodeURIComponent(path);
  } catch {
    return "";
  }
  if (host && host !== "localhost") return `//${host}${path}`;
  if (/^\/[A-Za-z]:\//.test(path)) return path.slice(1);
  return path;
}

/** The local folder a VS Code-family workspace storage entry belongs to ("" when none). */
export function workspaceProject(dir: string): string {
  try {
    const ws = JSON.parse(readFileSync(join(dir, "workspace.json"), "utf8")) as {
      folder?: unknown;
      workspace?: unknown;
    };
    if (typeof ws.folder === "string") return fileUriToPath(ws.folder);
    if (typeof ws.workspace === "string") {
      const p = fileUriToPath(ws.workspace);
      return p ? dirname(p) : "";
    }
  } catch {
    // no or unreadable workspace.json: no safe local mapping
  }
  return "";
}

// Never read (spec §3.5): tool inputs/outputs, result details and metadata, rendered context,
// variables. Of a request's `result` only `errorDetails` (the error the user was shown) is read.
const VSCODE_DROP = new Set([
  "resultDetails",
  "toolSpecificData",
  "metadata",
  "timings",
  "variableData",
  "contentReferences",
  "codeCitations",
]);
function vscodeDrop(key: string): boolean {
  return VSCODE_DROP.has(key);
}

/**
 * GitHub Copilot Chat in VS Code: `workspaceStorage/<id>/chatSessions/*.jsonl` operation logs, and
 * the legacy `chatSessions/*.json` whole-document form older versions wrote (same document).
 */
export const copilotVscodeSource: SessionSource = {
  name: "copilot",
  filters: { headless: true, agent: true },
  listsEverything: true,
  list(ctx) {
    const out: Candidate[] = [];
    const seen = new Set<string>();
    for (const root of vscodeStorageRoots(ctx)) {
      for (const e of dirEntries(root)) {
        if (!e.isDirectory() || e.isSymbolicLink()) continue;
        const wsDir = join(root, e.name);
        const project = workspaceProject(wsDir);
        if (!project) continue;
        const chat = join(wsDir, "chatSessions");
        for (const f of dirEntries(chat)) {
          const legacy = f.name.endsWith(".json");
          if (!f.isFile() || f.isSymbolicLink() || !(legacy || f.name.endsWith(".jsonl"))) continue;
          const p = join(chat, f.name);
          if (seen.has(p)) continue;
          seen.add(p);
          try {
            if (lstatSync(p).isSymbolicLink()) continue;
          } catch {
            continue;
          }
          const c = fileCandidate(p, f.name.slice(0, legacy ? -5 : -6), project);
          if (c) out.push(c);
        }
      }
    }
    return out;
  },
  read(c, _prior, ctx): ReadOutcome {
    let doc: JsonValue | undefined;
    let consumed: number;
    let bytesRead: number;
    if (c.path.endsWith(".json")) {
      // Legacy form: one JSON document, rewritten whole on every change.
      const buf = readFileSync(c.path);
      doc = materialize(parseLine(buf, 0, buf.length), vscodeDrop);
      consumed = buf.length;
      bytesRead = buf.length;
    } else {
      ({ consumed, bytesRead } = readLines(c.path, 0, c.size, (buf, s, e) => {
        const rec = obj(parseLine(buf, s, e));
        if (!rec) return false;
        doc = applyOp(doc, materialize(rec, vscodeDrop) as JsonObject);
        return true;
      }));
    }
    const state = buildDigest(obj(doc), c, ctx);
    return {
      state,
      mark: {
        session_id: state?.digest.session_id ?? c.sessionId,
        project: c.project,
        high_water_ms: Math.max(toEpochMs(state?.digest.ended_at) ?? 0, c.mtimeMs),
        ...fileRevision(c.path, consumed),
        offset: consumed,
        size: c.size,
        mtime_ms: c.mtimeMs,
      },
      bytesRead,
    };
  },
};

type Doc = JsonValue | undefined;

/** spec §3.5 operation log: 0 replace, 1 set at path, 2 array patch, 3 delete. Ops before the first 0 are ignored. */
function applyOp(doc: Doc, op: JsonObject): Doc {
  const kind = op.kind;
  if (kind === 0) return obj(op.v) ? op.v : doc;
  if (doc === undefined) return doc;
  const path = arr(op.k);
  if (
    !path ||
    path.length === 0 ||
    !path.every((p) => typeof p === "string" || (typeof p === "number" && Number.isInteger(p)))
  )
    return doc;
  const parent = walk(doc, path.slice(0, -1) as (string | number)[]);
  const last = path[path.length - 1] as string | number;
  if (parent === undefined) return doc;
  if (kind === 1) setAt(parent, last, op.v ?? null);
  else if (kind === 2) {
    const target = getAt(parent, last);
    if (!Array.isArray(target)) return doc;
    const items = arr(op.v) ?? [];
    const i = op.i;
    if (i === undefined || i === null) target.push(...items);
    else if (typeof i === "number" && Number.isInteger(i) && i >= 0 && i <= target.length) {
      target.length = i;
      target.push(...items);
    }
  } else if (kind === 3) {
    if (Array.isArray(parent) && typeof last === "number") parent.splice(last, 1);
    else if (obj(parent) && typeof last === "string") delete (parent as JsonObject)[last];
  }
  return doc;
}

function walk(doc: JsonValue, path: (string | number)[]): JsonValue | undefined {
  let cur: JsonValue | undefined = doc;
  for (const p of path) {
    cur = cur === undefined ? undefined : getAt(cur, p);
    if (cur === undefined || cur === null || typeof cur !== "object") return undefined;
  }
  return cur;
}

function getAt(container: JsonValue, key: string | number): JsonValue | undefined {
  if (Array.isArray(container)) return typeof key === "number" ? container[key] : undefined;
  const o = obj(container);
  return o && typeof key === "string" ? o[key] : undefined;
}

function setAt(container: JsonValue, key: string | number, value: JsonValue): void {
  if (Array.isArray(container)) {
    if (typeof key === "number" && key >= 0 && key <= container.length) container[key] = value;
    return;
  }
  const o = obj(container);
  if (o && typeof key === "string") o[key] = value;
}

function extensionId(agent: JsonObject | undefined): string {
  const ext = agent?.extensionId;
  const s = str(ext);
  if (s !== undefined) return s.toLowerCase();
  const o = obj(ext);
  return (str(o?._lower) ?? str(o?.value) ?? "").toLowerCase();
}

function buildDigest(doc: JsonObject | undefined, c: Candidate, ctx: ReaderContext): SessionState | null {
  if (!doc) return null;
  const state: SessionState = { digest: emptyDigest("copilot", str(doc.sessionId) || c.sessionId, c.path), own: false };
  const d = state.digest;
  d.project = c.project;
  d.started_at = toIsoUtc(doc.creationDate);
  const finals: string[] = [];
  for (const r of arr(doc.requests) ?? []) {
    const req = obj(r);
    if (!req || req.isSystemInitiated === true) continue;
    if (extensionId(obj(req.agent)) !== "github.copilot-chat") continue;
    const raw = str(obj(req.message)?.text) ?? str(req.message) ?? "";
    const before = d.n_user_turns;
    addUserText(d, raw, state, ctx.lex);
    if (d.n_user_turns === before) continue;
    // The error the user was shown: a cancel is the user stopping the agent, anything else a failed turn.
    const err = obj(obj(req.result)?.errorDetails);
    if (err) {
      const canceled = str(err.code) === "canceled" || /^cancel/i.test(str(err.message) ?? "");
      addUnique(d.feedback_signals, canceled ? "neg:user_interrupt" : "neg:copilot_error");
    }
    const ts = toIsoUtc(req.timestamp);
    noteTime(d, ts);
    const done = toIsoUtc(obj(req.modelState)?.completedAt);
    if (done) d.ended_at = done;
    const parts: string[] = [];
    for (const p of arr(req.response) ?? []) {
      const part = obj(p);
      if (!part) continue;
      const kind = str(part.kind);
      const value = str(part.value) ?? str(obj(part.content)?.value);
      if ((kind === undefined || kind === "markdownContent") && value !== undefined) parts.push(value);
      else if (kind === "toolInvocationSerialized") {
        const id = str(part.toolId);
        if (id) addTool(d, id);
      }
    }
    const text = cleanText(parts.join(""));
    if (text) {
      d.n_assistant_turns++;
      finals.push(text);
    }
  }
  d.assistant_finals = finals.slice(-MAX_FINALS);
  return d.n_user_turns > 0 ? state : null;
}
