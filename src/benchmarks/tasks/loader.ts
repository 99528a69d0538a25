import { statSync } from "node:fs";
import type { TaskItem } from "../../engine/ports.ts";
import { DataError } from "../../lib/index.ts";
import { readText } from "../shared/formats.ts";
import { firstFile, singleDataFile, type SplitLoader } from "../shared/splits.ts";

/** One line of a user's tasks file. */
export interface UserTask extends TaskItem {
  id: string;
  input: string;
  reference?: unknown;
  metadata?: Record<string, unknown>;
  /** 1-based line in the tasks file, for messages. */
  line: number;
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
  const tasks: UserTask[] = [];
  const seen = new Map<string, number>();
  const records: Array<{ line: number; value: unknown; error?: string }> = [];
  if (path.toLowerCase().endsWith(".json") && text.trim().startsWith("[")) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new DataError(`${path}: invalid JSON (${(err as Error).message})`);
    }
    if (!Array.isArray(data)) throw new DataError(`${path}: expected a JSON array of tasks`);
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
      problems.push(`line ${line}: ${error}`);
      continue;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      problems.push(`line ${line}: expected a JSON object like {"id": "…", "input": "…", "reference": "…"}`);
      continue;
    }
    const r = value as Record<string, unknown>;
    if (typeof r.input !== "string" || !r.input.trim()) {
      problems.push(`line ${line}: missing "input" (a non-empty string)`);
      continue;
    }
    if (r.id !== undefined && typeof r.id !== "string" && typeof r.id !== "number") {
      problems.push(`line ${line}: "id" must be a string or a number`);
      continue;
    }
    if (r.metadata !== undefined && (typeof r.metadata !== "object" || r.metadata === null || Array.isArray(r.metadata))) {
      problems.push(`line ${line}: "metadata" must be an object`);
      continue;
    }
    const id = r.id === undefined ? `line-${line}` : String(r.id);
    const prev = seen.get(id);
    if (prev !== undefined) {
      problems.push(`line ${line}: duplicate id "${id}" (first on line ${prev})`);
      continue;
    }
    seen.set(id, line);
    tasks.push({ ...r, id, input: r.input, line } as UserTask);
  }
  if (problems.length > 0) {
    const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : "";
    throw new DataError(`${path}:${problems[0]!.replace(/^line (\d+): /, "$1: ")}`, {
      hint: problems.length > 1 ? `all problems: ${problems.slice(0, MAX_LISTED).join("; ")}${more}` : undefined,
      data: { problems },
    });
  }
  if (tasks.length === 0) throw new DataError(`${path}: no tasks (expected one JSON object a line)`);
  return tasks;
}

export const tasksLoader: SplitLoader = {
  label: "tasks",
  name: "tasks",
  loadSplitItems: (dir) => {
    const file = firstFile(dir, ".jsonl") ?? firstFile(dir, ".json");
    if (!file) throw new DataError(`${dir}: no .jsonl or .json tasks file in this split directory`);
    return parseTasksFile(file);
  },
  loadRawItems: (path) => parseTasksFile(statSync(path).isDirectory() ? singleDataFile(path) : path),
};
