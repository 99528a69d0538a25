// The Batch API half of the SDK backend (openai-compatible.ts builds it): files and batches through
// the official client, so OpenAI and Azure OpenAI (its GlobalBatch deployments) share one path.
import type OpenAI from "openai";
import { toFile } from "openai";
import type { ChatRequest } from "../engine/index.ts";
import { BackendError } from "../lib/index.ts";
import type { BatchApi, BatchInfo, BatchLineResult, RawCompletion } from "./types.ts";

interface BatchApiOptions {
  client: OpenAI;
  url: "/v1/chat/completions" | "/chat/completions";
  accepts: (request: ChatRequest & { model: string }) => boolean;
  body: (request: ChatRequest & { model: string }) => Record<string, unknown>;
  parse: (res: OpenAI.ChatCompletion, requested: string) => RawCompletion | undefined;
  /** Classify an SDK failure like a live call's (BackendError with kind and retryability). */
  fail: (err: unknown, model: string) => BackendError;
}

const BATCH_ROUTE = "(batch API)";

/** The provider's Batch API over the SDK client. */
export function createBatchApi(o: BatchApiOptions): BatchApi {
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw o.fail(err, BATCH_ROUTE);
    }
  };
  return {
    url: o.url,
    accepts: o.accepts,
    body: (request) => {
      const body = o.body(request);
      delete body.stream;
      return body;
    },
    submit: (jsonl, fingerprint, signal) =>
      guard(async () => {
        const file = await o.client.files.create(
          { file: await toFile(Buffer.from(jsonl, "utf8"), "skillopt-batch.jsonl"), purpose: "batch" },
          { signal },
        );
        const batch = await o.client.batches.create(
          {
            input_file_id: file.id,
            endpoint: o.url as "/v1/chat/completions",
            completion_window: "24h",
            metadata: { created_by: "skillopt", skillopt_requests: fingerprint },
          },
          { signal },
        );
        return { batch: infoOf(batch), inputFileId: file.id };
      }),
    find: async (fingerprint, signal) => {
      try {
        // The most recent batches are enough: an orphan is one this machine created moments before it died.
        const page = await o.client.batches.list({ limit: 100 }, { signal });
        const hit = page.data.find(
          (b) =>
            b.metadata?.skillopt_requests === fingerprint &&
            !["failed", "expired", "cancelling", "cancelled"].includes(b.status),
        );
        return hit ? { batch: infoOf(hit), inputFileId: hit.input_file_id } : undefined;
      } catch {
        // No listing (an endpoint without it, a transient error): submit as usual.
        return undefined;
      }
    },
    retrieve: (id, signal) => guard(async () => infoOf(await o.client.batches.retrieve(id, { signal }))),
    results: (fileId, requestedModel, signal) =>
      guard(async () => {
        const res = await o.client.files.content(fileId, { signal });
        return parseLines(await res.text(), requestedModel, o.parse);
      }),
    cancel: (id) =>
      guard(async () => {
        await o.client.batches.cancel(id);
      }),
  };
}

function infoOf(b: OpenAI.Batch): BatchInfo {
  const c = b.request_counts;
  const errors = b.errors?.data
    ?.map((e) => `${e.code ?? "error"}: ${e.message ?? ""}${e.line ? ` (line ${e.line})` : ""}`)
    .join("; ");
  return {
    id: b.id,
    status: b.status,
    total: c?.total ?? 0,
    completed: c?.completed ?? 0,
    failed: c?.failed ?? 0,
    outputFileId: b.output_file_id ?? undefined,
    errorFileId: b.error_file_id ?? undefined,
    ...(errors ? { errors } : {}),
  };
}

interface OutputLine {
  custom_id?: unknown;
  response?: { status_code?: unknown; body?: unknown } | null;
  error?: { code?: unknown; message?: unknown } | null;
}

/** Parse an output or error file: a line per request, `{custom_id, response: {status_code, body}, error}`. */
function parseLines(
  text: string,
  requestedModel: (customId: string) => string,
  parse: BatchApiOptions["parse"],
): Map<string, BatchLineResult> {
  const out = new Map<string, BatchLineResult>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line) continue;
    let obj: OutputLine;
    try {
      obj = JSON.parse(line) as OutputLine;
    } catch {
      throw new BackendError("protocol", `batch output file: a line is not JSON (${line.slice(0, 80)})`, {
        retryable: true,
      });
    }
    if (typeof obj.custom_id !== "string") continue;
    const id = obj.custom_id;
    const status = Number(obj.response?.status_code ?? 0);
    if (obj.error) {
      out.set(id, { error: `${String(obj.error.code ?? "error")}: ${String(obj.error.message ?? "")}` });
      continue;
    }
    if (status !== 200) {
      const body = obj.response?.body as { error?: { message?: unknown } } | undefined;
      out.set(id, { error: `HTTP ${status || "?"}: ${String(body?.error?.message ?? "no answer")}` });
      continue;
    }
    const completion = parse(obj.response?.body as OpenAI.ChatCompletion, requestedModel(id));
    out.set(id, completion ? { completion } : { error: "the answer has no choices" });
  }
  return out;
}
