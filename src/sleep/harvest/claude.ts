import { noFTL } from "bun:jsc";
import { join } from "node:path";
import { homeDir } from "../../lib/index.ts";
import { arr, type JsonObject, type JsonValue, obj, recordShape, str, strHead } from "./jsonl.ts";
import { fileCandidate, readJsonlSession, walkJsonl } from "./jsonl-source.ts";
import type { Candidate, ReaderContext, SessionSource } from "./source.ts";
import type { SessionDigest } from "./types.ts";
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
  stripInjected,
} from "./text.ts";

/**
 * The tools that change a file. Reading one (Read, which has a file_path too) is no action a
 * correction answers, nor the corrected action: the agent often reads a file before redoing it.
 */
const EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

/** The head of each file's last Write in a session being read (editLines), in memory only. */
const WRITTEN = new WeakMap<SessionDigest, Map<string, () => string>>();

/** How much of an edit's text is read: what a correction changes is in its first lines, mostly. */
const EDIT_HEAD = 1024;

/**
 * What an edit wrote, as the corrected action reads it (newLines): the lines an Edit (or
 * MultiEdit) added that its old text did not hold, or the lines a Write wrote that the session's
 * last Write of that file did not (all of them the first time). Only the
 * first EDIT_HEAD bytes of each text are kept, and decoded and compared only if the action is
 * ever read (the last action before a prompt, the first after one).
 */
function editLines(d: SessionDigest, file: string, input: JsonObject | undefined): () => string {
  const head = (v: JsonValue | undefined) => strHead(v, EDIT_HEAD);
  const joined = (key: "new_string" | "old_string") => {
    const parts = arr(input?.edits)?.map((e) => head(obj(e)?.[key]));
    return parts ? () => parts.map((p) => p?.() ?? "").join("\n") : undefined;
  };
  const content = head(input?.content);
  const next = head(input?.new_string) ?? content ?? joined("new_string") ?? (() => "");
  let prev: () => string;
  if (content !== undefined) {
    const files = WRITTEN.get(d) ?? new Map<string, () => string>();
    WRITTEN.set(d, files);
    prev = files.get(file) ?? (() => "");
    // Bounded: the last write of each of a session's first 200 files.
    if (files.has(file) || files.size < 200) files.set(file, content);
  } else prev = head(input?.old_string) ?? joined("old_string") ?? (() => "");
  return () =>
    `edit ${file}: ${newLines(
      next().split("\n"),
      new Set(
        prev()
          .split("\n")
          .map((l) => l.trim()),
      ),
    )}`;
}

/** `~/.claude` on every OS (spec §3.3). */
function claudeHome(ctx: ReaderContext): string {
  return ctx.locations.claudeHome || join(homeDir(), ".claude");
}

const TEXT_BLOCKS: readonly string[] = ["text"];

/** Text of a message's content: a string, or the `\n`-joined `text` blocks. */
export function blockText(content: JsonValue | undefined, textTypes: readonly string[] = TEXT_BLOCKS): string {
  const s = str(content);
  if (s !== undefined) return s;
  const blocks = arr(content);
  if (!blocks) return "";
  // Most messages hold one text block: it is returned as it is, with no list to join.
  let first = "";
  let parts: string[] | undefined;
  for (const b of blocks) {
    const o = obj(b);
    if (!o) continue;
    const t = str(o.type);
    if (t && textTypes.includes(t)) {
      const text = str(o.text);
      if (!text) continue;
      if (!first) first = text;
      else if (parts) parts.push(text);
      else parts = [first, text];
    }
  }
  return parts ? parts.join("\n") : first;
}

/**
 * Everything onRecord reads of a record; the parser builds nothing else. toolUseResult repeats the
 * tool output in structured form after everything we read: the record ends there, unscanned.
 */
const CLAUDE_SHAPE = recordShape({
  timestamp: true,
  cwd: true,
  gitBranch: true,
  type: true,
  snapshot: { trackedFileBackups: "keys" },
  files: "keys",
  isMeta: true,
  isSidechain: true,
  isCompactSummary: true,
  isVisibleInTranscriptOnly: true,
  message: {
    role: true,
    content: {
      type: true,
      text: true,
      name: true,
      // An edit's old and new text and a Write's content: what the agent changed (editLines).
      input: {
        skill: true,
        command: true,
        file_path: true,
        new_string: true,
        old_string: true,
        content: true,
        edits: { old_string: true, new_string: true },
      },
    },
  },
  toolUseResult: "stop",
});

const INTERRUPTED = /^\[Request interrupted by user[^\]]*\]$/;

