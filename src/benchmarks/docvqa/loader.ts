import { existsSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import type { TaskItem } from "../../engine/index.ts";
import { type DataAt, DataError } from "../../lib/index.ts";
import { asString, parseAnswerList, readCsv } from "../shared/formats.ts";
import { systemFile } from "../shared/paths.ts";
import { firstFile, readRawRecords, type SplitLoader } from "../shared/splits.ts";

/** Candidate bases for a relative image path: the working directory, the split dir and its parents. */
function resolveImage(p: string, dir: string): string {
  if (!p || isAbsolute(p)) return p;
  const bases = [process.cwd(), dir, dirname(dir), dirname(dirname(dir)), dirname(dirname(dirname(dir)))];
  for (const b of bases) {
    const candidate = resolve(b, p);
    if (existsSync(candidate)) return candidate;
  }
  return resolve(process.cwd(), p);
}

/** A DocVQA CSV row (or JSON record) → normalised item (engine.md §6.2). */
export function normalizeDocVqa(row: Record<string, unknown>, dir: string, where: string, at: DataAt = {}): TaskItem {
  const id = asString(row.questionId ?? row.id);
  if (!id)
    throw new DataError(`${where}: row has no questionId/id`, {
      data: { ...at, field: "questionId", problem: "missing_field" },
    });
  let question = asString(row.question);
  let embedded = "";
  const m = /\s*document_path:\s*(\S.*)$/.exec(question);
  if (m) {
    embedded = m[1]!.trim();
    question = question.slice(0, m.index).trim();
  }
  const rawAnswer = row.answers ?? row.answer ?? row.ground_truth;
  const answers = Array.isArray(rawAnswer) ? rawAnswer.map(String) : parseAnswerList(asString(rawAnswer));
  const item = { ...at, item: id, problem: "missing_field" };
  if (!question) throw new DataError(`${where}: item ${id} has no question`, { data: { ...item, field: "question" } });
  if (answers.length === 0)
    throw new DataError(`${where}: item ${id} has no answer`, { data: { ...item, field: "answers" } });
  const image = resolveImage(asString(row.image_path) || embedded, dir);
  const system = systemFile(image);
  if (system)
    throw new DataError(
      `${where}: item ${id}: image_path ${image} is a system file (${system}), not a document image`,
      {
        data: { ...at, item: id, field: "image_path", problem: "not_regular_file" },
      },
    );
  const taskType = asString(row.topic ?? row.category) || "docvqa";
  return {
    ...row,
    id,
    question,
    answer: answers[0]!,
    answers,
    task_type: taskType,
    subtask: taskType,
    image_paths: image ? [image] : [],
    image_path: image,
    questionId: id,
    docId: asString(row.docId),
  };
}

function loadDir(dir: string): TaskItem[] {
  const csv = firstFile(dir, ".csv");
  if (csv)
    return readCsv(csv).map((r, i) =>
      normalizeDocVqa(r, dir, `${csv} row ${i + 2}`, { path: csv, line: i + 2, item: i }),
    );
  const json = firstFile(dir, ".json");
  if (json)
    return readRawRecords(json).map((r, i) => normalizeDocVqa(r, dir, `${json} item ${i}`, { path: json, item: i }));
  throw new DataError(`${dir}: no *.csv (or *.json) file in this DocVQA split directory`, {
    data: { path: dir, problem: "no_data_file" },
  });
}

export const docVqaLoader: SplitLoader = {
  label: "DocVQA",
  name: "docvqa",
  loadSplitItems: loadDir,
  loadRawItems: (path) => {
    if (path.toLowerCase().endsWith(".csv"))
      return readCsv(path).map((r, i) =>
        normalizeDocVqa(r, dirname(path), `${path} row ${i + 2}`, { path, line: i + 2, item: i }),
      );
    return readRawRecords(path).map((r, i) =>
      normalizeDocVqa(r, dirname(path), `${path} item ${i}`, { path, item: i }),
    );
  },
};

const MIME: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".tif": "image/tiff",
  ".tiff": "image/tiff",
};

/** MIME type from the file extension (png by default). */
export function imageMime(path: string): string {
  const ext = /\.[^./]+$/.exec(path.toLowerCase())?.[0] ?? "";
  return MIME[ext] ?? "image/png";
}
