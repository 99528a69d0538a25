import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import type { BenchmarkContext, Splits, TaskItem } from "../../engine/index.ts";
import { ConfigError, type DataAt, DataError, log, writeJsonAtomic } from "../../lib/index.ts";
import { EnvReader } from "./env.ts";
import { readJson, readJsonl } from "./formats.ts";
import { resolveDataPath } from "./paths.ts";
import { PyRandom } from "./pyrandom.ts";

export const SPLIT_NAMES = ["train", "val", "test"] as const;
export type SplitName = (typeof SPLIT_NAMES)[number];

/** Field set on every loaded item naming its split (used to give gold feedback to training rollouts only). */
const SPLIT_FIELD = "_split";

/** How one benchmark reads its data. */
export interface SplitLoader {
  /** Display name for messages: `[SearchQA] train=…`. */
  label: string;
  /** Registry name, used in the generated split directory name and in hints. */
  name: string;
  /** split_dir mode: one split directory → normalised items. */
  loadSplitItems(dir: string): TaskItem[];
  /** ratio mode: the raw data path (file or directory) → normalised items. */
  loadRawItems?(path: string): TaskItem[];
}

/**
 * A loader of JSON records, one item each: a split directory's first `*.json` array, or a raw data
 * file's records; `normalize` turns one record into an item (`where` names it in errors).
 */
export function recordLoader(
  label: string,
  name: string,
  normalize: (record: Record<string, unknown>, where: string, at: DataAt) => TaskItem,
): SplitLoader {
  return {
    label,
    name,
    loadSplitItems: (dir) =>
      firstJsonArray(dir).map((r, i) =>
        normalize(r as Record<string, unknown>, `${dir} item ${i}`, { path: dir, item: i }),
      ),
    loadRawItems: (path) => readRawRecords(path).map((r, i) => normalize(r, `${path} item ${i}`, { path, item: i })),
  };
}

/** Default `load_split_items`: the first `*.json` in sorted order, which must hold a JSON array. */
export function firstJsonArray(dir: string): unknown[] {
  const file = firstFile(dir, ".json");
  if (!file)
    throw new DataError(`${dir}: no *.json file in this split directory`, {
      data: { path: dir, problem: "no_json_file" },
    });
  const data = readJson(file);
  if (!Array.isArray(data))
    throw new DataError(`${file}: expected a JSON array of items`, { data: { path: file, problem: "not_an_array" } });
  return data;
}

/** First file with the extension in sorted order, or undefined. */
export function firstFile(dir: string, ext: string): string | undefined {
  const name = readdirSync(dir)
    .filter((f) => f.toLowerCase().endsWith(ext) && statSync(join(dir, f)).isFile())
    .sort()[0];
  return name === undefined ? undefined : join(dir, name);
}

/** Raw records of a data file: a JSON array, `{"data": […]}`, a dict of items (key → id), or JSONL. */
export function readRawRecords(path: string): Record<string, unknown>[] {
  const file = singleDataFile(path);
  if (file.toLowerCase().endsWith(".jsonl")) {
    return readJsonl(file).map(({ line, value }) => {
      if (!value || typeof value !== "object" || Array.isArray(value)) {
        throw new DataError(`${file}:${line}: expected a JSON object`, {
          data: { path: file, line, problem: "not_an_object" },
        });
      }
      return value as Record<string, unknown>;
    });
  }
  const data = readJson(file);
  const list = Array.isArray(data)
    ? data
    : data && typeof data === "object" && Array.isArray((data as { data?: unknown }).data)
      ? (data as { data: unknown[] }).data
      : data && typeof data === "object"
        ? Object.entries(data as Record<string, unknown>).map(([k, v]) =>
            v && typeof v === "object" && !Array.isArray(v) ? { id: k, ...(v as object) } : v,
          )
        : undefined;
  if (!list)
    throw new DataError(`${file}: expected a JSON array, {"data": [...]}, or an object of items`, {
      data: { path: file, problem: "unknown_shape" },
    });
  return list.map((r, i) => {
    if (!r || typeof r !== "object" || Array.isArray(r))
      throw new DataError(`${file}: item ${i} is not a JSON object`, {
        data: { path: file, problem: "not_an_object" },
      });
    return r as Record<string, unknown>;
  });
}