/** Claude Code transcripts: `<claude_home>/projects/**\/<session>.jsonl`, sub-agent sidechains skipped. */
export const claudeSource: SessionSource = {
  name: "claude",
  filters: { headless: true, agent: true },
  listsEverything: true,
  offThread: true,
  list(ctx) {
    const files = walkJsonl(join(claudeHome(ctx), "projects"), (name, isDir) =>
      isDir ? name === "subagents" : name.startsWith("agent-"),
    );
    return files.map((f) => fileCandidate(f)).filter((c): c is Candidate => c !== undefined);
  },
  read(c, prior, ctx) {
    return readJsonlSession(
      c,
      prior,
      () => {
        const digest = emptyDigest("claude", c.sessionId, c.path);
        // Made with the digest, so the reader's compiled code never meets a missing set.
        SEEN_PATHS.set(digest, new Set());
        return { digest, own: false };
      },
      (rec, st) => onRecord(rec, st.digest, st, ctx),
      CLAUDE_SHAPE,
    );
  },
};

/** Raw snapshot paths already recorded, per digest being read. */
const SEEN_PATHS = new WeakMap<SessionDigest, Set<string>>();

function onRecord(rec: JsonObject, d: SessionDigest, st: { own: boolean }, ctx: ReaderContext): void {
  // Raw here; readJsonlSession normalises both ends to UTC ISO once the file is read.
  const ts = str(rec.timestamp);
  noteTime(d, ts);
  if (!d.project) {
    const cwd = str(rec.cwd);
    if (cwd) d.project = cwd;
  }
  if (!d.git_branch) {
    const b = str(rec.gitBranch);
    if (b) d.git_branch = cleanMeta(b);
  }
  const type = str(rec.type);
  if (type === "file-history-snapshot") {
    // spec §12.1 item 6: the file paths are the keys of snapshot.trackedFileBackups.
    const snap = obj(obj(rec.snapshot)?.trackedFileBackups) ?? obj(rec.files);
    if (!snap) return;
    // Every snapshot repeats the session's tracked files: each path is cleaned once per session.
    let seen = SEEN_PATHS.get(d);
    if (!seen) {
      seen = new Set<string>();
      SEEN_PATHS.set(d, seen);
    }
    // An index loop: iterating a slice of Object.keys made the compiled reader bail out and be
    // compiled again (the key arrays come in several internal kinds).
    const keys = Object.keys(snap);
    for (let i = 0; i < keys.length && i < 20; i++) {
      const k = keys[i]!;
      if (seen.has(k)) continue;
      seen.add(k);
      addUnique(d.files_touched, cleanMeta(k));
    }
    return;
  }
  // Injected caveats, sidechains and /compact summaries are not the user speaking.
  if (
    rec.isMeta === true ||
    rec.isSidechain === true ||
    rec.isCompactSummary === true ||
    rec.isVisibleInTranscriptOnly === true
  )
    return;
  const msg = obj(rec.message);
  if (!msg) return;
  const role = str(msg.role);
  if (role === "user") {
    // IDE notices, reminders and task notifications are stripped (addUserText strips them too).
    const text = stripInjected(blockText(msg.content));
    if (INTERRUPTED.test(text)) {
      // The user stopped the agent: a correction signal, not a prompt.
      addUnique(d.feedback_signals, "neg:user_interrupt");
      return;
    }
    if (text) addUserText(d, text, st, ctx.lex);
    return;
  }
  if (role !== "assistant") return;
  d.n_assistant_turns++;
  const blocks = arr(msg.content);
  if (blocks) {
    for (const b of blocks) {
      const o = obj(b);
      if (!o || str(o.type) !== "tool_use") continue;
      const name = str(o.name);
      if (!name) continue;
      addTool(d, name);
      const input = obj(o.input);
      const command = str(input?.command);
      const file = str(input?.file_path);
      // What the agent did, as evidence of what a correction right after it corrects.
      if (command) noteAgentAction(d, "tool", `$ ${command}`);
      else if (file && EDIT_TOOLS.has(name)) noteAgentAction(d, "tool", editLines(d, file, input));
      if (name === "Skill") {
        const skill = str(obj(o.input)?.skill)?.trim();
        if (skill) addUnique(d.skills_used, skill);
      }
    }
  }
  const text = blockText(msg.content);
  if (text) {
    addFinal(d, text);
    noteAgentAction(d, "text", text);
  }
}

// The per-record reader stays out of the FTL tier, like the parser (jsonl.ts): it inlines the
// text helpers, and compiling it with FTL took ~140 ms of CPU in half the runs of a 0.4 s harvest
// of the 256 MB bench corpus, for no measurable gain in the time it ran.
for (const f of [onRecord, blockText]) noFTL(f as () => void);
