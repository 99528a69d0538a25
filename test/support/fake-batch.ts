/**
 * The Batch API of the fake OpenAI server (fake-openai.ts, option `batch`), on the same loopback
 * port: POST /v1/files (multipart upload, purpose "batch"), GET /v1/files/:id and /content,
 * POST /v1/batches, GET /v1/batches[/:id], POST /v1/batches/:id/cancel; Azure's /openai/… paths
 * (with ?api-version) too. Each line of a batch is answered by the server's own replies (rules,
 * queue, default reply), so a batch and a live call of the same request get the same answer.
 *
 * Time is simulated: a batch completes once the server's clock (`batch.clock`, ms; the test moves it
 * with `batch.advance(ms)`, or `advancePerPollMs` moves it on every retrieve) has passed its
 * creation time plus `completionMs`, and expires when `expiresMs` passes first. Nothing waits for
 * real. Per-request failures (`failRequest`) go to the error file with their status.
 */
import type { FakeRequest } from "./fake-openai.ts";

export interface FakeBatchOptions {
  /** Simulated time a batch takes to complete (ms), or a function of its 0-based index and size. Default 0. */
  completionMs?: number | ((index: number, requests: number) => number);
  /** A batch not complete this long after its creation (simulated ms) expires. Default 24 h. */
  expiresMs?: number;
  /** Move the clock by this much on every retrieve of a batch (a provider whose time passes while you poll). */
  advancePerPollMs?: number;
  /** Read the clock from this function instead (e.g. scaled real time in a benchmark); `advance` then adds to it. */
  clock?: () => number;
  /** A failure for one request of a batch (it goes to the error file), or undefined to answer it. */
  failRequest?: (req: FakeRequest, batchIndex: number) => { status: number; message: string } | undefined;
}

export interface FakeBatchRecord {
  id: string;
  index: number;
  input_file_id: string;
  endpoint: string;
  created_ms: number;
  complete_ms: number;
  expires_ms: number;
  status: string;
  lines: Array<{ custom_id: string; url: string; body: Record<string, unknown> }>;
  output_file_id: string | null;
  error_file_id: string | null;
  metadata: Record<string, string> | null;
}

export interface FakeBatchControl {
  /** The simulated clock in ms. */
  readonly clock: number;
  /** How far each retrieve moves the clock (the `advancePerPollMs` option; settable mid-test). */
  advancePerPollMs: number;
  advance(ms: number): void;
  readonly batches: FakeBatchRecord[];
  /** Uploads received (POST /files). */
  readonly uploads: number;
  /** Every batch line answered so far (as a live request would be seen). */
  readonly requests: FakeRequest[];
  /** Calls of each route ("POST /files", "POST /batches", "GET /batches/:id", …). */
  readonly calls: Record<string, number>;
  handle(request: Request, url: URL): Promise<Response | undefined>;
}

type AnswerLine = (
  body: Record<string, unknown>,
  url: string,
) => Promise<{ status: number; body: Record<string, unknown>; req: FakeRequest }>;

const DAY = 24 * 3600 * 1000;

