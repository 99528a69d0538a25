import { noFTL } from "bun:jsc";
import { isAbsolute, resolve, sep } from "node:path";
import { credentialValues, maskCredentials, maskValues, redactText, SLEEP_SENTINEL } from "../../lib/index.ts";
import { detectFeedback, type FeedbackLexicon, feedbackLexicon } from "../feedback.ts";
import type { Scope, SessionDigest, SourceName } from "./types.ts";

/** Longest text kept per prompt/final (after redaction, so a secret is never cut in half first). */
export const MAX_TEXT_CHARS = 4000;
const PRE_CLIP = 16 * MAX_TEXT_CHARS;
/**
 * Most prompts kept per session: the first half (they state the task), then whatever fits of the
 * rest, dropping the oldest plain prompts first. Corrections and the prompt right before each one
 * (its context) are kept past the cap, up to MAX_PROMPTS_HARD.
 */
export const MAX_PROMPTS = 40;
const MAX_PROMPTS_HARD = 2 * MAX_PROMPTS;
/** Assistant finals kept per session (the last ones). */
export const MAX_FINALS = 5;
const MAX_LIST = 50;

/** A fresh, empty digest. */
export function emptyDigest(source: SourceName, sessionId: string, rawPath: string): SessionDigest {
  const d: SessionDigest = {
    session_id: sessionId,
    source,
    project: "",
    git_branch: "",
    started_at: "",
    ended_at: "",
    user_prompts: [],
    agent_before: [],
    agent_first: [],
    agent_reply: [],
    assistant_finals: [],
    tools_used: [],
    skills_used: [],
    files_touched: [],
    feedback_signals: [],
    n_user_turns: 0,
    n_assistant_turns: 0,
    raw_path: rawPath,
  };
  // Its working lists exist from the start, so the compiled readers never meet a missing one (a
  // value of a type they did not expect makes them bail out and be compiled again).
  CORRECTIONS.set(d.user_prompts, []);
  RAW_FINALS.set(d, []);
  return d;
}

/** Redact, remove NULs, trim, clip: the one treatment every harvested text gets. */
export function cleanText(text: string): string {
  // Redact before the final clip (a clipped secret may no longer match), but bound the work on a
  // multi-megabyte paste: nothing past the pre-clip can reach the kept prefix.
  const bounded = text.length > PRE_CLIP ? text.slice(0, PRE_CLIP) : text;
  // The shared redaction, and credentials said in prose ("the password is …"): never kept, never stored.
  const t = maskCredentials(bounded.includes("\u0000") ? bounded.replaceAll("\u0000", "") : bounded).trim();
  return t.length > MAX_TEXT_CHARS ? `${t.slice(0, MAX_TEXT_CHARS)}…` : t;
}

/** Redacted, NUL-free, bounded metadata (branch names, file paths). */
export function cleanMeta(text: string): string {
  return redactText(text.replaceAll("\u0000", "")).slice(0, 300);
}

/**
 * Blocks an IDE or the agent injects into the user's turn: open-file and selection notices,
 * diagnostics, system reminders, background-task notifications. They are not the user's words and
 * would hide a leading correction ("no, …") behind them.
 */
const INJECTED =
  /<(ide_opened_file|ide_selection|ide_diagnostics|system-reminder|task-notification|user-prompt-submit-hook)\b[^>]*>[\s\S]*?<\/\1>/g;

/** The text with injected blocks removed (unchanged when there are none). */
export function stripInjected(text: string): string {
  if (!text.includes("<")) return text;
  let out = text.replace(INJECTED, "");
  if (out === text) return text;
  // Claude Code follows a background task's notification with its own pointer to the output file.
  if (text.includes("<task-notification")) out = out.replace(TASK_OUTPUT_POINTER, "");
  return out.trim();
}

/** The line Claude Code appends after a `<task-notification>`: not the user speaking. */
const TASK_OUTPUT_POINTER = /^[ \t]*Read the output file to retrieve the result:[^\n]*$/gm;

