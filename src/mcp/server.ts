import * as v from "valibot";
import { errorMessage } from "../lib/index.ts";
import { type Args, argsProblem, argsSchema, type Fields, jsonSchema } from "./fields.ts";

// The Model Context Protocol over stdio: newline-delimited JSON-RPC 2.0 messages on stdin/stdout
// (spec: modelcontextprotocol.io/specification/2025-11-25, basic/transports#stdio, server/tools,
// basic/utilities/cancellation, basic/lifecycle for version negotiation).

/** Protocol revisions this server speaks, newest first. */
const PROTOCOL_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;

/** What a tool returns: the data (structured) and its text rendering, or a failure in one line. */
export type ToolOutcome =
  | { ok: true; data: Record<string, unknown>; text?: string }
  | { ok: false; message: string; data?: Record<string, unknown> };

/** One MCP tool: its arguments (validated with valibot) and what calling it does. */
export interface Tool {
  name: string;
  title: string;
  description: string;
  fields: Fields;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** `progress` is set when the client asked for progress (a progressToken); it sends one notification per message. */
  call(args: Args, signal: AbortSignal, progress?: (message: string) => void): Promise<ToolOutcome>;
}

type Id = string | number;
type Message = Record<string, unknown>;

// JSON-RPC 2.0 error codes.
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The longest message (one line) the server reads, in characters. A longer one is dropped as it
 * arrives, never held whole in memory, and reading resumes after its newline.
 */
export const MAX_FRAME = 4 * 1_048_576;

const isObject = (x: unknown): x is Message => typeof x === "object" && x !== null && !Array.isArray(x);
const isId = (x: unknown): x is Id => typeof x === "string" || (typeof x === "number" && Number.isInteger(x));

/** The server: feed it lines, it writes replies through `send`. */
class McpServer {
  private readonly inflight = new Map<Id, AbortController>();
  private readonly pending = new Set<Promise<void>>();
  private readonly schemas = new Map<string, v.GenericSchema<unknown, Args>>();

  constructor(
    private readonly opts: {
      name: string;
      version: string;
      instructions: string;
      tools: readonly Tool[];
      send: (msg: Message) => void;
    },
  ) {
    for (const t of opts.tools) this.schemas.set(t.name, argsSchema(t.fields));
  }

