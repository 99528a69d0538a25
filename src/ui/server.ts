import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import type { Server } from "bun";
import { renderReportHtml, renderRunBody } from "../report/html/index.ts";
import { errorMessage, log } from "../lib/index.ts";
import { UI_CSS, UI_JS } from "./assets.ts";
import { type LaunchRequest, listLaunchConfigs, validateLaunch } from "./launch-form.ts";
import { Launcher, selfCommand } from "./launcher.ts";
import { comparePage, errorPage, launchesHtml, launchPage, page, runPage, runsPage } from "./pages.ts";
import { listRuns, readRun, runDirOf } from "./run-index.ts";
import { BASE_HEADERS, canRead, type Guard, generateToken, hostAllowed, isLoopbackHost, mutationRefusal, PAGE_CSP, resolveInside, TOKEN_COOKIE } from "./security.ts";
import { createSleepPanel, type SleepPanel, sleepAction, sleepPage } from "./sleep-panel.ts";
import { RunWatchHub } from "./watch.ts";

export interface UiOptions {
  root: string;
  host?: string;
  port?: number;
  token?: string;
  /** Working directory for launched runs and local configs. */
  cwd?: string;
  /** How to invoke skillopt for launched runs (defaults to this process's own command). */
  command?: string[];
  /** Extra environment for launched runs. */
  env?: Record<string, string | undefined>;
  /** Project whose Sleep nights the panel shows first (default: cwd). */
  sleepProject?: string;
  /** Replace the Sleep panel (tests); `null` turns it off. */
  sleep?: SleepPanel | null;
}

export interface UiServer {
  url: string;
  /** The URL with the token, as printed at start. */
  tokenUrl: string;
  token: string;
  port: number;
  launcher: Launcher;
  stop(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function headers(extra: Record<string, string>): Headers {
  return new Headers({ ...BASE_HEADERS, ...extra });
}

function html(body: string, status = 200): Response {
  return new Response(body, { status, headers: headers({ "content-type": "text/html; charset=utf-8", "content-security-policy": PAGE_CSP }) });
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: headers({ "content-type": "application/json; charset=utf-8" }) });
}

const TEXT_TYPES: Record<string, string> = {
  ".md": "text/markdown; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".jsonl": "text/plain; charset=utf-8",
  ".yaml": "text/plain; charset=utf-8",
  ".yml": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
  ".log": "text/plain; charset=utf-8",
};

function sse(onOpen: (send: (event: string, data: unknown) => void) => () => void, signal: AbortSignal): Response {
  let cleanup: (() => void) | null = null;
  let beat: ReturnType<typeof setInterval> | null = null;
  const stream = new ReadableStream<string>({
    start(controller) {
      const send = (event: string, data: unknown) => {
        try {
          controller.enqueue(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
        } catch {
          stop();
        }
      };
      const stop = () => {
        if (beat) clearInterval(beat);
        beat = null;
        cleanup?.();
        cleanup = null;
      };
      controller.enqueue(": connected\n\n");
      cleanup = onOpen(send);
      beat = setInterval(() => send("ping", {}), 15_000);
      signal.addEventListener("abort", () => {
        stop();
        try {
          controller.close();
        } catch (err) {
          log.withTag("ui").debug(`sse close: ${errorMessage(err)}`);
        }
      });
    },
    cancel() {
      if (beat) clearInterval(beat);
      cleanup?.();
    },
  });
  return new Response(stream, { headers: headers({ "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" }) });
}

async function readBody(req: Request): Promise<Record<string, unknown>> {
  try {
    const v = (await req.json()) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    throw new HttpError(400, "request body must be a JSON object");
  }
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "bad percent-encoding in the path");
  }
}

function launchRequest(body: Record<string, unknown>): LaunchRequest {
  const values: Record<string, string> = {};
  if (typeof body.values === "object" && body.values !== null)
    for (const [k, v] of Object.entries(body.values as Record<string, unknown>)) values[k] = typeof v === "string" ? v : String(v ?? "");
  return { config: typeof body.config === "string" ? body.config : "", values, extra: typeof body.extra === "string" ? body.extra : "" };
}

