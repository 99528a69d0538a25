import { defineCommand } from "citty";
import { SIM_MODEL, simAnswer, type SimOptions, simOptions } from "../../backends/index.ts";
import { loadConfig } from "../../config/index.ts";
import type { ChatMessage } from "../../engine/index.ts";
import { UsageError } from "../../lib/index.ts";
import { globalArgs } from "../args.ts";
import { printResult } from "../output.ts";

interface WireMessage {
  role?: unknown;
  content?: unknown;
}

function toMessages(raw: unknown): ChatMessage[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw.map((m: WireMessage) => {
    const role =
      m.role === "system" || m.role === "developer"
        ? "system"
        : m.role === "assistant"
          ? "assistant"
          : m.role === "tool"
            ? "tool"
            : "user";
    const content =
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("\n")
          : "";
    return { role, content };
  });
}

const tokens = (s: string) => Math.ceil(s.length / 4);

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** Handle one OpenAI-compatible request with the simulator. */
export async function handleSimRequest(req: Request, o: SimOptions): Promise<Response> {
  const url = new URL(req.url);
  if (req.method === "GET" && url.pathname.endsWith("/models")) {
    return json({ object: "list", data: [{ id: SIM_MODEL, object: "model", owned_by: "skillopt-sim" }] });
  }
  if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
    return json(
      {
        error: {
          message: `not found: ${req.method} ${url.pathname} (the simulator serves POST /v1/chat/completions and GET /v1/models)`,
          type: "not_found",
        },
      },
      404,
    );
  }
  let body: Record<string, unknown>;
  try {
    body = (await req.json()) as Record<string, unknown>;
  } catch {
    return json({ error: { message: "request body is not JSON", type: "invalid_request_error" } }, 400);
  }
  const messages = toMessages(body.messages);
  if (!messages?.length)
    return json({ error: { message: "messages must be a non-empty array", type: "invalid_request_error" } }, 400);
  if (o.latencyMs > 0) await Bun.sleep(o.latencyMs);
  const text = simAnswer(messages, 0, o);
  const prompt = messages.reduce((n, m) => n + tokens(String(m.content)), 0);
  const usage = { prompt_tokens: prompt, completion_tokens: tokens(text), total_tokens: prompt + tokens(text) };
  const id = `sim-${crypto.randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  if (body.stream === true) {
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created,
        model: SIM_MODEL,
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      })}\n\n`;
    const sse =
      chunk({ role: "assistant", content: text }, null) +
      chunk({}, "stop") +
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: SIM_MODEL, choices: [], usage })}\n\n` +
      "data: [DONE]\n\n";
    return new Response(sse, { headers: { "content-type": "text/event-stream" } });
  }
  return json({
    id,
    object: "chat.completion",
    created,
    model: SIM_MODEL,
    choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
    usage,
  });
}

export default defineCommand({
  meta: {
    name: "serve",
    description: "Serve the simulator as an OpenAI-compatible endpoint (offline; not a real model)",
  },
  args: {
    ...globalArgs,
    port: { type: "string", description: "Port (0 = any free port)", default: "8765", valueHint: "N" },
    host: { type: "string", description: "Address to bind", default: "127.0.0.1", valueHint: "HOST" },
    seed: { type: "string", description: "Simulator seed (default: train.seed of --config, else 42)", valueHint: "N" },
    config: {
      type: "string",
      description: "Take the seed, lapse/noise rates and latency from this config",
      valueHint: "NAME|FILE",
    },
    "latency-ms": {
      type: "string",
      description:
        "Answer each request after this many milliseconds (default: model.sim_latency_ms of --config, else 0)",
      valueHint: "MS",
    },
  },
  async run({ args }) {
    const port = Number(args.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UsageError(`--port must be an integer 0–65535 (got ${args.port})`, {
        flag: "port",
        value: args.port,
        expected: "integer 0-65535",
      });
    const o: SimOptions = { seed: 42, lapseRate: 0.05, noiseRate: 0.3, latencyMs: 0 };
    if (args.config) {
      const { config } = loadConfig({ config: String(args.config) });
      Object.assign(o, simOptions(config));
    }
    if (args.seed !== undefined) {
      const seed = Number(args.seed);
      if (!Number.isInteger(seed))
        throw new UsageError(`--seed must be an integer (got ${args.seed})`, {
          flag: "seed",
          value: args.seed,
          expected: "integer",
        });
      o.seed = seed;
    }
    if (args["latency-ms"] !== undefined) {
      const ms = Number(args["latency-ms"]);
      if (!(Number.isFinite(ms) && ms >= 0))
        throw new UsageError(`--latency-ms must be a number of milliseconds ≥ 0 (got ${args["latency-ms"]})`, {
          flag: "latency-ms",
          value: args["latency-ms"],
          expected: "number of milliseconds >= 0",
        });
      o.latencyMs = ms;
    }
    const server = Bun.serve({ hostname: String(args.host), port, fetch: (req) => handleSimRequest(req, o) });
    printResult(
      `SkillOpt simulator (offline, not a real model) listening on http://${server.hostname}:${server.port}/v1 seed=${o.seed}`,
    );
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    server.stop(true);
  },
});
