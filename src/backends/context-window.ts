import { isLoopbackHost, log } from "../lib/index.ts";

/** What a server told about a model's context window, and which of its endpoints said it. */
export interface ContextWindow {
  tokens: number;
  /** "vllm /v1/models max_model_len", "llama.cpp /props n_ctx", "ollama /api/show", "lm studio /api/v0/models". */
  source: string;
}

const PROBE_TIMEOUT_MS = 3_000;

/** Hosts worth asking: this machine and private networks, where the local servers live. */
function isLocalHost(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, "");
  return (
    isLoopbackHost(h) ||
    /^10\./.test(h) ||
    /^192\.168\./.test(h) ||
    /^172\.(1[6-9]|2\d|3[01])\./.test(h) ||
    /^169\.254\./.test(h) ||
    /^f[cd][0-9a-f]{2}:/i.test(h) ||
    h.endsWith(".local") ||
    h.endsWith(".lan") ||
    h.endsWith(".internal") ||
    !h.includes(".")
  );
}

const positive = (x: unknown): number | undefined =>
  typeof x === "number" && Number.isInteger(x) && x > 0
    ? x
    : typeof x === "string" && /^\d+$/.test(x)
      ? Number(x)
      : undefined;

async function getJson(url: string, init: RequestInit, apiKey: string | undefined): Promise<unknown> {
  const res = await fetch(url, {
    ...init,
    headers: {
      "User-Agent": "SkillOpt",
      ...(init.body ? { "Content-Type": "application/json" } : {}),
      ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
    },
    signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
  });
  if (!res.ok) return undefined;
  return res.json().catch(() => undefined);
}

/** vLLM (and SGLang) list each served model with max_model_len under /v1/models. */
function fromModelList(body: unknown, model: string): number | undefined {
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return undefined;
  const entry = (data.find((m) => (m as { id?: unknown })?.id === model) ??
    (data.length === 1 ? data[0] : undefined)) as Record<string, unknown> | undefined;
  return positive(entry?.max_model_len) ?? positive(entry?.context_length) ?? positive(entry?.context_window);
}

/** llama.cpp's server: GET /props → default_generation_settings.n_ctx (the slot's context, what it enforces). */
function fromLlamaProps(body: unknown): number | undefined {
  const s = (body as { default_generation_settings?: Record<string, unknown> } | undefined)
    ?.default_generation_settings;
  return positive(s?.n_ctx) ?? positive((s?.params as Record<string, unknown> | undefined)?.n_ctx);
}

/**
 * Ollama: POST /api/show → `parameters` may set num_ctx (what the server runs with); else
 * model_info["<architecture>.context_length"], the model's own maximum.
 */
function fromOllamaShow(body: unknown): number | undefined {
  const b = body as { parameters?: unknown; model_info?: Record<string, unknown> } | undefined;
  const numCtx = typeof b?.parameters === "string" ? /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(b.parameters)?.[1] : undefined;
  if (numCtx) return Number(numCtx);
  const info = b?.model_info ?? {};
  const arch = info["general.architecture"];
  if (typeof arch === "string") {
    const n = positive(info[`${arch}.context_length`]);
    if (n) return n;
  }
  for (const [k, val] of Object.entries(info)) if (k.endsWith(".context_length") && positive(val)) return positive(val);
  return undefined;
}

/** LM Studio: GET /api/v0/models/{model} → loaded_context_length when loaded, else max_context_length. */
function fromLmStudio(body: unknown): number | undefined {
  const b = body as Record<string, unknown> | undefined;
  return positive(b?.loaded_context_length) ?? positive(b?.max_context_length);
}

/**
 * Ask an OpenAI-compatible server on this machine or a private network how long a model's context
 * is, from the endpoints the local servers expose (vLLM, llama.cpp, Ollama, LM Studio), each at
 * most once and briefly. Undefined when none says (a cloud endpoint is never asked: it would not tell).
 */
export async function probeContextWindow(
  baseUrl: string,
  model: string,
  apiKey: string | undefined,
): Promise<ContextWindow | undefined> {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return undefined;
  }
  if (!isLocalHost(u.hostname)) return undefined;
  const base = baseUrl.replace(/\/+$/, "");
  const root = u.origin;
  const probes: [string, () => Promise<number | undefined>][] = [
    ["vLLM /v1/models max_model_len", async () => fromModelList(await getJson(`${base}/models`, {}, apiKey), model)],
    ["llama.cpp /props n_ctx", async () => fromLlamaProps(await getJson(`${root}/props`, {}, apiKey))],
    [
      "Ollama /api/show",
      async () =>
        fromOllamaShow(await getJson(`${root}/api/show`, { method: "POST", body: JSON.stringify({ model }) }, apiKey)),
    ],
    [
      "LM Studio /api/v0/models",
      async () => fromLmStudio(await getJson(`${root}/api/v0/models/${encodeURIComponent(model)}`, {}, apiKey)),
    ],
  ];
  for (const [source, probe] of probes) {
    const tokens = await probe().catch(() => undefined);
    if (tokens) {
      log.withTag("model").debug(`context window of ${model} at ${u.host}: ${tokens} tokens (${source})`);
      return { tokens, source };
    }
  }
  return undefined;
}