/** Agent control commands: never a request, with or without arguments. */
const CONTROL_COMMANDS = new Set([
  "clear",
  "compact",
  "model",
  "exit",
  "quit",
  "help",
  "resume",
  "login",
  "logout",
  "cost",
  "config",
  "status",
  "permissions",
  "theme",
  "vim",
  "usage",
  "context",
  "memory",
  "doctor",
  "upgrade",
  "mcp",
  "agents",
  "hooks",
  "allowed-tools",
  "add-dir",
  "bug",
  "release-notes",
  "terminal-setup",
  "privacy-settings",
  "session",
  "new",
  "undo",
  "rewind",
  "reset",
  "cwd",
  "feedback",
]);

/**
 * A Claude Code slash-command envelope (`<command-name>/x</command-name>…<command-args>a</command-args>`)
 * as the command line the user typed (`/x a`), or undefined when the text is not one.
 */
function slashCommandText(text: string): string | undefined {
  if (!startsWithin(text, "<command-name>", 400)) return undefined;
  const name = /<command-name>\s*([^<]*?)\s*<\/command-name>/.exec(text)?.[1] ?? "";
  const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim() ?? "";
  if (!name) return undefined;
  return args ? `${name.startsWith("/") ? name : `/${name}`} ${args}` : "";
}

/** True when `part` lies whole within the first `n` characters of `text` (text.slice(0, n).includes(part), without the copy). */
function startsWithin(text: string, part: string, n: number): boolean {
  return n >= part.length && text.lastIndexOf(part, n - part.length) !== -1;
}

/** spec §3.2 meta-prompt filter (envelopes, bare or control slash commands, pasted/caveat stubs, command bodies). */
export function isMetaPrompt(raw: string): boolean {
  return metaPrompt(raw, true);
}

/** isMetaPrompt; `mayHoldTag` false says the text has no `<` (so no command marker to look for). */
function metaPrompt(raw: string, mayHoldTag: boolean): boolean {
  const t = raw.trim();
  if (!t) return true;
  if (t.startsWith("<") && t.endsWith(">")) return true;
  if (t.startsWith("/")) {
    // A slash command's arguments are the user's request ("/build-feature mode: drain"); a bare
    // command or an agent control command ("/model gpt-5") is not. A path ("/etc/hosts …") is text.
    const m = /^\/([A-Za-z][\w:.-]*)(?:\s+([\s\S]*))?$/.exec(t);
    if (m && !m[1]!.includes("/")) {
      if (CONTROL_COMMANDS.has(m[1]!.toLowerCase())) return true;
      if (!m[2]?.trim()) return true;
    }
  }
  if (t.startsWith("[Pasted text") || t.startsWith("Caveat:")) return true;
  if (mayHoldTag && (startsWithin(t, "<command-message>", 200) || startsWithin(t, "<command-name>", 200))) return true;
  return t.startsWith("# /");
}

/** True when a text carries the engine's own sentinel (the session is one of our calls). */
/** The sentinel is a tag today; should it ever change, a text without `<` is still searched for it. */
const SENTINEL_IS_TAG = SLEEP_SENTINEL.includes("<");

export function hasSentinel(raw: string): boolean {
  return raw.includes(SLEEP_SENTINEL);
}

/**
 * Record one user message: sentinel check on the raw text, then meta filter, then the prompt and
 * its feedback. Returns false when the message was a meta prompt.
 */
export function addUserText(d: SessionDigest, raw: string, flags: { own: boolean }, lex: Lexicon): boolean {
  // The sentinel, a command envelope and injected blocks all start with `<`: most prompts hold
  // none, and one search says so for all three.
  const tagged = raw.includes("<");
  if ((tagged || !SENTINEL_IS_TAG) && hasSentinel(raw)) flags.own = true;
  const command = tagged ? slashCommandText(raw) : undefined;
  const spoken = command !== undefined ? command : tagged ? stripInjected(raw) : raw;
  if (metaPrompt(spoken, tagged || command !== undefined)) return false;
  noteSecrets(d, spoken);
  const text = cleanText(spoken);
  if (!text) return false;
  d.n_user_turns++;
  const corrections = keepWithinCap(d, lex);
  const tags = detectFeedback(text, lex);
  d.user_prompts.push(text);
  d.agent_before.push(takeAgentAction(d));
  d.agent_first.push("");
  d.agent_reply.push("");
  corrections.push(hasComplaint(tags));
  for (const tag of tags) addUnique(d.feedback_signals, tag);
  return true;
}

