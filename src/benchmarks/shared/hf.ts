import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { DataError, errorMessage, writeFileAtomic } from "../../lib/index.ts";

export const HF_DATASETS_SERVER = "https://datasets-server.huggingface.co";

interface HfSource {
  dataset: string;
  config: string;
  split: string;
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/**
 * Every row of one dataset split from a Hugging Face datasets-server `/rows` endpoint, paged
 * (`offset`, `length` ≤ 100) with retries and backoff on 408/429/5xx and transport errors.
 */
export async function fetchHfRows(
  src: HfSource,
  opts: {
    host?: string;
    pageSize?: number;
    retries?: number;
    backoffMs?: number;
    onPage?: (done: number, total: number) => void;
  } = {},
): Promise<Record<string, unknown>[]> {
  const host = (opts.host ?? HF_DATASETS_SERVER).replace(/\/+$/, "");
  const pageSize = Math.min(100, opts.pageSize ?? 100);
  const rows: Record<string, unknown>[] = [];
  let total = Number.POSITIVE_INFINITY;
  for (let offset = 0; offset < total; offset += pageSize) {
    const url = `${host}/rows?dataset=${encodeURIComponent(src.dataset)}&config=${encodeURIComponent(src.config)}&split=${encodeURIComponent(src.split)}\
&offset=${offset}&length=${pageSize}`;
    const page = await getJson(url, opts.retries ?? 4, opts.backoffMs ?? 1000);
    const list = Array.isArray(page.rows) ? page.rows : [];
    for (const r of list) {
      const row = r && typeof r === "object" ? (r as { row?: unknown }).row : undefined;
      if (row && typeof row === "object") rows.push(row as Record<string, unknown>);
    }
    total = typeof page.num_rows_total === "number" ? page.num_rows_total : rows.length;
    opts.onPage?.(rows.length, total);
    if (list.length === 0) break;
  }
  return rows;
}

async function getJson(url: string, retries: number, backoffMs: number): Promise<Record<string, unknown>> {
  let last = "";
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) await Bun.sleep(backoffMs * 2 ** (attempt - 1));
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      if (res.ok) return (await res.json()) as Record<string, unknown>;
      last = `HTTP ${res.status}`;
      if (res.status === 401 || res.status === 403) {
        throw new DataError(
          `${new URL(url).host}: ${last} (the dataset is gated or private); download the file yourself and pass it with --from`,
          { data: { path: url, problem: "forbidden" } },
        );
      }
      if (!RETRYABLE.has(res.status)) break;
    } catch (err) {
      if (err instanceof DataError) throw err;
      last = errorMessage(err);
    }
  }
  throw new DataError(`cannot fetch rows from ${new URL(url).host}: ${last}`, {
    data: { path: url, problem: "unreachable" },
  });
}

/**
 * DocVQA images: for each manifest entry whose `image_path` does not exist yet, write the row's
 * image — a datasets-server `{src: URL}` (downloaded, with retries), `{bytes: base64}` or a
 * base64 / data-URI string. Relative paths are resolved against `baseDir`.
 */
export async function writeDocVqaImages(
  entries: ReadonlyArray<Record<string, unknown>>,
  rowsById: ReadonlyMap<string, Record<string, unknown>>,
  baseDir: string,
): Promise<{ written: number; present: number; unavailable: string[] }> {
  let written = 0;
  let present = 0;
  const unavailable: string[] = [];
  for (const e of entries) {
    const rel = String(e.image_path ?? "");
    const id = String(e.id ?? "");
    if (!rel) continue;
    const path = isAbsolute(rel) ? rel : join(baseDir, rel);
    if (existsSync(path)) {
      present++;
      continue;
    }
    const img = rowsById.get(id)?.image;
    let bytes: Uint8Array | undefined;
    if (img && typeof img === "object" && typeof (img as { src?: unknown }).src === "string") {
      bytes = await download((img as { src: string }).src);
    } else if (img && typeof img === "object" && typeof (img as { bytes?: unknown }).bytes === "string") {
      bytes = Buffer.from((img as { bytes: string }).bytes, "base64");
    } else if (typeof img === "string" && img) {
      bytes = Buffer.from(img.replace(/^data:[^,]*,/, ""), "base64");
    }
    if (!bytes || bytes.length === 0) {
      unavailable.push(id);
      continue;
    }
    writeFileAtomic(path, bytes);
    written++;
  }
  return { written, present, unavailable };
}

async function download(url: string): Promise<Uint8Array | undefined> {
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await Bun.sleep(500 * 2 ** (attempt - 1));
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
      if (res.ok) return new Uint8Array(await res.arrayBuffer());
      if (!RETRYABLE.has(res.status)) return undefined;
    } catch (err) {
      if (!(err instanceof Error)) throw err;
    }
  }
  return undefined;
}
