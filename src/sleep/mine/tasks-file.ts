import { resolve } from "node:path";
import * as v from "valibot";
import { DataError, readInputText, redactSecrets, writeJsonAtomic } from "../../lib/index.ts";
import { validateChecks } from "../judges.ts";
import { type TaskRecord, TaskRecordSchema } from "../types.ts";
import { assignSplits } from "./splits.ts";

/** Format tag of the reviewed-task file (spec §4.9; kept for compatibility). */
export const TASKS_FORMAT = "skillopt_sleep.tasks.v1";

/** Metadata of a tasks file: every top-level key but `tasks`, plus `tasks_file`. */
type TasksMeta = Record<string, unknown> & {
  format: string;
  tasks_file: string;
  reviewed?: unknown;
  target_skill_path?: unknown;
};

/** A loaded tasks file. */
interface LoadedTasks {
  tasks: TaskRecord[];
  meta: TasksMeta;
  warnings: string[];
}

/** Read and validate a tasks file (object with `tasks`, or a bare array). */
export function loadTasksFile(path: string, opts: { holdoutFraction: number; seed: number }): LoadedTasks {
  const abs = resolve(path);
  let data: unknown;
  try {
    data = JSON.parse(readInputText(abs, "tasks file"));
  } catch (err) {
    if (err instanceof DataError) throw err;
    throw new DataError(`${abs}: cannot read tasks file: ${err instanceof Error ? err.message : String(err)}`, {
      data: { path: abs, problem: "unreadable" },
    });
  }
  let rawTasks: unknown;
  let meta: TasksMeta;
  if (Array.isArray(data)) {
    rawTasks = data;
    meta = { format: TASKS_FORMAT, tasks_file: abs };
  } else if (data && typeof data === "object") {
    const { tasks, ...rest } = data as Record<string, unknown>;
    rawTasks = tasks;
    meta = { format: String(rest.format ?? TASKS_FORMAT), ...rest, tasks_file: abs };
    if (rest.format !== undefined && rest.format !== TASKS_FORMAT)
      throw new DataError(`${abs}: format is ${JSON.stringify(rest.format)}, expected ${TASKS_FORMAT}`, {
        data: { path: abs, problem: "wrong_format" },
      });
  } else
    throw new DataError(`${abs}: expected an object with "tasks" or an array of tasks`, {
      data: { path: abs, problem: "unknown_shape" },
    });
  if (!Array.isArray(rawTasks))
    throw new DataError(`${abs}: "tasks" must be a list`, {
      data: { path: abs, problem: "unknown_shape" },
    });
  const errors: string[] = [];
  const warnings: string[] = [];
  const tasks: TaskRecord[] = [];
  rawTasks.forEach((raw, i) => {
    const parsed = v.safeParse(TaskRecordSchema, raw);
    if (!parsed.success) {
      const issue = parsed.issues[0]!;
      errors.push(`tasks[${i}].${v.getDotPath(issue) ?? ""}: ${issue.message}`);
      return;
    }
    const t = parsed.output;
    if (t.reference_kind === "rule") {
      const check = validateChecks(t.judge);
      for (const e of check.errors) errors.push(`task ${t.id}: ${e}`);
      for (const w of check.warnings) warnings.push(`task ${t.id}: ${w}`);
    }
    tasks.push(t);
  });
  if (errors.length)
    throw new DataError(`${abs}: unusable tasks file:\n  ${errors.join("\n  ")}`, { data: { errors } });
  const hasGate = tasks.some((t) => t.split === "val" || t.split === "test");
  const out = tasks.length >= 2 && !hasGate ? assignSplits(tasks, opts.holdoutFraction, 0, opts.seed) : tasks;
  return { tasks: out, meta, warnings };
}

/** Payload of a tasks file (spec §4.9), redacted. */
export function tasksPayload(
  tasks: readonly TaskRecord[],
  meta: { project: string; transcript_source: string; n_sessions: number; target_skill_path: string },
): Record<string, unknown> {
  return redactSecrets({ format: TASKS_FORMAT, ...meta, reviewed: false, tasks });
}

/** Write a tasks payload (indent 2, trailing newline, parents created). */
export function writeTasksFile(path: string, payload: Record<string, unknown>): string {
  const abs = resolve(path);
  writeJsonAtomic(abs, payload);
  return abs;
}
