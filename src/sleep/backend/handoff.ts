import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import {
  createExclusive,
  extractJson,
  fileKind,
  redactText,
  SkilloptError,
  StagingError,
  writeFileAtomic,
  writeJsonAtomic,
} from "../../lib/index.ts";
import { entryExists, readJsonFile, readRegularFile } from "../adopt/read.ts";
import { type SealKey, sealKey, sealObject, sealProblem, sealTag } from "../adopt/seal.ts";
import type { SleepConfig } from "../config.ts";
import type { EditRecord } from "../types.ts";
import { attemptPrompt, judgePrompt, minerPrompt, reflectPrompt, rulesPrompt, standingPrompt } from "./prompts.ts";
import { parseRules, parseStanding } from "./rules.ts";
import type { SleepBackend, SleepBackendOptions } from "./types.ts";

const PENDING_PREFIX = "[[SKILLOPT-SLEEP-PENDING:";

/** Model calls are waiting for answers in the handoff directory (exit 3). */
export class PendingCallsError extends SkilloptError<{
  handoff_pending: number;
  prompts: string;
  answers_dir: string;
}> {
  constructor(
    pending: number,
    readonly promptsPath: string,
    readonly answersDir: string,
  ) {
    // Its own code: waiting for answers is not a failed model call (`backend`, exit 1).
    super(
      "handoff_pending",
      `${pending} model call(s) are waiting for answers: read ${promptsPath}, write each answer file, then rerun the same command`,
      3,
      {
        data: { handoff_pending: pending, prompts: promptsPath, answers_dir: answersDir },
      },
    );
  }
  get pending(): number {
    return this.data.handoff_pending;
  }
}

interface Pending {
  id: string;
  answer_file: string;
  max_tokens: number;
  prompt: string;
}

/** Handoff directory: $SKILLOPT_SLEEP_HANDOFF_DIR, else `<project>/.skillopt-sleep/handoff` (inside our own folder). */
function handoffDir(project: string, env: Readonly<Record<string, string | undefined>>): string {
  return resolve(env.SKILLOPT_SLEEP_HANDOFF_DIR || join(project, ".skillopt-sleep", "handoff"));
}

/** The sealed record a review writes into the handoff directory it creates. */
const ROUND_FILE = "round.json";
const ROUND_FORMAT = "skillopt_sleep.handoff_round.v1";
/** Largest answer file read (a model answer, not a data set). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** A handoff round: the directory this user's review created, its id, and the key its files are sealed with. */
interface HandoffRound {
  dir: string;
  id: string;
  key: SealKey;
}

const me = (): number | undefined => (typeof process.getuid === "function" ? process.getuid() : undefined);

function untrustedHandoff(message: string, path: string): never {
  throw new StagingError(message, { data: { path, kind: "untrusted_handoff" } });
}

/** A real directory of this user that no one else can write into (or refused with one line). */
function privateDir(path: string, what: string): void {
  const st = lstatSync(path);
  if (!st.isDirectory())
    untrustedHandoff(`${what} ${path} is ${fileKind(st)}, not a real directory; refusing to use it`, path);
  if (process.platform === "win32") return;
  const uid = me();
  if (uid !== undefined && st.uid !== uid)
    untrustedHandoff(`${what} ${path} is owned by another user (uid ${st.uid}); refusing to use it`, path);
  if ((st.mode & 0o022) !== 0)
    untrustedHandoff(
      `${what} ${path} is writable by others (mode ${(st.mode & 0o777).toString(8)}); refusing to use it`,
      path,
    );
}

/**
 * Open the handoff round of this project, creating it when there is none. The directory is made by
 * the review itself (mode 0700) with a `round.json` sealed by this user's key (the key nights are
 * sealed with); an existing directory is used only when it is a real directory of this user holding
 * such a seal for that very directory. A link, a directory another user can write into, or one a
 * repository shipped (no seal, or a seal that does not verify) is refused with one line: nothing is
 * read from it and nothing written into it.
 */
