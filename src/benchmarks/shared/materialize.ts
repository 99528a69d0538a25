import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { TaskItem } from "../../engine/index.ts";
import { type DataAt, DataError, writeFileAtomic, writeJsonAtomic } from "../../lib/index.ts";
import { normalizeDocVqa } from "../docvqa/loader.ts";
import { readMonthlyItems } from "../livemathematicianbench/loader.ts";
import { normalizeOfficeQa } from "../officeqa/loader.ts";
import { normalizeSearchQa } from "../searchqa/loader.ts";
import { normalizeSpreadsheet } from "../spreadsheetbench/loader.ts";
import { asString, readCsv, readJson, readJsonl, toCsv } from "./formats.ts";
import { SPLIT_NAMES, type SplitName } from "./splits.ts";

/** Per benchmark: how a raw row is keyed and normalised, and how a split is written. */
interface Materializer {
  defaultOut: string;
  /** The manifest id a raw row answers to. */
  key(row: Record<string, unknown>): string;
  /** The item written for a manifest entry and its raw row (`at` names the raw file and the id in errors). */
  build(entry: Record<string, unknown>, row: Record<string, unknown>, at: DataAt): TaskItem;
  format: "json" | "csv";
  csvColumns?: string[];
  /** Rows of a raw path, when the benchmark's source is not one flat file. */
  readRaw?(path: string): Record<string, unknown>[];
}

const DOCVQA_COLUMNS = [
  "questionId",
  "question",
  "answer",
  "image_path",
  "topic",
  "docId",
  "ucsf_document_id",
  "ucsf_document_page_no",
  "source_split",
];
const OFFICEQA_COLUMNS = ["uid", "question", "answer", "category", "source_files", "source_docs", "split"];

export const MATERIALIZERS: Record<string, Materializer> = {
  searchqa: {
    defaultOut: "data/searchqa_split",
    key: (r) => asString(r.key ?? r.id),
    build: (_e, r, at) => {
      const item = normalizeSearchQa(r, "raw row", at);
      return { id: item.id, question: item.question, context: item.context, answers: item.answers };
    },
    format: "json",
  },
  livemathematicianbench: {
    defaultOut: "data/livemathematicianbench_split",
    key: (r) => asString(r.id),
    build: (e, r) => ({ ...r, id: asString(r.id), paper_link: asString(r.paper_link) || asString(e.paper_link) }),
    format: "json",
    readRaw: (p) => readMonthlyItems(p),
  },
  docvqa: {
    defaultOut: "data/docvqa/splits",
    key: (r) => asString(r.questionId ?? r.id),
    build: (e, r, at) => {
      const item = normalizeDocVqa(
        { ...r, image_path: asString(e.image_path) || asString(r.image_path) },
        ".",
        "raw row",
        at,
      );
      return {
        id: item.id,
        questionId: item.id,
        question: item.question,
        answer: JSON.stringify(item.answers),
        image_path: asString(e.image_path) || asString(r.image_path),
        topic: asString(e.topic ?? r.topic ?? r.question_types),
        docId: asString(e.docId ?? r.docId),
        ucsf_document_id: asString(e.ucsf_document_id ?? r.ucsf_document_id),
        ucsf_document_page_no: asString(e.ucsf_document_page_no ?? r.ucsf_document_page_no),
        source_split: asString(e.source_split) || "validation",
      };
    },
    format: "csv",
    csvColumns: DOCVQA_COLUMNS,
  },
  officeqa: {
    defaultOut: "data/officeqa_split",
    key: (r) => asString(r.uid ?? r.id),
    build: (e, r, at) => {
      const item = normalizeOfficeQa(
        {
          ...r,
          category: r.category ?? e.category,
          source_files: r.source_files ?? e.source_files,
          source_docs: r.source_docs ?? e.source_docs,
        },
        "raw row",
        at,
      );
      return {
        id: item.id,
        uid: item.id,
        question: item.question,
        answer: item.ground_truth,
        category: item.category,
        source_files: asString(r.source_files ?? e.source_files),
        source_docs: asString(r.source_docs ?? e.source_docs),
        split: asString(e.source_split),
      };
    },
    format: "csv",
    csvColumns: OFFICEQA_COLUMNS,
  },
  spreadsheetbench: {
    defaultOut: "data/spreadsheetbench_split",
    key: (r) => asString(r.id),
    build: (e, r, at) => normalizeSpreadsheet({ ...e, ...r }, "raw row", at),
    format: "json",
  },
};

/** Raw rows of a JSON array / `{"data": […]}` / JSONL / CSV file, or of every such file in a directory. */
function readRawRows(path: string): Record<string, unknown>[] {
  if (!existsSync(path))
    throw new DataError(`--from ${path} does not exist`, { data: { path, input: "--from", problem: "not_found" } });
  if (statSync(path).isDirectory()) {
    const files = readdirSync(path)
      .filter((f) => /\.(jsonl?|csv)$/i.test(f))
      .sort();
    if (files.length === 0)
      throw new DataError(`--from ${path}: no .json, .jsonl or .csv files`, {
        data: { path, input: "--from", problem: "no_data_file" },
      });
    return files.flatMap((f) => readRawRows(join(path, f)));
  }
  const lower = path.toLowerCase();
  if (lower.endsWith(".csv")) return readCsv(path);
  if (lower.endsWith(".jsonl")) return readJsonl(path).map(({ value }) => value as Record<string, unknown>);
  const data = readJson(path);
  if (Array.isArray(data)) return data as Record<string, unknown>[];
  if (data && typeof data === "object" && Array.isArray((data as { data?: unknown }).data))
    return (data as { data: Record<string, unknown>[] }).data;
  throw new DataError(`${path}: expected a JSON array, {"data": [...]}, JSON lines or CSV`, {
    data: { path, input: "--from", problem: "unknown_shape" },
  });
}