/** True when a prompt carries a negative signal (a correction). */
function isCorrection(text: string, lex: Lexicon): boolean {
  return hasComplaint(detectFeedback(text, lex));
}

function hasComplaint(tags: readonly string[]): boolean {
  for (const t of tags) if (t.startsWith("neg:")) return true;
  return false;
}

/**
 * Make room for one more prompt. The first MAX_PROMPTS/2 always stay; after them the oldest prompt
 * that is neither a correction nor the context right before one goes. A burst of corrections in
 * the middle of a long session therefore survives; past MAX_PROMPTS_HARD the oldest middle goes.
 */
function keepWithinCap(d: SessionDigest, lex: Lexicon): boolean[] {
  const prompts = d.user_prompts;
  const corr = correctionFlags(prompts, lex);
  if (prompts.length < MAX_PROMPTS) return corr;
  const head = MAX_PROMPTS / 2;
  let drop = head;
  if (prompts.length < MAX_PROMPTS_HARD) {
    for (let i = head; i < prompts.length; i++) {
      if (corr[i] || (i + 1 < corr.length && corr[i + 1])) continue;
      drop = i;
      break;
    }
  }
  prompts.splice(drop, 1);
  if (d.agent_before.length > drop) d.agent_before.splice(drop, 1);
  if (d.agent_first.length > drop) d.agent_first.splice(drop, 1);
  if (d.agent_reply.length > drop) d.agent_reply.splice(drop, 1);
  corr.splice(drop, 1);
  return corr;
}

/** Whether each kept prompt of a digest is a correction, index for index (each prompt judged once). */
const CORRECTIONS = new WeakMap<string[], boolean[]>();

function correctionFlags(prompts: string[], lex: Lexicon): boolean[] {
  let flags = CORRECTIONS.get(prompts);
  if (!flags || flags.length !== prompts.length) {
    flags = prompts.map((p) => isCorrection(p, lex));
    CORRECTIONS.set(prompts, flags);
  }
  return flags;
}

/**
 * The agent's last command or edit and its last words since the user's last prompt (in memory
 * only). An edit's description is computed only if it is ever read (editLines reads files' heads).
 */
const LAST_ACTION = new WeakMap<SessionDigest, { tool: string | (() => string); text: string }>();
const ACTION_CHARS = 300;
const REPLY_CHARS = 160;

const clipped = (raw: string, n: number) => (raw.length > n ? raw.slice(0, n) : raw);

/**
 * An edit's description: the first four non-blank lines it wrote that `old` (what stood there
 * before) did not hold, joined by "; ". Lines both versions hold (a file's imports, mostly) say
 * nothing about what changed.
 */
export function newLines(lines: Iterable<string>, old: ReadonlySet<string> = new Set()): string {
  const out: string[] = [];
  for (const raw of lines) {
    const l = raw.trim();
    if (!l || old.has(l)) continue;
    out.push(l);
    if (out.length === 4) break;
  }
  return out.join("; ");
}

/**
 * Record what the agent just did: a tool call (`$ npm install x`, `edit src/a.ts: …`, or a function
 * giving it when asked) or its words.
 */
export function noteAgentAction(d: SessionDigest, kind: "tool" | "text", raw: string | (() => string)): void {
  if (!raw) return;
  const a = LAST_ACTION.get(d) ?? { tool: "", text: "" };
  // The first command or edit after a prompt is kept too: after a correction, the corrected action.
  const first = d.agent_first.length - 1;
  // Its first words after a prompt too: "You're right, …" tells a correction from a request.
  if (kind === "text" && first >= 0 && d.agent_reply[first] === "")
    d.agent_reply[first] = cleanText(clipped(raw as string, REPLY_CHARS));
  if (kind === "tool" && first >= 0 && d.agent_first[first] === "") {
    const text = typeof raw === "string" ? raw : raw();
    d.agent_first[first] = cleanText(clipped(text, ACTION_CHARS));
    a.tool = clipped(text, 2 * ACTION_CHARS);
  } else if (kind === "tool") a.tool = typeof raw === "string" ? clipped(raw, 2 * ACTION_CHARS) : raw;
  else a.text = clipped(raw as string, 2 * ACTION_CHARS);
  LAST_ACTION.set(d, a);
}

