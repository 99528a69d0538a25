import type { ToolSpec } from "../../engine/index.ts";
import { errorMessage, warnKeyOverPlainHttp } from "../../lib/index.ts";

export const SEARCH_TOOL: ToolSpec = {
  name: "search",
  description:
    "Search the web for documents. Give up to the allowed number of focused queries; returns titles, URLs and snippets.",
  parameters: {
    type: "object",
    properties: { queries: { type: "array", items: { type: "string" }, description: "Search queries" } },
    required: ["queries"],
  },
};

interface SearchSettings {
  url: string;
  token: string;
  provider: string;
  maxResults: number;
  timeoutS: number;
  signal?: AbortSignal;
}

const RETRYABLE = new Set([408, 429, 500, 502, 503, 504]);

/** POST one query to the custom search endpoint; up to 4 retries with backoff from 1 s on 408/429/5xx/connection errors. */
export async function customSearch(query: string, s: SearchSettings): Promise<string> {
  if (s.token) warnKeyOverPlainHttp(s.url, "the OfficeQA search token");
  let lastError = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    if (attempt > 0) await Bun.sleep(1000 * 2 ** (attempt - 1));
    try {
      const signals = [AbortSignal.timeout(s.timeoutS * 1000), ...(s.signal ? [s.signal] : [])];
      const res = await fetch(s.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(s.token ? { authorization: s.token } : {}) },
        body: JSON.stringify({ query, max_num_results: s.maxResults, provider: s.provider }),
        signal: AbortSignal.any(signals),
      });
      const text = await res.text();
      if (res.ok) return text.slice(0, 8000);
      lastError = `HTTP ${res.status}`;
      if (!RETRYABLE.has(res.status)) break;
    } catch (err) {
      if (s.signal?.aborted) throw err;
      lastError = errorMessage(err);
    }
  }
  return `error: search failed (${lastError})`;
}
