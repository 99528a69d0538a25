import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { BenchmarkContext, TaskItem } from "../../engine/index.ts";
import { type DataAt, DataError, homeDir } from "../../lib/index.ts";
import { EnvReader } from "../shared/env.ts";
import { environOf } from "../shared/environ.ts";
import { asString, readCsv, tryJson } from "../shared/formats.ts";
import { resolveDataPath } from "../shared/paths.ts";
import { firstFile, firstJsonArray, readRawRecords, type SplitLoader } from "../shared/splits.ts";

/** `source_files` as given: a JSON list, a newline list, a comma list, or one name. */
function parseSourceFiles(raw: unknown): string[] {
  if (Array.isArray(raw))
    return raw
      .map(String)
      .map((s) => s.trim())
      .filter(Boolean);
  const s = asString(raw).trim();
  if (!s) return [];
  if (s.startsWith("[")) {
    const parsed = tryJson(s);
    if (Array.isArray(parsed))
      return parsed
        .map(String)
        .map((x) => x.trim())
        .filter(Boolean);
  }
  if (s.includes("\n"))
    return s
      .split(/\r?\n/)
      .map((x) => x.trim())
      .filter(Boolean);
  if (s.includes(",")) {
    const parts = s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
    if (parts.every((p) => /\.\w+$/.test(p))) return parts;
  }
  return [s];
}

/** An OfficeQA row → normalised item (engine.md §6.4). */
export function normalizeOfficeQa(row: Record<string, unknown>, where: string, at: DataAt = {}): TaskItem {
  const id = asString(row.uid ?? row.id);
  if (!id)
    throw new DataError(`${where}: row has no uid/id`, { data: { ...at, field: "uid", problem: "missing_field" } });
  const question = asString(row.question);
  const truth = asString(row.ground_truth ?? row.answer);
  const item = { ...at, item: id, problem: "missing_field" };
  if (!question) throw new DataError(`${where}: item ${id} has no question`, { data: { ...item, field: "question" } });
  if (!truth)
    throw new DataError(`${where}: item ${id} has no ground_truth/answer`, {
      data: { ...item, field: "ground_truth" },
    });
  const taskType = asString(row.category ?? row.difficulty) || "officeqa";
  return {
    ...row,
    id,
    uid: id,
    question,
    ground_truth: truth,
    answers: [truth],
    task_type: taskType,
    category: taskType,
    source_files: parseSourceFiles(row.source_files),
    source_docs: parseSourceFiles(row.source_docs),
    split: asString(row.split ?? row.source_split),
  };
}

function loadDir(dir: string): TaskItem[] {
  const csv = firstFile(dir, ".csv");
  if (csv)
    return readCsv(csv).map((r, i) => normalizeOfficeQa(r, `${csv} row ${i + 2}`, { path: csv, line: i + 2, item: i }));
  return firstJsonArray(dir).map((r, i) =>
    normalizeOfficeQa(r as Record<string, unknown>, `${dir} item ${i}`, { path: dir, item: i }),
  );
}

export const officeQaLoader: SplitLoader = {
  label: "OfficeQA",
  name: "officeqa",
  loadSplitItems: loadDir,
  loadRawItems: (path) =>
    path.toLowerCase().endsWith(".csv")
      ? readCsv(path).map((r, i) => normalizeOfficeQa(r, `${path} row ${i + 2}`, { path, line: i + 2, item: i }))
      : readRawRecords(path).map((r, i) => normalizeOfficeQa(r, `${path} item ${i}`, { path, item: i })),
};

/**
 * Document roots in order: env.data_dirs (or docs_dirs), $OFFICEQA_DOCS_DIR, then upstream's
 * default locations; existing directories only, a `transformed/` subdirectory preferred.
 */
export function documentRoots(ctx: BenchmarkContext): string[] {
  const env = new EnvReader(ctx.env, "officeqa");
  const vars = environOf(ctx);
  const home = vars.HOME ?? homeDir();
  const configured = [...env.list("data_dirs"), ...env.list("docs_dirs")].map((d) => resolveDataPath(ctx, d));
  // spec §3.5: OFFICEQA_DOCS_DIR is upstream's documented override for the document root
  const fromEnv = vars.OFFICEQA_DOCS_DIR ? [vars.OFFICEQA_DOCS_DIR] : [];
  const defaults = [
    resolveDataPath(ctx, "data/officeqa_docs_official"),
    resolveDataPath(ctx, "data/officeqa_smoke_docs"),
    join(home, "officeqa-sparse", "treasury_bulletins_parsed"),
    join(home, "officeqa", "treasury_bulletins_parsed"),
  ];
  const roots: string[] = [];
  for (const d of [...configured, ...fromEnv, ...defaults]) {
    if (!existsSync(d) || !statSync(d).isDirectory()) continue;
    const t = join(d, "transformed");
    const chosen = existsSync(t) && statSync(t).isDirectory() ? t : d;
    if (!roots.includes(chosen)) roots.push(chosen);
  }
  return roots;
}

/** Every file under the roots (relative path → absolute), skipping the parsed-page `jsons/` trees. */
export function listDocuments(roots: readonly string[]): Array<{ rel: string; abs: string }> {
  const out: Array<{ rel: string; abs: string }> = [];
  roots.forEach((root, k) => {
    const walk = (dir: string, rel: string) => {
      for (const name of readdirSync(dir).sort()) {
        const abs = join(dir, name);
        const r = rel ? `${rel}/${name}` : name;
        if (statSync(abs).isDirectory()) {
          if (name !== "jsons") walk(abs, r);
        } else out.push({ rel: roots.length > 1 ? `root_${k}/${r}` : r, abs });
      }
    };
    walk(root, "");
  });
  return out;
}

/** Root variants where parsed page JSON may live: the root, its parent, and a sibling treasury_bulletins_parsed. */
export function jsonRootVariants(root: string): string[] {
  return [root, dirname(root), join(dirname(root), "treasury_bulletins_parsed")];
}