function openHandoffRound(
  project: string,
  env: Readonly<Record<string, string | undefined>>,
  stateDir: string,
): HandoffRound {
  const dir = handoffDir(project, env);
  const key = sealKey(stateDir, { create: true, project })!;
  const ownFolder = !env.SKILLOPT_SLEEP_HANDOFF_DIR;
  const parent = dirname(dir);
  if (ownFolder) {
    // `<project>/.skillopt-sleep` is ours too: a link there would move the round elsewhere.
    if (!entryExists(parent)) mkdirSync(parent, { recursive: true, mode: 0o700 });
    const st = lstatSync(parent);
    if (st.isSymbolicLink() || !st.isDirectory())
      untrustedHandoff(
        `${parent} is ${fileKind(st)}, not a real directory; refusing to use it for the handoff round`,
        parent,
      );
  } else mkdirSync(parent, { recursive: true, mode: 0o700 });
  const refuse = (why: string): never =>
    untrustedHandoff(
      `the handoff directory ${dir} was not created by this user's review (${why}); a cloned repository may have \
shipped it. Move it aside or delete it, then rerun to start a new round`,
      dir,
    );
  let created = false;
  if (!entryExists(dir)) {
    try {
      mkdirSync(dir, { mode: 0o700 });
      created = true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) refuse("it is a symbolic link");
  privateDir(dir, "handoff directory");
  if (ownFolder && realpathSync(dir) !== join(realpathSync(project), ".skillopt-sleep", "handoff"))
    refuse("it resolves outside the project's .skillopt-sleep folder");
  const roundPath = join(dir, ROUND_FILE);
  // Bound to the folder itself: its real path (the same round however the project is reached) and inode.
  const body = { format: ROUND_FORMAT, dir: realpathSync(dir), dev: st.dev, ino: st.ino };
  if (created) {
    const id = randomBytes(16).toString("hex");
    const sealed = sealObject(key, "handoff-round", dir, { ...body, round: id, created_at: new Date().toISOString() });
    if (createExclusive(roundPath, `${JSON.stringify(sealed, null, 2)}\n`, 0o600)) return { dir, id, key };
  }
  if (!entryExists(roundPath)) refuse(`it has no sealed ${ROUND_FILE}`);
  const data = readJsonFile(roundPath, "the handoff round record");
  const problem = sealProblem(key, "handoff-round", dir, data);
  if (problem) refuse(`${ROUND_FILE}: ${problem}`);
  const rec = data as Record<string, unknown>;
  if (rec.format !== ROUND_FORMAT || rec.dir !== body.dir || rec.dev !== st.dev || rec.ino !== st.ino)
    refuse(`${ROUND_FILE} was sealed for another directory`);
  if (typeof rec.round !== "string" || !/^[0-9a-f]{32}$/.test(rec.round)) refuse(`${ROUND_FILE} has no round id`);
  return { dir, id: rec.round as string, key };
}

/** Where the tasks of a handoff round are pinned (a dry-run pins apart, so they never reach a real night). */
function pinPath(round: HandoffRound, dry: boolean): string {
  return join(round.dir, dry ? "tasks.dry-run.json" : "tasks.json");
}

/** Pin a round's tasks, sealed to the round. */
export function writeHandoffPin(round: HandoffRound, dry: boolean, payload: Record<string, unknown>): string {
  const path = pinPath(round, dry);
  writeJsonAtomic(path, sealObject(round.key, "handoff-tasks", round.id, payload), { mode: 0o600 });
  return path;
}

/**
 * The pinned tasks file of a round when there is one (undefined otherwise). A pin that does not carry
 * this round's seal (placed there by anyone but this review) is refused, never replayed.
 */
export function handoffPin(round: HandoffRound, dry: boolean): string | undefined {
  const path = pinPath(round, dry);
  if (!entryExists(path)) return undefined;
  const problem = sealProblem(round.key, "handoff-tasks", round.id, readJsonFile(path, "the pinned handoff tasks"));
  if (problem)
    untrustedHandoff(
      `${path}: the pinned tasks were not written by this round (${problem}); refusing to replay them. \
Delete the handoff directory ${round.dir} to start a new round`,
      path,
    );
  return path;
}

/**
 * The answer an agent wrote for a pending call: regular files only (a link, a FIFO, a device or a
 * directory is refused with one line, never opened for a blocking read), at most 4 MiB.
 */
function readAnswer(file: string): string | undefined {
  if (!entryExists(file)) return undefined;
  try {
    return readRegularFile(file, { maxBytes: MAX_ANSWER_BYTES }).toString("utf8").trim();
  } catch (err) {
    if (err instanceof StagingError)
      throw new StagingError(`handoff answer ${err.message}; write each answer as a plain file`, {
        data: { path: file, kind: "invalid_handoff_answer" },
      });
    throw err;
  }
}

/** The handoff backend, with the round it answers from. */
export type HandoffBackend = SleepBackend & {
  flush(): PendingCallsError | undefined;
  dir: string;
  handoffRound: HandoffRound;
};

/**
 * The handoff backend (spec §2.3): no process, no network. Each prompt's answer is read from
 * `answers/<id>.md`, where the id is a tag of the prompt keyed with this user's seal key and bound
 * to the round (upstream uses sha256(prompt)[:16], which a repository that ships the tasks and
 * memory file can compute in advance); an unanswered prompt is recorded and a pending marker is
 * returned so independent calls of one phase batch together; a prompt built from a pending
 * marker stops the night (PendingCallsError) before garbage propagates.
 */
export function createHandoffBackend(_cfg: SleepConfig, opts: SleepBackendOptions): HandoffBackend {
  if (!opts.stateDir)
    throw new StagingError("the handoff backend needs the Sleep state directory (its key seals the round)", {
      data: { kind: "untrusted_handoff" },
    });
  const round = openHandoffRound(opts.project, opts.env, opts.stateDir);
  const dir = round.dir;
  const answers = join(dir, "answers");
  const pending = new Map<string, Pending>();
  const stop = () => {
    const err = flush();
    if (err) throw err;
  };
  const idOf = (prompt: string) => sealTag(round.key, "handoff-answer", round.id, prompt).slice(0, 32);
  const call = (prompt: string, maxTokens: number): string => {
    if (prompt.includes(PENDING_PREFIX)) stop();
    if (prompt.includes("was not a valid JSON array") && pending.size > 0) stop();
    const id = idOf(prompt);
    const file = join(answers, `${id}.md`);
    const answer = readAnswer(file);
    if (answer !== undefined) return answer;
    pending.set(id, { id, answer_file: file, max_tokens: maxTokens, prompt: redactText(prompt) });
    return `${PENDING_PREFIX}${id}]]`;
  };
  function flush(): PendingCallsError | undefined {
    if (pending.size === 0) return undefined;
    if (!existsSync(answers)) mkdirSync(answers, { mode: 0o700 });
    const list = [...pending.values()];
    writeJsonAtomic(
      join(dir, "pending.json"),
      { format: "skillopt_sleep.handoff.v1", answers_dir: answers, pending: list },
      { mode: 0o600 },
    );
    const md = [
      "# SkillOpt-Sleep: model calls waiting for answers",
      "",
      "Answer each prompt below in a fresh, isolated context (no memory of the others).",
      "Write only the raw answer text to the answer file named after it, then rerun the same command.",
      "",
      ...list.flatMap((p) => [
        `Answer file: ${p.answer_file}`,
        `----- BEGIN PROMPT ${p.id} -----`,
        p.prompt,
        `----- END PROMPT ${p.id} -----`,
        "",
      ]),
    ].join("\n");
    const promptsPath = join(dir, "PROMPTS.md");
    writeFileAtomic(promptsPath, md, { mode: 0o600 });
    return new PendingCallsError(list.length, promptsPath, answers);
  }
  return {
    name: "handoff",
    describe: "handoff (the calling agent answers the night's calls)",
    modelKey: "handoff::",
    remote: false,
    lastError: "",
    dir,
    handoffRound: round,
    flush,
    settle: stop,
    async attempt(task, skill, memory, _sampleId, tools) {
      const text = call(attemptPrompt(task, skill, memory, tools), 1024);
      const called = tools.filter((t) =>
        new RegExp(`\\bTOOL_CALL:\\s*${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`, "i").test(text),
      );
      return { text, toolsCalled: called, tokens: 0 };
    },
    async judge(task, response) {
      if (response.startsWith(PENDING_PREFIX)) stop();
      const prompt = judgePrompt(task.reference || task.intent, response);
      const raw = call(prompt, 200);
      if (raw.startsWith(PENDING_PREFIX)) return { hard: 0, soft: 0, rationale: "pending", tokens: 0 };
      const verdict = extractJson(raw);
      const score = verdict && typeof verdict === "object" && "score" in verdict ? Number(verdict.score) : Number.NaN;
      if (Number.isFinite(score))
        return {
          hard: score >= 0.8 ? 1 : 0,
          soft: Math.min(1, Math.max(0, score)),
          rationale: `score ${score}`,
          tokens: 0,
        };
      // An answer with no verdict is no verdict: the replay errs (never an exact-match score in its place).
      const file = join(answers, `${idOf(prompt)}.md`);
      return {
        hard: 0,
        soft: 0,
        rationale: "judge-parse-failed",
        tokens: 0,
        error: `judge verdict did not parse: ${file} holds no {"score": <0..1>} object`,
      };
    },
    async reflect(input) {
      if (input.failures.length === 0) return { edits: [], raw: "", tokens: 0 };
      const raw = call(reflectPrompt(input, false), 1024);
      if (raw.startsWith(PENDING_PREFIX)) stop();
      const arr = extractJson(raw, "array") ?? [];
      const edits = arr
        .filter(
          (x): x is Record<string, unknown> =>
            typeof x === "object" && x !== null && typeof (x as Record<string, unknown>).content === "string",
        )
        .slice(0, input.editBudget)
        .map((x) => {
          const op = String(x.op ?? "add").toLowerCase();
          return {
            target: input.target,
            op: (op === "delete" || op === "replace" ? op : "add") as EditRecord["op"],
            content: String(x.content).trim(),
            anchor: String(x.anchor ?? "").trim(),
            rationale: String(x.rationale ?? "").trim(),
          };
        })
        .filter((e) => e.content);
      return { edits, raw, tokens: 0 };
    },
    // The same rules and standing-rule requests a model gets, written to the handoff file.
    async rules(input) {
      const raw = call(rulesPrompt(input), 800);
      return raw.startsWith(PENDING_PREFIX) ? [] : parseRules(raw);
    },
    async standing(rule, quotes) {
      const raw = call(standingPrompt(rule, quotes), 200);
      return raw.startsWith(PENDING_PREFIX) ? undefined : parseStanding(raw);
    },
    async mine(input) {
      const raw = call(minerPrompt(input), 800);
      if (raw.startsWith(PENDING_PREFIX)) return [];
      return (extractJson(raw, "array") ?? [])
        .filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null)
        .map((x) => ({
          intent: String(x.intent ?? ""),
          checks: Array.isArray(x.checks)
            ? (x.checks as Array<{ op: string; arg: unknown }>).filter((c) => c && typeof c.op === "string")
            : [],
          rubric: typeof x.rubric === "string" ? x.rubric : "",
          satisfied: typeof x.satisfied === "boolean" ? x.satisfied : undefined,
        }));
    },
  };
}
