import { basename, dirname, extname, join, resolve } from "node:path";
import { type DataAt, DataError } from "../../lib/index.ts";
import type { TaskCheck } from "./checks.ts";
import { importRoot, readImportRef } from "./import-ref.ts";
import type { UserTask } from "./loader.ts";

/** Text files an eval may attach; their content is put into the prompt (our target has no file tools). */
const TEXT_FILES = new Set([
  ".txt",
  ".md",
  ".csv",
  ".tsv",
  ".json",
  ".jsonl",
  ".yaml",
  ".yml",
  ".xml",
  ".html",
  ".py",
  ".js",
  ".ts",
  ".sh",
  ".sql",
  ".toml",
  ".ini",
  ".log",
]);
const MAX_FILE_BYTES = 64 * 1024;

/** True when a parsed JSON document has skill-creator's evals.json shape (an object with an `evals` array). */
export function isSkillCreatorEvals(data: unknown): boolean {
  return Boolean(
    data && typeof data === "object" && !Array.isArray(data) && Array.isArray((data as Record<string, unknown>).evals),
  );
}

/**
 * Anthropic skill-creator's `evals/evals.json`: `{skill_name, evals: [{id, prompt, expected_output,
 * files?, expectations?}]}`. Each eval becomes one task graded by the judge: the rubric is its
 * expectations (every one must hold), the reference its expected_output. Attached text files are
 * put into the prompt (paths are relative to the skill root, the folder above evals/); any other
 * file, a trigger eval (`should_trigger`) or an eval with nothing to grade is refused by name.
 */
export function importSkillCreator(path: string, data: unknown): UserTask[] {
  if (!isSkillCreatorEvals(data))
    throw new DataError(`${path}: expected skill-creator's evals.json shape {"skill_name", "evals": [...]}`, {
      data: { path },
    });
  const doc = data as { skill_name?: unknown; evals: unknown[] };
  refuseMixed(path, doc.evals);
  const skillRoot = basename(dirname(path)) === "evals" ? dirname(dirname(path)) : dirname(path);
  const seen = new Set<string>();
  return doc.evals.map((raw, i) => {
    const where = `${path}: evals[${i}]`;
    const at: DataAt = { path, item: i };
    if (!raw || typeof raw !== "object" || Array.isArray(raw))
      throw new DataError(`${where}: expected an object with "prompt" and "expectations"`, {
        data: { ...at, problem: "not_object" },
      });
    const e = raw as Record<string, unknown>;
    if (typeof e.id === "number" || typeof e.id === "string") at.item = String(e.id);
    if ("should_trigger" in e)
      throw new DataError(
        `${where}: a trigger eval (should_trigger) tests the skill's description, not its answers; ` +
          `train it with the trigger benchmark (--config trigger --set env.data_path=${path})`,
        { data: { ...at, field: "should_trigger", problem: "unmappable" } },
      );
    if (typeof e.prompt !== "string" || !e.prompt.trim())
      throw new DataError(`${where}: missing "prompt" (a non-empty string)`, {
        data: { ...at, field: "prompt", problem: "missing_field" },
      });
    const id =
      e.id === undefined
        ? `eval-${i + 1}`
        : typeof e.id === "number" || typeof e.id === "string"
          ? String(e.id)
          : undefined;
    if (id === undefined)
      throw new DataError(`${where}: "id" must be a number or a string`, {
        data: { ...at, field: "id", problem: "invalid_field" },
      });
    if (seen.has(id))
      throw new DataError(`${where}: duplicate id ${JSON.stringify(id)}`, {
        data: { ...at, field: "id", problem: "duplicate_id" },
      });
    seen.add(id);
    const expectations = e.expectations ?? e.assertions;
    if (
      expectations !== undefined &&
      !(Array.isArray(expectations) && expectations.every((x) => typeof x === "string"))
    ) {
      throw new DataError(`${where}: "expectations" must be a list of statements (strings)`, {
        data: { ...at, field: "expectations", problem: "invalid_field" },
      });
    }
    const stated = (expectations as string[] | undefined)?.filter((s) => s.trim()) ?? [];
    const expected = typeof e.expected_output === "string" ? e.expected_output.trim() : "";
    if (!stated.length && !expected)
      throw new DataError(`${where}: no "expectations" and no "expected_output": nothing to grade the answer by`, {
        data: { ...at, field: "expectations", problem: "missing_field" },
      });
    const files = e.files === undefined ? [] : e.files;
    if (!Array.isArray(files) || !files.every((f) => typeof f === "string"))
      throw new DataError(`${where}: "files" must be a list of paths`, {
        data: { ...at, field: "files", problem: "invalid_field" },
      });
    const attached = (files as string[]).map((f) => attach(where, skillRoot, f, at));
    const rubric = [
      stated.length
        ? `Every one of these statements must hold for the answer to pass:\n${stated.map((s) => `- ${s}`).join("\n")}`
        : "",
      expected ? `What success looks like: ${expected}` : "",
    ]
      .filter(Boolean)
      .join("\n\n");
    const check: TaskCheck = { kind: "judge", rubric, where };
    const input = [e.prompt, ...attached].join("\n\n");
    return {
      id,
      input,
      ...(expected ? { reference: expected } : {}),
      metadata: {
        source: "skill-creator",
        ...(typeof doc.skill_name === "string" ? { skill_name: doc.skill_name } : {}),
        task_type: "skill-creator",
      },
      checks: [check],
      line: i + 1,
    } as UserTask;
  });
}

