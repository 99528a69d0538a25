import { extname } from "node:path";
import type { TaskItem } from "../../engine/index.ts";
import { DataError, maskKnownSecretsIn } from "../../lib/index.ts";
import { readText } from "../shared/formats.ts";
import { firstFile, singleDataFile, type SplitLoader } from "../shared/splits.ts";
import type { TaskCheck } from "./checks.ts";
import { importPromptfoo } from "./import-promptfoo.ts";
import { importSkillCreator, isSkillCreatorEvals } from "./import-skill-creator.ts";

/** One line of a user's tasks file. */
export interface UserTask extends TaskItem {
  id: string;
  input: string;
  reference?: unknown;
  metadata?: Record<string, unknown>;
  /** 1-based line in the tasks file, for messages. */
  line: number;
  /** An imported file's own checks (promptfoo asserts, skill-creator expectations): they replace env.evaluator. */
  checks?: TaskCheck[];
}

/** Formats env.data_path may hold; auto picks by extension and shape. */
export const DATA_FORMATS = ["auto", "tasks", "skill_creator", "promptfoo"] as const;
export type DataFormat = (typeof DATA_FORMATS)[number];

/** The format of a data file: YAML → promptfoo; JSON with an `evals` list → skill-creator; else our tasks JSONL/JSON. */
export function detectFormat(path: string): Exclude<DataFormat, "auto"> {
  const ext = extname(path).toLowerCase();
  if (ext === ".yaml" || ext === ".yml") return "promptfoo";
  if (ext === ".json") {
    const text = readText(path).trim();
    if (text.startsWith("{")) {
      try {
        if (isSkillCreatorEvals(JSON.parse(text))) return "skill_creator";
      } catch (err) {
        throw new DataError(`${path}: invalid JSON (${(err as Error).message})`, {
          data: { path, input: "env.data_path", problem: "invalid_json" },
        });
      }
    }
  }
  return "tasks";
}

/** Read env.data_path in the given format (unchanged files of other tools are imported here). */
export function readTaskSource(path: string, format: DataFormat): UserTask[] {
  // A secret this process holds (a provider key, a secret-named variable) never reaches a prompt
  // or a run file through a task, whatever file it came from.
  return maskKnownSecretsIn(readTasksAs(path, format));
}

function readTasksAs(path: string, format: DataFormat): UserTask[] {
  const f = format === "auto" ? detectFormat(path) : format;
  if (f === "promptfoo") return importPromptfoo(path);
  if (f === "skill_creator") {
    const text = readText(path);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new DataError(`${path}: invalid JSON (${(err as Error).message})`, {
        data: { path, input: "env.data_path", problem: "invalid_json" },
      });
    }
    return importSkillCreator(path, data);
  }
  return parseTasksFile(path);
}

const MAX_LISTED = 5;

/**
 * Parse a tasks file: one JSON object a line with `input` (string), optional `id`, `reference`,
 * `metadata`. Every problem is collected with its line number; any problem → DataError, nothing runs.
 * Items without an id get `line-<n>`. A `.json` file holding an array of such objects also works.
 */
export function parseTasksFile(path: string): UserTask[] {
  const text = readText(path);
  const problems: string[] = [];
  // The first problem's facts, for `--json` (the message names the first problem too).
  let first: { line?: number; item?: string | number; field?: string; problem: string } | undefined;
  let isArray = false;
  const fail = (line: number, text: string, facts: { item?: string | number; field?: string; problem: string }) => {
    problems.push(`line ${line}: ${text}`);
    first ??= isArray ? { ...facts, item: facts.item ?? line - 1 } : { line, ...facts };
  };
  const tasks: UserTask[] = [];
  const seen = new Map<string, number>();
  const records: Array<{ line: number; value: unknown; error?: string }> = [];
  if (path.toLowerCase().endsWith(".json") && text.trim().startsWith("[")) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new DataError(`${path}: invalid JSON (${(err as Error).message})`, {
        data: { path, problem: "invalid_json" },
      });
    }
    if (!Array.isArray(data))
      throw new DataError(`${path}: expected a JSON array of tasks`, { data: { path, problem: "not_an_array" } });
    isArray = true;
    data.forEach((value, i) => {
      records.push({ line: i + 1, value });
    });
  } else {
    text.split(/\r?\n/).forEach((raw, i) => {
      if (!raw.trim()) return;
      try {
        records.push({ line: i + 1, value: JSON.parse(raw) });
      } catch (err) {
        records.push({ line: i + 1, value: undefined, error: `invalid JSON (${(err as Error).message})` });
      }
    });
  }
  for (const { line, value, error } of records) {
    if (error) {
      fail(line, error, { problem: "invalid_json" });
      continue;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      fail(line, 'expected a JSON object like {"id": "…", "input": "…", "reference": "…"}', { problem: "not_object" });
      continue;
    }
    const r = value as Record<string, unknown>;
    const item = typeof r.id === "string" || typeof r.id === "number" ? String(r.id) : undefined;
    if (typeof r.input !== "string" || !r.input.trim()) {
      fail(line, 'missing "input" (a non-empty string)', { item, field: "input", problem: "missing_field" });
      continue;
    }
    if (r.id !== undefined && typeof r.id !== "string" && typeof r.id !== "number") {
      fail(line, '"id" must be a string or a number', { field: "id", problem: "invalid_field" });
      continue;
    }
    if (
      r.metadata !== undefined &&
      (typeof r.metadata !== "object" || r.metadata === null || Array.isArray(r.metadata))
    ) {
      fail(line, '"metadata" must be an object', { item, field: "metadata", problem: "invalid_field" });
      continue;
    }
    const id = r.id === undefined ? `line-${line}` : String(r.id);
    const prev = seen.get(id);
    if (prev !== undefined) {
      fail(line, `duplicate id "${id}" (first on line ${prev})`, { item: id, field: "id", problem: "duplicate_id" });
      continue;
    }
    seen.set(id, line);
    tasks.push({ ...r, id, input: r.input, line } as UserTask);
  }
  if (problems.length > 0) {
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : "";
    throw new DataError(`${path}:${problems[0]!.replace(/^line (\d+): /, "$1: ")}`, {
      hint: problems.length > 1 ? `all problems: ${problems.slice(0, MAX_LISTED).join("; ")}${more}` : undefined,
      data: { path, ...first, problems },
    });
  }
  if (tasks.length === 0)
    throw new DataError(`${path}: no tasks (expected one JSON object a line)`, { data: { path, problem: "empty" } });
  return tasks;
}

/** The tasks loader for a data format (split directories hold our own tasks files). */
export function tasksLoaderFor(format: DataFormat): SplitLoader {
  return {
    label: "tasks",
    name: "tasks",
    loadSplitItems: (dir) => {
      const file = firstFile(dir, ".jsonl") ?? firstFile(dir, ".json");
      if (!file)
        throw new DataError(`${dir}: no .jsonl or .json tasks file in this split directory`, {
          data: { path: dir, problem: "no_data_file" },
        });
      return maskKnownSecretsIn(parseTasksFile(file));
    },
    loadRawItems: (path) => readTaskSource(singleDataFile(path), format),
  };
}