/** `data_path` as one file: the file itself, or the single JSON/JSONL file of a directory. */
export function singleDataFile(path: string): string {
  if (!existsSync(path))
    throw new DataError(`env.data_path ${path} does not exist`, {
      data: { path, input: "env.data_path", problem: "not_found" },
    });
  if (!statSync(path).isDirectory()) return path;
  if (SPLIT_NAMES.every((s) => existsSync(join(path, s)))) {
    throw new ConfigError(
      `env.data_path ${path} is a split directory (it has train/ val/ test/); set env.split_mode: split_dir and env.split_dir instead`,
      { key: "env.split_mode" },
    );
  }
  const files = readdirSync(path).filter((f) => /\.jsonl?$/i.test(f));
  if (files.length !== 1) {
    throw new DataError(`env.data_path ${path}: expected exactly one .json or .jsonl file, found ${files.length}`, {
      data: { path, input: "env.data_path", problem: "not_one_data_file" },
    });
  }
  return join(path, files[0]!);
}

/** Counts by largest-remainder apportionment (ties → larger weight, then earlier split). */
export function apportion(total: number, weights: readonly number[]): number[] {
  const sum = weights.reduce((a, b) => a + b, 0);
  const exact = weights.map((w) => (total * w) / sum);
  const counts = exact.map(Math.floor);
  let left = total - counts.reduce((a, b) => a + b, 0);
  const order = weights
    .map((w, i) => ({ i, w, frac: exact[i]! - counts[i]! }))
    .sort((a, b) => b.frac - a.frac || b.w - a.w || a.i - b.i);
  for (const { i } of order) {
    if (left <= 0) break;
    counts[i]! += 1;
    left--;
  }
  return counts;
}

/** Parse `"2:1:7"` into three positive integers. */
function parseRatio(ratio: string): [number, number, number] {
  const parts = ratio.split(":").map((p) => Number(p.trim()));
  if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p) || p <= 0)) {
    throw new ConfigError(`env.split_ratio: expected three positive integers like "2:1:7", got "${ratio}"`, {
      key: "env.split_ratio",
    });
  }
  return parts as [number, number, number];
}

/** Deterministic ratio split: CPython `Random(seed).shuffle`, then largest-remainder counts. */
export function ratioSplit(items: readonly TaskItem[], ratio: string, seed: number): Splits {
  const shuffled = new PyRandom(seed).shuffleInPlace([...items]);
  const [nTrain, nVal] = apportion(shuffled.length, parseRatio(ratio));
  return {
    train: shuffled.slice(0, nTrain),
    val: shuffled.slice(nTrain!, nTrain! + nVal!),
    test: shuffled.slice(nTrain! + nVal!),
  };
}

/** Load the three splits the config asks for (engine.md §1.12, §3.2). */
export function loadConfiguredSplits(ctx: BenchmarkContext, loader: SplitLoader): Splits {
  const env = new EnvReader(ctx.env, loader.name);
  const mode = env.oneOf("split_mode", ["ratio", "split_dir"], "ratio");
  const splits = mode === "split_dir" ? fromSplitDir(ctx, env, loader) : fromRatio(ctx, env, loader);
  const limit = env.int("limit", 0);
  const out: Splits = { train: [], val: [], test: [] };
  for (const name of SPLIT_NAMES) {
    const items = limit > 0 ? splits[name].slice(0, limit) : splits[name];
    out[name] = items.map((it) => ({ ...it, [SPLIT_FIELD]: name }));
  }
  assertUniqueIds(out, loader.label);
  log.info(
    `[${loader.label}] train=${out.train.length} val=${out.val.length} test=${out.test.length} (${mode === "split_dir" ? "from dir" : "ratio split"})`,
  );
  return out;
}