function attach(where: string, root: string, file: string, at: DataAt): string {
  if (!TEXT_FILES.has(extname(file).toLowerCase()))
    throw new DataError(
      `${where}: file ${file} is not a text file; the task's target reads text only, so this eval cannot be mapped`,
      { data: { path: resolve(root, file), item: at.item, field: "files", problem: "not_text" } },
    );
  let read: { path: string; bytes: Buffer };
  try {
    read = readImportRef(importRoot(root), root, file, where, `file ${file}`);
  } catch (err) {
    if (err instanceof DataError) Object.assign(err.data, { item: at.item, field: "files" });
    throw err;
  }
  const { path: p, bytes } = read;
  if (!TEXT_FILES.has(extname(p).toLowerCase()))
    throw new DataError(
      `${where}: file ${file} is not a text file; the task's target reads text only, so this eval cannot be mapped`,
      { data: { path: p, item: at.item, field: "files", problem: "not_text" } },
    );
  if (bytes.length > MAX_FILE_BYTES)
    throw new DataError(
      `${where}: file ${file} is ${bytes.length} bytes; at most ${MAX_FILE_BYTES} fit into a prompt`,
      {
        data: { path: p, item: at.item, field: "files", problem: "too_large" },
      },
    );
  return `File ${join(file)}:\n\`\`\`\n${bytes.toString("utf8")}\n\`\`\``;
}

/**
 * A file that holds both graded evals (`expectations`) and trigger evals (`should_trigger`) asks
 * for the body and the description trained in one run, which is not built: refused by name, with
 * the two runs that do it instead.
 */
function refuseMixed(path: string, list: readonly unknown[], entry = (i: number) => `evals[${i}]`): void {
  const has = (key: string) =>
    list.findIndex((e) => Boolean(e) && typeof e === "object" && !Array.isArray(e) && key in (e as object));
  const graded = has("expectations");
  const trigger = has("should_trigger");
  if (graded < 0 || trigger < 0) return;
  throw new DataError(
    `${path}: holds graded evals (${entry(graded)} has "expectations") and trigger evals (${entry(trigger)} has "should_trigger"); ` +
      "training the body and the trigger in one run is not built: split the file, train the body with --config tasks, " +
      "then the description with --config trigger and env.skill_init set to that run's best_skill/ (docs/packages.md)",
    { data: { path, problem: "mixed_objectives" } },
  );
}

/** One trigger task: a user query and whether the trained skill should load for it. */
interface TriggerTask {
  [field: string]: unknown;
  id: string;
  query: string;
  should_trigger: boolean;
}

/**
 * skill-creator's trigger evals: the eval set its description optimizer reads (a JSON list of
 * `{"query", "should_trigger"}`), or an evals.json whose `evals` carry `should_trigger` (with
 * `prompt` or `query`). Every entry must have a non-empty query and a boolean should_trigger;
 * a problem names the file and the entry. Ids are the entry's `id` or `trigger-<n>`.
 */
export function importTriggerEvals(path: string, data: unknown): TriggerTask[] {
  const list = Array.isArray(data)
    ? data
    : isSkillCreatorEvals(data)
      ? (data as { evals: unknown[] }).evals
      : undefined;
  if (!list)
    throw new DataError(
      `${path}: expected skill-creator's trigger eval set (a list of {"query", "should_trigger"}) or an evals.json with should_trigger evals`,
      { data: { path, problem: "invalid_shape" } },
    );
  const where = (i: number) => (Array.isArray(data) ? `${path}: [${i}]` : `${path}: evals[${i}]`);
  refuseMixed(path, list, (i) => (Array.isArray(data) ? `[${i}]` : `evals[${i}]`));
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const at: DataAt = { path, item: i };
    if (!raw || typeof raw !== "object" || Array.isArray(raw))
      throw new DataError(`${where(i)}: expected an object with "query" and "should_trigger"`, {
        data: { ...at, problem: "not_object" },
      });
    const e = raw as Record<string, unknown>;
    const query = typeof e.query === "string" ? e.query : typeof e.prompt === "string" ? e.prompt : undefined;
    if (!query?.trim())
      throw new DataError(`${where(i)}: missing "query" (a non-empty string)`, {
        data: { ...at, field: "query", problem: "missing_field" },
      });
    if (typeof e.should_trigger !== "boolean")
      throw new DataError(
        `${where(i)}: "should_trigger" must be true or false${"should_trigger" in e ? "" : " (missing: this is not a trigger eval)"}`,
        {
          data: { ...at, field: "should_trigger", problem: "should_trigger" in e ? "invalid_field" : "missing_field" },
        },
      );
    const id = typeof e.id === "number" || (typeof e.id === "string" && e.id) ? String(e.id) : `trigger-${i + 1}`;
    if (seen.has(id))
      throw new DataError(`${where(i)}: duplicate id ${JSON.stringify(id)}`, {
        data: { ...at, field: "id", problem: "duplicate_id" },
      });
    seen.add(id);
    return { id, query: query.trim(), should_trigger: e.should_trigger };
  });
}