/** What the agent did before the prompt being added ("" when nothing), cleaned; the slate is wiped. */
function takeAgentAction(d: SessionDigest): string {
  const a = LAST_ACTION.get(d);
  if (!a) return "";
  LAST_ACTION.delete(d);
  const tool = typeof a.tool === "string" ? a.tool : clipped(a.tool(), 2 * ACTION_CHARS);
  const joined = tool && a.text ? `${tool} · ${a.text}` : tool || a.text;
  return cleanText(clipped(joined, ACTION_CHARS));
}

/**
 * Assistant texts of a digest being read, not cleaned yet: only the last MAX_FINALS are kept, so
 * only those are redacted, by settleFinals. Held in memory only, never in the digest.
 */
const RAW_FINALS = new WeakMap<SessionDigest, string[]>();

/** Record one assistant text (finals keep the last MAX_FINALS); settleFinals cleans them into the digest. */
export function addFinal(d: SessionDigest, raw: string): void {
  // A text that cleans to nothing (blank, NULs) never takes a place among the last ones.
  if (isBlank(raw)) return;
  let pending = RAW_FINALS.get(d);
  if (!pending) {
    pending = [];
    RAW_FINALS.set(d, pending);
  } else if (pending.length === MAX_FINALS) pending.shift();
  pending.push(raw.length > PRE_CLIP ? raw.slice(0, PRE_CLIP) : raw);
}

/** True when a text holds nothing but NULs and white space (so it cleans to ""). */
function isBlank(raw: string): boolean {
  // Most texts start with a visible ASCII character: no need to copy them to know.
  const c = raw.charCodeAt(0);
  if (c > 32 && c < 127) return false;
  return !raw.replaceAll("\u0000", "").trim();
}

/**
 * Credential values the user said in this session's turns ("the password for the upload is X"),
 * in memory only: wherever the session repeats one (the agent's command that echoes it, its reply),
 * settleFinals takes it out, although nothing there looks like a credential on its own.
 */
const SECRETS = new WeakMap<SessionDigest, Set<string>>();

function noteSecrets(d: SessionDigest, spoken: string): void {
  const values = credentialValues(spoken);
  if (!values.length) return;
  const known = SECRETS.get(d) ?? new Set<string>();
  for (const v of values) known.add(v);
  SECRETS.set(d, known);
}

/**
 * Clean the assistant texts added since the last call into `assistant_finals` (the last
 * MAX_FINALS), and take every credential value the user said out of everything the digest keeps.
 */
export function settleFinals(d: SessionDigest): void {
  const pending = RAW_FINALS.get(d);
  if (pending) {
    RAW_FINALS.delete(d);
    for (const raw of pending) d.assistant_finals.push(cleanText(raw));
    if (d.assistant_finals.length > MAX_FINALS) d.assistant_finals.splice(0, d.assistant_finals.length - MAX_FINALS);
  }
  const known = SECRETS.get(d);
  if (!known) return;
  for (const list of [d.user_prompts, d.agent_before, d.agent_first, d.agent_reply, d.assistant_finals])
    for (let i = 0; i < list.length; i++) list[i] = maskValues(list[i]!, known);
}

/** Widen a session's time span to a timestamp: the first one read is its start, the last its end. */
export function noteTime(d: SessionDigest, ts: string | undefined): void {
  if (!ts) return;
  if (!d.started_at) d.started_at = ts;
  d.ended_at = ts;
}

/** Tool names as spec §3.1: `[A-Za-z0-9_.:-]`, at most 80 chars. */
export function sanitizeToolName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.:-]/g, "").slice(0, 80);
}

export function addTool(d: SessionDigest, name: string): void {
  const t = sanitizeToolName(name);
  if (t) addUnique(d.tools_used, t);
}

/** Append if absent, keeping lists bounded. */
export function addUnique(list: string[], value: string): void {
  if (list.length < MAX_LIST && !list.includes(value)) list.push(value);
}

function commaList(raw: string | undefined, lower: boolean): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => (lower ? s.trim().toLowerCase() : s.trim()))
    .filter(Boolean);
}

/** Feedback phrases and sub-agent markers, with the env extensions of spec §9.3. */
export interface Lexicon extends FeedbackLexicon {
  agentMarkers: string[];
}

