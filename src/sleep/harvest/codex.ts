import { noFTL } from "bun:jsc";
import { basename, join } from "node:path";
import { homeDir } from "../../lib/index.ts";
import type { SessionState } from "../ports.ts";
import { arr, type JsonObject, type JsonValue, obj, recordShape, str } from "./jsonl.ts";
import { fileCandidate, readJsonlSession, walkJsonl } from "./jsonl-source.ts";
import { type Candidate, dirEntries, type ReaderContext, type SessionSource } from "./source.ts";
import {
  addFinal,
  addTool,
  addUnique,
  addUserText,
  cleanMeta,
  emptyDigest,
  newLines,
  noteAgentAction,
  noteTime,
  projectMatches,
} from "./text.ts";

interface CodexCarry {
  /**
   * Modern rollouts log each user message twice: a `response_item` message and an `event_msg`
   * user_message echo (§12.1 item 5). Each one waits here for its echo from the other kind; a
   * message that repeats the previous one ("A", then "A" again) has no echo waiting and is kept.
   */
  pendingUser?: Array<{ kind: "item" | "event"; text: string }>;
  lastAssistant: string;
  pendingAssistant?: Array<{ kind: "item" | "event"; text: string }>;
  /** A later cwd matched the invoked project. */
  projectPinned: boolean;
}

/** `$CODEX_HOME`, else `~/.codex` (spec §3.4, §12.1 item 5). */
function codexHome(ctx: ReaderContext): string {
  return ctx.locations.codexHome || ctx.env.CODEX_HOME || join(homeDir(), ".codex");
}

const UUID_TAIL = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/**
 * Everything onRecord reads of a record; the parser builds nothing else. The payload keys holding
 * tool arguments/outputs, reasoning text (agent_reasoning's `text`, the reasoning item's encrypted
 * content) and token counts (`info`, `rate_limits`) end the record: each is its payload's last
 * member or comes after everything we read, and payload is the record's last key.
 */
const CODEX_SHAPE = recordShape({
  type: true,
  timestamp: true,
  payload: {
    type: true,
    timestamp: true,
    started_at: true,
    completed_at: true,
    cwd: true,
    git: { branch: true },
    message: true,
    role: true,
    content: { text: true, content: true },
    name: true,
    output: "stop",
    arguments: true,
    input: true,
    encrypted_content: "stop",
    aggregated_output: "stop",
    formatted_output: "stop",
    stdout: "stop",
    stderr: "stop",
    text: "stop",
    info: "stop",
    rate_limits: "stop",
  },
});

/** Codex rollouts: live `sessions/YYYY/MM/DD/*.jsonl` and flat `archived_sessions/*.jsonl`. */
export const codexSource: SessionSource = {
  name: "codex",
  filters: { headless: false, agent: false },
  listsEverything: true,
  offThread: true,
  list(ctx) {
    const home = codexHome(ctx);
    const live = walkJsonl(join(home, "sessions"), () => false);
    const archived = listFlat(join(home, "archived_sessions"));
    const out: Candidate[] = [];
    // Archived first: when a session was just moved, the archive holds the final copy.
    for (const f of [...archived, ...live]) {
      const stem = basename(f, ".jsonl");
      const id = UUID_TAIL.exec(stem)?.[1] ?? stem;
      // Keyed by session id, so a session moved from sessions/ to archived_sessions/ is not re-read.
      const c = fileCandidate(f, id, "", `codex:${id}`);
      if (c) out.push(c);
    }
    return out;
  },
  read(c, prior, ctx) {
    return readJsonlSession(
      c,
      prior,
      () => ({
        digest: emptyDigest("codex", c.sessionId, c.path),
        own: false,
        carry: { pendingUser: [], lastAssistant: "", pendingAssistant: [], projectPinned: false } satisfies CodexCarry,
      }),
      (rec, st) => onRecord(rec, st, ctx),
      CODEX_SHAPE,
    );
  },
};

function listFlat(dir: string): string[] {
  return dirEntries(dir)
    .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => join(dir, e.name));
}

const TOOL_EVENTS: Record<string, string> = {
  exec_command_end: "exec_command",
  patch_apply_end: "apply_patch",
  web_search_call: "web_search",
  tool_search_call: "tool_search",
  mcp_tool_call_end: "mcp_tool_call",
};
const NOT_TOOLS = new Set(["user_message", "agent_message", "message", "reasoning", "agent_reasoning", "token_count"]);

function onRecord(rec: JsonObject, st: SessionState, ctx: ReaderContext): void {
  const d = st.digest;
  const carry = st.carry as CodexCarry;
  const p = obj(rec.payload);
  if (!p) return;
  const ts = str(p.timestamp) ?? str(rec.timestamp) ?? str(p.started_at) ?? str(p.completed_at);
  noteTime(d, ts);
  const cwd = str(p.cwd);
  if (cwd) {
    if (!d.project) d.project = cwd;
    else if (!carry.projectPinned && ctx.invokedProject && projectMatches(cwd, "invoked", ctx.invokedProject)) {
      d.project = cwd;
      carry.projectPinned = true;
    }
  }
  if (!d.git_branch) {
    const branch = str(obj(p.git)?.branch);
    if (branch) d.git_branch = cleanMeta(branch);
  }
  const type = str(p.type) ?? "";
  const recType = str(rec.type);
  if (recType === "session_meta" || recType === "turn_context") return;
  if (type === "turn_aborted") addUnique(d.feedback_signals, "neg:user_interrupt");
  else if (type === "error" && recType === "event_msg") addUnique(d.feedback_signals, "neg:codex_turn_error");
  else if (type === "user_message") userText(st, str(p.message) ?? "", ctx, "event");
  else if (type === "agent_message") assistantText(st, str(p.message) ?? "", "event");
  else if (type === "message") {
    const role = str(p.role);
    if (role === "user") userText(st, contentText(p.content), ctx, "item");
    else if (role === "assistant") assistantText(st, contentText(p.content), "item");
  } else if (!NOT_TOOLS.has(type)) {
    toolEvent(d, type, str(p.name));
    if (type === "function_call" || type === "custom_tool_call")
      noteCodexCall(d, str(p.arguments) ?? str(p.input) ?? "");
  }
}

