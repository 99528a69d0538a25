import type { Entry } from "./batcher.ts";
import type { PriceTable } from "./pricing.ts";

// OpenAI's limits per batch: 50,000 requests and a 200 MB input file.
const MAX_REQUESTS = 50_000;
const MAX_BYTES = 200 * 1024 * 1024;
// A completion without a token limit in the body is assumed to stop here (worst case of the caps).
const DEFAULT_MAX_COMPLETION = 16_384;

/** Callers of a batch (`entries`) and its distinct requests (`items`, one JSONL line each). */
export interface Chunk {
  entries: Entry[];
  items: Entry[];
  lines: string[];
}

/** The JSONL lines of a group (one per distinct key), split at the provider's request and size limits. */
export function split(group: Entry[]): Chunk[] {
  const out: Chunk[] = [];
  let cur: Chunk = { entries: [], items: [], lines: [] };
  let bytes = 0;
  const chunkOf = new Map<string, Chunk>();
  for (const e of group) {
    const seen = chunkOf.get(e.key);
    if (seen) {
      seen.entries.push(e);
      continue;
    }
    const line = JSON.stringify({ custom_id: e.key, method: "POST", url: e.api.url, body: e.body });
    const size = Buffer.byteLength(line, "utf8") + 1;
    if (cur.items.length && (cur.items.length >= MAX_REQUESTS || bytes + size > MAX_BYTES)) {
      out.push(cur);
      cur = { entries: [], items: [], lines: [] };
      bytes = 0;
    }
    cur.entries.push(e);
    cur.items.push(e);
    cur.lines.push(line);
    chunkOf.set(e.key, cur);
    bytes += size;
  }
  if (cur.items.length) out.push(cur);
  return out;
}

/**
 * The most a batch's lines can cost at the batch price: every prompt at 3 bytes per token, every
 * answer at its token limit (DEFAULT_MAX_COMPLETION without one); null when a price is unknown.
 */
export function worstCaseUsd(models: readonly string[], lines: readonly string[], prices: PriceTable): number | null {
  let total = 0;
  for (let i = 0; i < models.length; i++) {
    const price = prices.batchLookup(models[i]!);
    if (!price) return null;
    const body = (JSON.parse(lines[i]!) as { body: Record<string, unknown> }).body;
    const prompt = Math.ceil(Buffer.byteLength(JSON.stringify(body.messages ?? []), "utf8") / 3);
    const limit =
      Number(body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_COMPLETION) || DEFAULT_MAX_COMPLETION;
    total += (prompt * price.input_per_mtok + limit * price.output_per_mtok) / 1e6;
  }
  return total;
}