interface Manifest {
  meta: Record<string, unknown>;
  splits: Record<SplitName, Record<string, unknown>[]>;
}

/** Read an upstream id manifest: `split_manifest.json` and `{train,val,test}/items.json`. */
export function readManifest(dir: string): Manifest {
  const metaPath = join(dir, "split_manifest.json");
  if (!existsSync(metaPath))
    throw new DataError(
      `--manifest ${dir}: no split_manifest.json (expected an upstream manifest directory such as data/searchqa_id_split)`,
      { data: { path: metaPath, input: "--manifest", problem: "not_found" } },
    );
  const meta = readJson(metaPath) as Record<string, unknown>;
  const splits = {} as Manifest["splits"];
  for (const s of SPLIT_NAMES) {
    const p = join(dir, s, "items.json");
    if (!existsSync(p))
      throw new DataError(`--manifest ${dir}: missing ${s}/items.json`, {
        data: { path: p, input: "--manifest", problem: "not_found" },
      });
    const items = readJson(p);
    if (!Array.isArray(items))
      throw new DataError(`${p}: expected a JSON array`, {
        data: { path: p, input: "--manifest", problem: "not_an_array" },
      });
    splits[s] = items as Record<string, unknown>[];
  }
  return { meta, splits };
}

interface MaterializeResult {
  out: string;
  counts: Record<SplitName, number>;
  missing: Record<SplitName, string[]>;
  rawRows: number;
}

/**
 * Build a benchmark's split directory from a manifest and raw rows: match each manifest id to
 * its row, refuse duplicate ids across splits and duplicate source rows, and report missing ids
 * (an error unless `allowMissing`). Writes atomically; nothing is written when it fails.
 */
export function materialize(
  benchmark: string,
  manifest: Manifest,
  rows: Record<string, unknown>[],
  opts: { out: string; allowMissing: boolean; source: string },
): MaterializeResult {
  const m = MATERIALIZERS[benchmark];
  if (!m)
    throw new DataError(
      `cannot materialize "${benchmark}" (known: ${Object.keys(MATERIALIZERS).join(", ")}; alfworld's manifest is used directly as its split_dir)`,
      { data: { input: "benchmark", problem: "unknown_benchmark" } },
    );
  const byKey = new Map<string, Record<string, unknown>>();
  for (const row of rows) {
    const k = m.key(row);
    if (!k) continue;
    if (byKey.has(k)) {
      const data = { path: opts.source, item: k, field: "id", problem: "duplicate_id" };
      throw new DataError(`${opts.source}: duplicate source row for id "${k}"`, { data });
    }
    byKey.set(k, row);
  }
  const seen = new Map<string, SplitName>();
  const missing = { train: [], val: [], test: [] } as Record<SplitName, string[]>;
  const built = { train: [], val: [], test: [] } as Record<SplitName, TaskItem[]>;
  for (const s of SPLIT_NAMES) {
    for (const entry of manifest.splits[s]) {
      const id = asString(entry.id);
      const prev = seen.get(id);
      if (prev) {
        const data = { input: "--manifest", split: s, item: id, field: "id", problem: "duplicate_id" };
        throw new DataError(`manifest: id "${id}" is in both ${prev} and ${s}`, { data });
      }
      seen.set(id, s);
      const row = byKey.get(id);
      if (!row) {
        missing[s].push(id);
        continue;
      }
      built[s].push(m.build(entry, row, { path: opts.source, item: id }));
    }
  }
  const nMissing = SPLIT_NAMES.reduce((a, s) => a + missing[s].length, 0);
  if (nMissing > 0 && !opts.allowMissing) {
    const first = SPLIT_NAMES.flatMap((s) => missing[s]).slice(0, 10);
    throw new DataError(
      `${nMissing} manifest id(s) not found in ${opts.source}: ${first.join(", ")}${nMissing > 10 ? ", …" : ""}`,
      {
        hint: "check that --from is the benchmark's raw dataset (see docs/benchmarks.md); --allow-missing writes the rest",
        data: { missing },
      },
    );
  }
  for (const s of SPLIT_NAMES) {
    if (m.format === "csv") writeFileAtomic(join(opts.out, s, "items.csv"), toCsv(built[s], m.csvColumns ?? []));
    else writeJsonAtomic(join(opts.out, s, "items.json"), built[s]);
  }
  const counts = { train: built.train.length, val: built.val.length, test: built.test.length };
  writeJsonAtomic(join(opts.out, "split_manifest.json"), {
    ...manifest.meta,
    materialized_from: opts.source,
    split_mode: "split_dir",
    counts,
    missing_ids: nMissing > 0 ? missing : undefined,
  });
  return { out: opts.out, counts, missing, rawRows: rows.length };
}

/** Rows for a benchmark from a `--from` path (LiveMath reads its monthly files). */
export function rowsFromPath(benchmark: string, path: string): Record<string, unknown>[] {
  const m = MATERIALIZERS[benchmark];
  return m?.readRaw ? m.readRaw(path) : readRawRows(path);
}

/** Where the benchmark's loader expects the split directory by default. */
export function defaultOutDir(benchmark: string): string | undefined {
  return MATERIALIZERS[benchmark]?.defaultOut;
}