/** The lines a patch adds, read only as far as they are asked for (a new file's patch may be long). */
function* addedLines(patch: string): Generator<string> {
  for (const m of patch.matchAll(/^\+(?!\+\+)(.*)$/gm)) yield m[1]!;
}

/** The command of a Codex shell call (`{"command":["bash","-lc","npm i x"]}`) or the patch's first file, as the agent's action. */
function noteCodexCall(d: SessionState["digest"], args: string): void {
  if (!args) return;
  let command: unknown;
  try {
    command = (JSON.parse(args) as { command?: unknown }).command;
  } catch {
    command = args;
  }
  const parts = Array.isArray(command) ? command.filter((x): x is string => typeof x === "string") : [];
  const line = parts.length ? (parts.at(-1) ?? "") : typeof command === "string" ? command : "";
  const patch = /^\*\*\* (?:Update|Add) File: (.+)$/m.exec(line);
  if (patch) {
    noteAgentAction(d, "tool", `edit ${patch[1]}: ${newLines(addedLines(line))}`);
  } else if (line) noteAgentAction(d, "tool", `$ ${line}`);
}

function toolEvent(d: SessionState["digest"], type: string, name: string | undefined): void {
  if (name) {
    addTool(d, name);
    return;
  }
  const mapped = TOOL_EVENTS[type] ?? (type.endsWith("_tool_call") ? type : undefined);
  if (mapped) addTool(d, mapped);
}

function contentText(content: JsonValue | undefined): string {
  const s = str(content);
  if (s !== undefined) return s;
  const items = arr(content);
  if (!items) return "";
  // Most messages hold one text item: it is returned as it is, with no list to join.
  let first = "";
  let parts: string[] | undefined;
  for (const item of items) {
    const o = obj(item);
    const t = str(o?.text) ?? (o ? contentText(o.content) : str(item));
    if (!t) continue;
    if (!first) first = t;
    else if (parts) parts.push(t);
    else parts = [first, t];
  }
  return parts ? parts.join("\n") : first;
}

/** spec §3.4 sanitisation of injected context (environment, AGENTS.md instruction blocks). */
function sanitizeCodexUser(text: string): string {
  const t = (text.includes("\u0000") ? text.replaceAll("\u0000", "") : text).trim();
  if (t.startsWith("<codex_internal_context") || t.startsWith("<environment_context")) return "";
  if (t.startsWith("# AGENTS.md instructions") || t.includes("--- project-doc ---")) {
    const cut = Math.max(t.lastIndexOf("</environment_context>"), t.lastIndexOf("</INSTRUCTIONS>"));
    if (cut === -1) return "";
    const rest = t
      .slice(cut)
      .replace(/^<\/(?:environment_context|INSTRUCTIONS)>/, "")
      .replace(/<[^>]+>/g, "")
      .trim();
    return rest;
  }
  return t;
}

/**
 * True when this message is the echo of one already recorded (same text, the other record kind,
 * still waiting); otherwise the message is new and waits for its own echo.
 */
function isEcho(
  pending: Array<{ kind: "item" | "event"; text: string }>,
  kind: "item" | "event",
  text: string,
): boolean {
  for (let i = 0; i < pending.length; i++) {
    const p = pending[i]!;
    if (p.kind !== kind && p.text === text) {
      pending.splice(i, 1);
      return true;
    }
  }
  pending.push({ kind, text });
  // Echoes follow their message closely; a bounded window keeps old files from growing this.
  if (pending.length > 8) pending.shift();
  return false;
}

function userText(st: SessionState, raw: string, ctx: ReaderContext, kind: "item" | "event"): void {
  const carry = st.carry as CodexCarry;
  const text = sanitizeCodexUser(raw);
  if (!text) return;
  carry.pendingUser ??= [];
  if (isEcho(carry.pendingUser, kind, text)) return;
  addUserText(st.digest, text, st, ctx.lex);
}

function assistantText(st: SessionState, raw: string, kind: "item" | "event"): void {
  const carry = st.carry as CodexCarry;
  const text = raw.trim();
  if (!text) return;
  carry.pendingAssistant ??= [];
  if (isEcho(carry.pendingAssistant, kind, text)) return;
  carry.lastAssistant = text;
  st.digest.n_assistant_turns++;
  addFinal(st.digest, text);
  noteAgentAction(st.digest, "text", text);
}

// The per-record reader stays out of the FTL tier, like the parser (jsonl.ts): it inlines the
// text helpers, and compiling it with FTL took ~140 ms of CPU in half the runs of a 0.4 s harvest
// of the 256 MB bench corpus, for no measurable gain in the time it ran.
for (const f of [onRecord, contentText, isEcho, userText, assistantText, sanitizeCodexUser, noteCodexCall])
  noFTL(f as () => void);
