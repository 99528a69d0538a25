import type { TaskItem } from "../../engine/index.ts";
import { type DataAt, DataError } from "../../lib/index.ts";
import { asString, asStringList } from "../shared/formats.ts";
import { recordLoader } from "../shared/splits.ts";

/** A SearchQA record (materialised split or raw dataset row) → item `{id, question, context, answers}`. */
export function normalizeSearchQa(raw: Record<string, unknown>, where: string, at: DataAt = {}): TaskItem {
  const id = asString(raw.id ?? raw.key);
  if (!id)
    throw new DataError(`${where}: item has no "id" (or "key")`, {
      data: { ...at, field: "id", problem: "missing_field" },
    });
  const question = asString(raw.question);
  const item = { ...at, item: id, problem: "missing_field" };
  if (!question)
    throw new DataError(`${where}: item ${id} has no "question"`, { data: { ...item, field: "question" } });
  const context = Array.isArray(raw.context) ? raw.context.map(String).join(" [DOC] ") : asString(raw.context);
  const answers = asStringList(raw.answers ?? raw.answer);
  if (answers.length === 0)
    throw new DataError(`${where}: item ${id} has no "answers"`, { data: { ...item, field: "answers" } });
  return { ...raw, id, question, context, answers };
}

export const searchQaLoader = recordLoader("SearchQA", "searchqa", normalizeSearchQa);

/** Keep whole `[DOC]` passages while the total stays within `limit`; hard-cut a first passage that is too long. */
export function truncateContext(context: string, limit: number): string {
  if (context.length <= limit) return context;
  const docs = context.split(/(?=\[DOC\])/);
  let out = "";
  for (const doc of docs) {
    if (out.length + doc.length > limit) break;
    out += doc;
  }
  if (out) return out.trimEnd();
  return `${context.slice(0, limit)} …[context truncated]`;
}