/** The Batch API state of one fake server. */
export function createFakeBatch(opts: FakeBatchOptions | undefined, answerLine: AnswerLine): FakeBatchControl {
  const o = opts ?? {};
  let offset = 0;
  let perPoll = o.advancePerPollMs ?? 0;
  const now = () => (o.clock?.() ?? 0) + offset;
  let uploads = 0;
  const files = new Map<string, { id: string; filename: string; purpose: string; text: string }>();
  const batches: FakeBatchRecord[] = [];
  const requests: FakeRequest[] = [];
  const calls: Record<string, number> = {};
  const count = (k: string) => {
    calls[k] = (calls[k] ?? 0) + 1;
  };
  const fileObject = (f: { id: string; filename: string; purpose: string; text: string }) => ({
    id: f.id,
    object: "file",
    bytes: Buffer.byteLength(f.text),
    created_at: 0,
    filename: f.filename,
    purpose: f.purpose,
    status: "processed",
  });
  const addFile = (filename: string, purpose: string, text: string) => {
    const id = `file-${files.size + 1}`;
    const f = { id, filename, purpose, text };
    files.set(id, f);
    return f;
  };

  /** Bring a batch's status up to the clock; on completion or expiry write its output and error files. */
  const advanceBatch = async (b: FakeBatchRecord) => {
    if (["completed", "expired", "cancelled", "failed"].includes(b.status)) return;
    if (now() >= b.complete_ms && b.complete_ms <= b.expires_ms) {
      const out: string[] = [];
      const err: string[] = [];
      for (const line of b.lines) {
        const probe = await answerLine(line.body, line.url);
        requests.push(probe.req);
        const fail = o.failRequest?.(probe.req, b.index);
        const status = fail?.status ?? probe.status;
        const body = fail ? { error: { message: fail.message, type: "fake_error" } } : probe.body;
        const row = JSON.stringify({
          id: `batch_req_${requests.length}`,
          custom_id: line.custom_id,
          response: { status_code: status, request_id: `req_${requests.length}`, body },
          error: null,
        });
        (status === 200 ? out : err).push(row);
      }
      b.output_file_id = out.length ? addFile(`${b.id}_output.jsonl`, "batch_output", `${out.join("\n")}\n`).id : null;
      b.error_file_id = err.length ? addFile(`${b.id}_error.jsonl`, "batch_output", `${err.join("\n")}\n`).id : null;
      b.status = "completed";
      return;
    }
    if (now() >= b.expires_ms) {
      // Nothing was done in time: every request is in the error file as expired.
      const err = b.lines.map((l, i) =>
        JSON.stringify({
          id: `batch_req_x${i}`,
          custom_id: l.custom_id,
          response: null,
          error: {
            code: "batch_expired",
            message: "This request could not be executed before the completion window expired.",
          },
        }),
      );
      b.error_file_id = addFile(`${b.id}_error.jsonl`, "batch_output", `${err.join("\n")}\n`).id;
      b.status = "expired";
      return;
    }
    b.status = now() > b.created_ms ? "in_progress" : "validating";
  };

  const view = (b: FakeBatchRecord) => {
    const total = b.lines.length;
    const done =
      b.status === "completed"
        ? total
        : b.status === "in_progress"
          ? Math.floor((total * (now() - b.created_ms)) / Math.max(1, b.complete_ms - b.created_ms))
          : 0;
    const failedLines = b.error_file_id ? (files.get(b.error_file_id)?.text.trim().split("\n").length ?? 0) : 0;
    return {
      id: b.id,
      object: "batch",
      endpoint: b.endpoint,
      input_file_id: b.input_file_id,
      completion_window: "24h",
      status: b.status,
      output_file_id: b.output_file_id,
      error_file_id: b.error_file_id,
      created_at: Math.floor(b.created_ms / 1000),
      expires_at: Math.floor(b.expires_ms / 1000),
      request_counts: {
        total,
        completed: b.status === "completed" ? total - failedLines : Math.min(done, total),
        failed: failedLines,
      },
      metadata: b.metadata,
    };
  };

  const find = (id: string) => batches.find((b) => b.id === id);
  const notFound = (what: string) =>
    Response.json({ error: { message: `fake batch: no ${what}`, type: "invalid_request_error" } }, { status: 404 });

  return {
    get clock() {
      return now();
    },
    advance(ms: number) {
      offset += ms;
    },
    get advancePerPollMs() {
      return perPoll;
    },
    set advancePerPollMs(ms: number) {
      perPoll = ms;
    },
    batches,
    get uploads() {
      return uploads;
    },
    requests,
    calls,
    async handle(request, url) {
      const path = url.pathname.replace(/^\/openai/, "").replace(/^\/v1/, "");
      const m = request.method;
      if (m === "POST" && path === "/files") {
        count("POST /files");
        const form = await request.formData();
        const file = form.get("file");
        if (!(file instanceof Blob))
          return Response.json({ error: { message: "fake batch: no file part" } }, { status: 400 });
        uploads++;
        const f = addFile((file as File).name || "upload.jsonl", String(form.get("purpose") ?? ""), await file.text());
        return Response.json(fileObject(f));
      }
      const content = /^\/files\/([^/]+)\/content$/.exec(path);
      if (m === "GET" && content) {
        count("GET /files/:id/content");
        const f = files.get(content[1]!);
        return f
          ? new Response(f.text, { headers: { "content-type": "application/jsonl" } })
          : notFound(`file ${content[1]}`);
      }
      const fileGet = /^\/files\/([^/]+)$/.exec(path);
      if (m === "GET" && fileGet) {
        const f = files.get(fileGet[1]!);
        return f ? Response.json(fileObject(f)) : notFound(`file ${fileGet[1]}`);
      }
      if (m === "POST" && path === "/batches") {
        count("POST /batches");
        const body = (await request.json()) as {
          input_file_id?: string;
          endpoint?: string;
          metadata?: Record<string, string>;
        };
        const input = files.get(String(body.input_file_id));
        if (!input) return notFound(`file ${body.input_file_id}`);
        const lines = input.text
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as { custom_id: string; url: string; body: Record<string, unknown> });
        const index = batches.length;
        const delay =
          typeof o.completionMs === "function" ? o.completionMs(index, lines.length) : (o.completionMs ?? 0);
        const b: FakeBatchRecord = {
          id: `batch_${index + 1}`,
          index,
          input_file_id: input.id,
          endpoint: String(body.endpoint ?? ""),
          created_ms: now(),
          complete_ms: now() + delay,
          expires_ms: now() + (o.expiresMs ?? DAY),
          status: "validating",
          lines,
          output_file_id: null,
          error_file_id: null,
          metadata: body.metadata ?? null,
        };
        batches.push(b);
        return Response.json(view(b));
      }
      if (m === "GET" && path === "/batches") {
        count("GET /batches");
        const newest = [...batches].reverse();
        return Response.json({
          object: "list",
          data: newest.map(view),
          has_more: false,
          first_id: newest[0]?.id ?? null,
          last_id: newest.at(-1)?.id ?? null,
        });
      }
      const one = /^\/batches\/([^/]+)$/.exec(path);
      if (m === "GET" && one) {
        count("GET /batches/:id");
        const b = find(one[1]!);
        if (!b) return notFound(`batch ${one[1]}`);
        offset += perPoll;
        await advanceBatch(b);
        return Response.json(view(b));
      }
      const cancel = /^\/batches\/([^/]+)\/cancel$/.exec(path);
      if (m === "POST" && cancel) {
        count("POST /batches/:id/cancel");
        const b = find(cancel[1]!);
        if (!b) return notFound(`batch ${cancel[1]}`);
        if (!["completed", "expired", "failed"].includes(b.status)) b.status = "cancelled";
        return Response.json(view(b));
      }
      return undefined;
    },
  };
}