/** Build the lexicon from SKILLOPT_SLEEP_NEG_FEEDBACK / _POS_FEEDBACK / _AGENT_MARKERS. */
export function makeLexicon(env: Readonly<Record<string, string | undefined>>): Lexicon {
  return {
    ...feedbackLexicon(
      commaList(env.SKILLOPT_SLEEP_NEG_FEEDBACK, true),
      commaList(env.SKILLOPT_SLEEP_POS_FEEDBACK, true),
    ),
    agentMarkers: [...AGENT_MARKERS, ...commaList(env.SKILLOPT_SLEEP_AGENT_MARKERS, false)],
  };
}

// spec §3.2 headless-replay markers: our own prompt headings, plus the older upstream wording.
const ENGINE_MARKERS = [
  "## CURRENT SKILL",
  "## FAILED TASKS",
  "## SUCCESSFUL TASKS",
  "## OUTPUT FORMAT",
  "## TASK\n",
  "## SKILL\n",
  "## Skill\n",
  "You are a strict grader",
  "You are an expert prompt optimizer",
];
const AGENT_MARKERS = [
  "You are a Claude-Mem, a specialized observer",
  "Hello memory agent, you are continuing to observe",
  "You are the SkillOpt-Sleep consolidation agent",
];

/** spec §3.2: the engine's own single-turn calls (markers, or tiny prompt answered within 3 s). */
export function isHeadlessReplay(d: SessionDigest): boolean {
  if (d.n_user_turns > 1) return false;
  if (d.n_user_turns === 0 || d.user_prompts.length === 0) return true;
  const only = d.user_prompts[0]!;
  if (ENGINE_MARKERS.some((m) => only.includes(m))) return true;
  const a = toEpochMs(d.started_at);
  const b = toEpochMs(d.ended_at);
  return only.length < 200 && a !== undefined && b !== undefined && b - a < 3000;
}

/** spec §3.2: another tool's sub-agent, recognised by its first prompt. */
export function isAgentSession(d: SessionDigest, lex: Lexicon): boolean {
  const first = d.user_prompts[0];
  if (!first) return false;
  return lex.agentMarkers.some((m) => first.includes(m));
}

/**
 * Project scoping. Better than upstream (spec §12.1 item 4): a session matches the invoked
 * project when it ran in the project or below it, not when it ran in an ancestor such as $HOME;
 * an empty project never matches a specific project.
 */
export function projectMatches(project: string, scope: Scope, invoked: string): boolean {
  if (scope === "all") return true;
  if (scope === "invoked") {
    if (!invoked) return true;
    if (!project || !isAbsolute(project)) return false;
    return isWithin(resolve(project), resolve(invoked));
  }
  if (!project) return false;
  const p = resolve(project);
  return scope.some((s) => isWithin(p, resolve(s)));
}

/** True when child is parent or lies below it. */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true;
  const base = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(base);
}

/**
 * Parse a source timestamp to UTC epoch ms: ISO with `Z` or an offset, SQLite `YYYY-MM-DD HH:MM:SS`
 * (UTC), or epoch seconds/ms numbers. Naive ISO strings are read as UTC (what every source writes).
 */
export function toEpochMs(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value < 1e11 ? value * 1000 : value;
  if (typeof value !== "string" || value.length < 10) return undefined;
  let s = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(s)) return toEpochMs(Number(s));
  if (/^\d{4}-\d{2}-\d{2} \d/.test(s)) s = s.replace(" ", "T");
  if (/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+)?$/.test(s)) s += s.includes("T") ? "Z" : "T00:00:00Z";
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : ms;
}

/** A source timestamp as UTC ISO `…Z` ("" when unparseable). */
export function toIsoUtc(value: unknown): string {
  const ms = toEpochMs(value);
  return ms === undefined ? "" : new Date(ms).toISOString();
}

// The per-record text helpers stay out of the FTL tier, like the readers that call them: a harvest
// is a fresh process that runs them for a fraction of a second, too short to repay an FTL compile.
for (const f of [
  addUserText,
  addFinal,
  settleFinals,
  cleanText,
  stripInjected,
  noteTime,
  keepWithinCap,
  hasComplaint,
]) {
  noFTL(f as () => void);
}