function fromSplitDir(ctx: BenchmarkContext, env: EnvReader, loader: SplitLoader): Splits {
  const raw = env.str("split_dir", "");
  if (!raw)
    throw new ConfigError(`env.split_dir is empty but env.split_mode is split_dir (${loader.name})`, {
      key: "env.split_dir",
    });
  const root = resolveDataPath(ctx, raw);
  const hint = `materialize it with \`skillopt data materialize ${loader.name} --manifest <manifest dir> --from <raw data>\` (see docs/benchmarks.md)`;
  if (!existsSync(root))
    throw new DataError(`env.split_dir ${root} does not exist`, {
      hint,
      data: { path: root, input: "env.split_dir", problem: "not_found" },
    });
  const splits: Splits = { train: [], val: [], test: [] };
  for (const name of SPLIT_NAMES) {
    const dir = join(root, name);
    if (!existsSync(dir) || !statSync(dir).isDirectory()) {
      throw new DataError(`env.split_dir ${root}: missing ${name}/ (expected train/ val/ test/)`, {
        hint,
        data: { path: dir, input: "env.split_dir", problem: "missing_split" },
      });
    }
    splits[name] = loader.loadSplitItems(dir);
  }
  return splits;
}

function fromRatio(ctx: BenchmarkContext, env: EnvReader, loader: SplitLoader): Splits {
  const raw = env.str("data_path", "");
  if (!raw)
    throw new ConfigError(
      `env.data_path is empty but env.split_mode is ratio (${loader.name}); set env.data_path or use split_dir`,
      { key: "env.data_path" },
    );
  const path = resolveDataPath(ctx, raw);
  const read = loader.loadRawItems ?? ((p: string) => readRawRecords(p) as TaskItem[]);
  const items = read(path);
  if (items.length === 0)
    throw new DataError(`env.data_path ${path}: no items`, {
      data: { path, input: "env.data_path", problem: "empty" },
    });
  const ratio = env.str("split_ratio", "2:1:7");
  const seed = env.int("split_seed", 42);
  const splits = ratioSplit(items, ratio, seed);
  const outDir = env.str("split_output_dir", "")
    ? resolve(process.cwd(), env.str("split_output_dir", ""))
    : join(ctx.workDir, "_generated_splits", `${loader.name}_${ratio.replace(/:/g, "-")}_seed${seed}`);
  for (const name of SPLIT_NAMES) writeJsonAtomic(join(outDir, name, "items.json"), splits[name]);
  writeJsonAtomic(join(outDir, "split_manifest.json"), {
    source_data_path: path,
    split_mode: "ratio",
    split_ratio: ratio,
    split_seed: seed,
    counts: { train: splits.train.length, val: splits.val.length, test: splits.test.length },
  });
  return splits;
}

function assertUniqueIds(splits: Splits, label: string): void {
  const seen = new Map<string, string>();
  for (const name of SPLIT_NAMES) {
    for (const [i, item] of splits[name].entries()) {
      if (typeof item.id !== "string" || !item.id) {
        const data = { split: name, item: i, field: "id", problem: "missing_field" };
        throw new DataError(`[${label}] an item in ${name} has no id`, { data });
      }
      const prev = seen.get(item.id);
      if (prev) {
        const data = { split: name, item: item.id, field: "id", problem: "duplicate_id" };
        throw new DataError(`[${label}] duplicate item id "${item.id}" (in ${prev} and ${name})`, { data });
      }
      seen.set(item.id, name);
    }
  }
}

/** The split an item was loaded from (undefined for items not from loadConfiguredSplits). */
export function itemSplit(item: TaskItem): SplitName | undefined {
  const s = item[SPLIT_FIELD];
  return s === "train" || s === "val" || s === "test" ? s : undefined;
}