  /** A line longer than MAX_FRAME was skipped: say so once, with no id (none could be read). */
  tooLarge(): void {
    this.opts.send({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: INVALID_REQUEST,
        message: `invalid request: a message is at most ${MAX_FRAME / 1_048_576} MiB; this one was skipped to the next line`,
      },
    });
  }

  /** Handle one line from the client. Requests run concurrently: a long tool call never holds up a ping. */
  receive(line: string): void {
    if (!line.trim()) return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.opts.send({
        jsonrpc: "2.0",
        id: null,
        error: { code: PARSE_ERROR, message: "parse error: a message is one line of JSON" },
      });
      return;
    }
    if (!isObject(msg) || msg.jsonrpc !== "2.0") {
      this.opts.send({
        jsonrpc: "2.0",
        id: isObject(msg) && isId(msg.id) ? msg.id : null,
        error: { code: INVALID_REQUEST, message: "invalid request: expected a JSON-RPC 2.0 object" },
      });
      return;
    }
    if (typeof msg.method !== "string") return; // a response to a request we never send
    if (!("id" in msg)) {
      this.notify(msg.method, msg.params);
      return;
    }
    if (!isId(msg.id)) {
      this.opts.send({
        jsonrpc: "2.0",
        id: null,
        error: { code: INVALID_REQUEST, message: "invalid request: id must be a string or an integer" },
      });
      return;
    }
    const id = msg.id;
    const ctl = new AbortController();
    this.inflight.set(id, ctl);
    const work = this.request(msg.method, msg.params, ctl.signal)
      .then(
        (result) => ({ jsonrpc: "2.0", id, result }),
        (err) => ({
          jsonrpc: "2.0",
          id,
          error:
            err instanceof RpcError
              ? { code: err.code, message: err.message }
              : { code: -32603, message: errorMessage(err) },
        }),
      )
      .then((reply) => {
        // spec (cancellation): a cancelled request gets no response.
        if (!ctl.signal.aborted) this.opts.send(reply);
      })
      .finally(() => {
        this.inflight.delete(id);
        this.pending.delete(work);
      });
    this.pending.add(work);
  }

  /**
   * Wait for the requests in flight to settle; with `cancel`, cancel them first. At end of input the
   * quick ones still answer (a client may close stdin and read on), the children's are stopped.
   */
  async close(cancel: boolean): Promise<void> {
    if (cancel) for (const ctl of this.inflight.values()) ctl.abort(new Error("the server is stopping"));
    await Promise.allSettled([...this.pending]);
  }

  private notify(method: string, params: unknown): void {
    if (method === "notifications/cancelled" && isObject(params) && isId(params.requestId)) {
      this.inflight
        .get(params.requestId)
        ?.abort(new Error(typeof params.reason === "string" ? params.reason : "cancelled by the client"));
    }
  }

  private async request(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    if (method === "ping") return {};
    if (method === "initialize") return this.initialize(params);
    if (method === "tools/list")
      return {
        tools: this.opts.tools.map((t) => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: jsonSchema(t.fields),
          ...(t.annotations ? { annotations: t.annotations } : {}),
        })),
      };
    if (method === "tools/call") return this.callTool(params, signal);
    throw new RpcError(METHOD_NOT_FOUND, `method ${method} not found`);
  }

  private initialize(params: unknown): unknown {
    if (!isObject(params) || typeof params.protocolVersion !== "string")
      throw new RpcError(INVALID_PARAMS, "initialize: params.protocolVersion (a string) is required");
    const asked = params.protocolVersion;
    // spec (lifecycle): answer with the client's version when supported, else with our latest.
    const version = (PROTOCOL_VERSIONS as readonly string[]).includes(asked) ? asked : PROTOCOL_VERSIONS[0];
    return {
      protocolVersion: version,
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: this.opts.name, version: this.opts.version },
      instructions: this.opts.instructions,
    };
  }

  private async callTool(params: unknown, signal: AbortSignal): Promise<unknown> {
    if (!isObject(params) || typeof params.name !== "string")
      throw new RpcError(INVALID_PARAMS, "tools/call: params.name (a string) is required");
    const tool = this.opts.tools.find((t) => t.name === params.name);
    if (!tool) throw new RpcError(INVALID_PARAMS, `unknown tool: ${params.name} (tools/list names them)`);
    const parsed = v.safeParse(this.schemas.get(tool.name)!, params.arguments ?? {});
    if (!parsed.success) throw new RpcError(INVALID_PARAMS, argsProblem(tool.name, parsed.issues));
    // spec (progress): notifications carry the request's token, a value that grows, and stop with the response.
    const meta = isObject(params._meta) ? params._meta : {};
    const token = meta.progressToken;
    let step = 0;
    let open = true;
    const progress = isId(token)
      ? (message: string) => {
          if (open && !signal.aborted)
            this.opts.send({
              jsonrpc: "2.0",
              method: "notifications/progress",
              params: { progressToken: token, progress: ++step, message },
            });
        }
      : undefined;
    let outcome: ToolOutcome;
    try {
      outcome = await tool.call(parsed.output, signal, progress);
    } catch (err) {
      outcome = { ok: false, message: `${tool.name}: ${errorMessage(err)}` };
    } finally {
      open = false;
    }
    if (!outcome.ok)
      return {
        content: [{ type: "text", text: outcome.message }],
        ...(outcome.data ? { structuredContent: outcome.data } : {}),
        isError: true,
      };
    return {
      content: [{ type: "text", text: outcome.text ?? JSON.stringify(outcome.data, null, 2) }],
      structuredContent: outcome.data,
    };
  }
}

/**
 * Serve MCP on this process's stdin/stdout until stdin ends (the client is gone) or `stop` aborts;
 * then cancel what is in flight and run `onEnd`.
 */
export async function serveStdio(
  opts: Omit<ConstructorParameters<typeof McpServer>[0], "send">,
  end: { stop: AbortSignal; onEnd: () => Promise<void> },
): Promise<void> {
  const server = new McpServer({ ...opts, send: (msg) => void process.stdout.write(`${JSON.stringify(msg)}\n`) });
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = Bun.stdin.stream().getReader();
  const cancel = () => void reader.cancel();
  end.stop.addEventListener("abort", cancel, { once: true });
  // True while the rest of an over-long line is being dropped.
  let skipping = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl = buffer.indexOf("\n");
      while (nl >= 0) {
        if (skipping) skipping = false;
        else if (nl > MAX_FRAME) server.tooLarge();
        else server.receive(buffer.slice(0, nl).replace(/\r$/, ""));
        buffer = buffer.slice(nl + 1);
        nl = buffer.indexOf("\n");
      }
      if (skipping) buffer = "";
      else if (buffer.length > MAX_FRAME) {
        server.tooLarge();
        skipping = true;
        buffer = "";
      }
    }
    if (!end.stop.aborted && !skipping) server.receive(buffer + decoder.decode());
  } finally {
    end.stop.removeEventListener("abort", cancel);
    await Promise.all([server.close(end.stop.aborted), end.onEnd()]);
  }
}