/** Start the dashboard. Binds 127.0.0.1 unless told otherwise; port 0 picks a free port. */
export function startUi(opts: UiOptions): UiServer {
  const root = resolve(opts.root);
  const host = opts.host ?? "127.0.0.1";
  const cwd = opts.cwd ?? process.cwd();
  const token = opts.token ?? generateToken();
  const hub = new RunWatchHub();
  const command = opts.command ?? selfCommand();
  const launcher = new Launcher({ root, command, cwd, env: opts.env ?? {} });
  const sleep = opts.sleep === null ? undefined : (opts.sleep ?? createSleepPanel({ project: opts.sleepProject ?? cwd, command, cwd, env: opts.env ?? {} }));
  const guard: Guard = { token, loopback: isLoopbackHost(host), port: 0 };
  const status = (dir: string) => {
    const s = launcher.statusOf(dir);
    return s === "running" ? "running" : undefined;
  };

  const runOf = (rawId: string) => {
    const dir = runDirOf(root, rawId);
    if (!dir) throw new HttpError(404, `no run "${rawId}" under ${root}`);
    return dir;
  };

  async function route(req: Request, url: URL): Promise<Response> {
    const path = url.pathname;
    const method = req.method;
    if (method !== "GET" && method !== "HEAD") {
      const refusal = mutationRefusal(guard, req);
      if (refusal) return json({ error: `forbidden: ${refusal}` }, 403);
    }
    if (method === "GET" && path === "/assets/app.js") return new Response(UI_JS, { headers: headers({ "content-type": "text/javascript; charset=utf-8" }) });
    if (method === "GET" && path === "/assets/style.css") return new Response(UI_CSS, { headers: headers({ "content-type": "text/css; charset=utf-8" }) });
    if (method === "GET" && path === "/") return html(page({ title: "Runs", tab: "runs", token, pageId: "runs", body: runsPage(listRuns(root, status), root) }));
    if (method === "GET" && path === "/api/runs") return json(listRuns(root, status));
    if (method === "GET" && path === "/compare") {
      const rows = listRuns(root, status);
      const a = url.searchParams.get("a") ?? undefined;
      const b = url.searchParams.get("b") ?? undefined;
      const ra = a ? readRun(runOf(a), status).run : null;
      const rb = b ? readRun(runOf(b), status).run : null;
      return html(page({ title: "Compare", tab: "compare", token, pageId: "compare", body: comparePage(rows, ra, rb, a, b) }));
    }
    if (method === "GET" && path === "/launch")
      return html(page({ title: "Launch", tab: "launch", token, pageId: "launch", body: launchPage(listLaunchConfigs(cwd), launcher.list(), cwd) }));
    if (method === "GET" && path === "/launches") return html(launchesHtml(launcher.list()));
    if (method === "GET" && path === "/api/launches") return json(launcher.list());
    if (method === "POST" && path === "/api/validate") return json(validateLaunch(launchRequest(await readBody(req)), cwd));
    if (method === "POST" && path === "/api/launch") {
      const lr = launchRequest(await readBody(req));
      const v = validateLaunch(lr, cwd);
      if (!v.ok) return json({ ok: false, errors: v.errors }, 422);
      const info = launcher.launch(lr.config.trim(), v.sets);
      return json({ ok: true, launch: info });
    }
    const lm = /^\/api\/launches\/([^/]+)\/(stop|events)$/.exec(path);
    if (lm) {
      const id = decode(lm[1]!);
      const info = launcher.get(id);
      if (!info) throw new HttpError(404, `no launch ${id}`);
      if (lm[2] === "stop" && method === "POST") return json({ ok: launcher.stop(id), launch: launcher.get(id) });
      if (lm[2] === "events" && method === "GET")
        return sse((send) => {
          send("change", { status: info.status });
          return launcher.subscribe(id, (i, line) => send("change", { status: i.status, line: line ?? null }));
        }, req.signal);
    }
    if (method === "GET" && path === "/sleep") return html(page({ title: "Sleep", tab: "sleep", token, pageId: "sleep", body: await sleepPage(sleep, url) }));
    const sm = /^\/api\/sleep\/(adopt|reject)$/.exec(path);
    if (sm && method === "POST") {
      const r = await sleepAction(sleep, sm[1] as "adopt" | "reject", await readBody(req));
      return json(r.body, r.status);
    }
    const rm = /^\/runs\/([^/]+)(\/.*)?$/.exec(path);
    if (rm && method === "GET") {
      const id = decode(rm[1]!);
      const rest = rm[2] ?? "";
      const dir = runOf(id);
      if (rest === "" || rest === "/") {
        const { run } = readRun(dir, status);
        return html(page({ title: run.name, tab: "runs", token, pageId: "run", body: runPage(run, id, launcher.byDir(dir)) }));
      }
      if (rest === "/body") {
        const { run } = readRun(dir, status);
        return html(`<div id="run-body" data-run="${id.replace(/"/g, "&quot;")}" data-steps="${run.steps.length}" data-status="${run.status}">${renderRunBody(run)}</div>`);
      }
      if (rest === "/report.html") {
        const res = html(renderReportHtml(readRun(dir, status).run));
        res.headers.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:");
        return res;
      }
      if (rest === "/events") return sse((send) => hub.subscribe(dir, (version) => send("update", { version })), req.signal);
      if (rest.startsWith("/files/")) return serveFile(dir, rest.slice("/files/".length));
    }
    throw new HttpError(404, `not found: ${path}`);
  }

  function serveFile(dir: string, encoded: string): Response {
    const rel = decode(encoded);
    const file = resolveInside(dir, rel);
    if (!file) throw new HttpError(403, "path leaves the run directory");
    if (!existsSync(file) || !statSync(file).isFile()) throw new HttpError(404, `no file ${rel}`);
    if (/state\.sqlite/.test(file)) throw new HttpError(403, "the run store is not served");
    const type = TEXT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
    return new Response(readFileSync(file), {
      headers: headers({ "content-type": type, "content-security-policy": "sandbox; default-src 'none'", "content-disposition": type.startsWith("application/octet") ? "attachment" : "inline" }),
    });
  }

  const server: Server<undefined> = Bun.serve({
    hostname: host,
    port: opts.port ?? 7860,
    idleTimeout: 60,
    async fetch(req) {
      const url = new URL(req.url);
      if (!hostAllowed(guard, req)) return new Response("unexpected Host header\n", { status: 421, headers: headers({ "content-type": "text/plain" }) });
      if (!canRead(guard, req, url)) return new Response("this dashboard needs its token: open the URL printed by `skillopt ui`\n", { status: 401, headers: headers({ "content-type": "text/plain" }) });
      if (url.searchParams.has("token") && req.method === "GET") {
        url.searchParams.delete("token");
        const h = headers({ location: url.pathname + url.search });
        h.append("set-cookie", `${TOKEN_COOKIE}=${encodeURIComponent(token)}; Path=/; HttpOnly; SameSite=Strict`);
        return new Response(null, { status: 303, headers: h });
      }
      try {
        return await route(req, url);
      } catch (err) {
        const status = err instanceof HttpError ? err.status : 500;
        if (status === 500) log.withTag("ui").error(`${req.method} ${url.pathname}: ${errorMessage(err)}`);
        const msg = errorMessage(err);
        if (url.pathname.startsWith("/api/")) return json({ error: msg }, status);
        return html(page({ title: "Error", tab: "runs", token, pageId: "error", body: errorPage(msg) }), status);
      }
    },
  });
  const port = server.port ?? 0;
  guard.port = port;
  const shownHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${shownHost}:${port}`;
  return {
    url,
    tokenUrl: `${url}/?token=${token}`,
    token,
    port,
    launcher,
    async stop() {
      hub.close();
      await launcher.stopAll();
      await server.stop(true);
    },
  };
}
