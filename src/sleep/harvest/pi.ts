import { join } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { arr, type JsonObject, materialize, obj, parseLine, recordShape, str } from "./jsonl.ts";
import { readLines } from "./read-lines.ts";
import { fileCandidate, fileRevision, walkJsonl } from "./jsonl-source.ts";
import type { Candidate, ReaderContext, ReadOutcome, SessionSource } from "./source.ts";
import { addFinal, addTool, addUserText, emptyDigest, toEpochMs, toIsoUtc } from "./text.ts";

/** `~/.pi` (parent of `agent/sessions`, spec §3.9). */
function piHome(ctx: ReaderContext): string {
  return ctx.locations.piHome || join(homeDir(), ".pi");
}

class Rejected extends Error {}

interface Entry {
  id: string;
  parentId: string | null;
  rec: JsonObject;
}

/**
 * Pi coding-agent sessions (`<pi_home>/agent/sessions/<slug>/<id>.jsonl`, versions 1–3). Strict:
 * any malformed line or tree rejects the whole file. v2/v3 files are trees; only the active branch
 * (last entry back to its root) is harvested. Files are re-read whole when they change, since a
 * new entry can switch the active branch.
 */
export const piSource: SessionSource = {
  name: "pi",
  filters: { headless: true, agent: false },
  listsEverything: true,
  offThread: true,
  list(ctx) {
    return walkJsonl(join(piHome(ctx), "agent", "sessions"), () => false)
      .map((f) => fileCandidate(f))
      .filter((c): c is Candidate => c !== undefined);
  },
  read(c, _prior, ctx): ReadOutcome {
    const records: JsonObject[] = [];
    let bad = false;
    const { consumed, bytesRead, head } = readLines(c.path, 0, c.size, (buf, s, e, last) => {
      if (bad) return false;
      let blank = true;
      for (let i = s; i < e; i++) {
        const b = buf[i]!;
        if (b !== 32 && b !== 9 && b !== 13) {
          blank = false;
          break;
        }
      }
      if (blank) return true;
      const rec = obj(parseLine(buf, s, e, PI_SHAPE));
      if (!rec) {
        // A half-written last line is the writer still at work: wait for it, reject nothing.
        if (!last) bad = true;
        return false;
      }
      records.push(materialise(rec));
      return true;
    });
    const mark = {
      session_id: c.sessionId,
      project: "",
      high_water_ms: c.mtimeMs,
      ...fileRevision(c.path, consumed, head),
      offset: consumed,
      size: c.size,
      mtime_ms: c.mtimeMs,
    };
    if (bad) return { state: null, mark, bytesRead };
    let state: SessionState | null;
    try {
      state = build(records, c, ctx);
    } catch (err) {
      if (!(err instanceof Rejected)) throw err;
      state = null;
    }
    if (state) {
      mark.session_id = state.digest.session_id;
      mark.project = state.digest.project;
      mark.high_water_ms = Math.max(toEpochMs(state.digest.ended_at) ?? 0, c.mtimeMs);
    }
    return { state, mark, bytesRead };
  },
};

/**
 * Everything build() reads of an entry (the header's fields included); the parser builds nothing
 * else, so reasoning, tool arguments and provider details are skipped unread.
 */
const PI_SHAPE = recordShape({
  type: true,
  id: true,
  parentId: true,
  version: true,
  cwd: true,
  timestamp: true,
  message: { role: true, toolName: true, content: { type: true, text: true, name: true } },
});

// A tool result's content is never read either, which only its role tells.
function piDrop(key: string, parent: JsonObject): boolean {
  return key === "content" && str(parent.role) === "toolResult";
}

/** Decode what we may need later (the read buffer is reused after each line), nothing else. */
function materialise(rec: JsonObject): JsonObject {
  return materialize(rec, piDrop) as JsonObject;
}

function build(records: JsonObject[], c: Candidate, ctx: ReaderContext): SessionState | null {
  const header = records[0];
  if (!header || str(header.type) !== "session") throw new Rejected();
  const id = str(header.id);
  if (!id) throw new Rejected();
  const version = header.version;
  if (version !== undefined && version !== 1 && version !== 2 && version !== 3) throw new Rejected();
  const rest = records.slice(1);
  if (rest.some((r) => str(r.type) === "session")) throw new Rejected();
  const branch = version === undefined || version === 1 ? rest : activeBranch(rest);
  const state: SessionState = { digest: emptyDigest("pi", id, c.path), own: false };
  const d = state.digest;
  d.project = str(header.cwd) ?? "";
  const times = [header, ...branch].map((r) => toIsoUtc(str(r.timestamp) ?? r.timestamp)).filter(Boolean);
  d.started_at = times[0] ?? "";
  d.ended_at = times[times.length - 1] ?? "";
  for (const e of branch) {
    if (str(e.type) !== "message") continue;
    const m = obj(e.message);
    const role = str(m?.role);
    if (!m) continue;
    if (role === "user") {
      const text = textBlocks(m.content);
      if (text) addUserText(d, text, state, ctx.lex);
    } else if (role === "assistant") {
      d.n_assistant_turns++;
      for (const b of arr(m.content) ?? []) {
        const o = obj(b);
        if (o && str(o.type) === "toolCall") {
          const name = str(o.name);
          if (name) addTool(d, name);
        }
      }
      const text = textBlocks(m.content);
      if (text) addFinal(d, text);
    } else if (role === "toolResult") {
      // Recovered tool errors are normal; isError is deliberately not feedback (spec §3.9).
      const name = str(m.toolName);
      if (name) addTool(d, name);
    }
  }
  return state;
}

function textBlocks(content: JsonObject[string]): string {
  const s = str(content);
  if (s !== undefined) return s;
  return (arr(content) ?? [])
    .map((b) => obj(b))
    .filter((o): o is JsonObject => o !== undefined && str(o.type) === "text")
    .map((o) => str(o.text) ?? "")
    .filter(Boolean)
    .join("\n");
}

/** The active branch of a v2/v3 tree: from the last entry back to its root, in file order. */
function activeBranch(entries: JsonObject[]): JsonObject[] {
  const byId = new Map<string, Entry>();
  const order: Entry[] = [];
  for (const rec of entries) {
    const id = str(rec.id);
    if (!id || byId.has(id) || !("parentId" in rec)) throw new Rejected();
    const parent = rec.parentId;
    if (parent !== null && (typeof parent !== "string" || !byId.has(parent))) throw new Rejected();
    const e: Entry = { id, parentId: parent as string | null, rec };
    byId.set(id, e);
    order.push(e);
  }
  const path: JsonObject[] = [];
  const seen = new Set<string>();
  for (let e = order[order.length - 1]; e; e = e.parentId === null ? undefined : byId.get(e.parentId)) {
    if (seen.has(e.id)) throw new Rejected();
    seen.add(e.id);
    path.push(e.rec);
  }
  return path.reverse();
}
