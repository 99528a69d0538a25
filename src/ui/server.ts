import { existsSync, readFileSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import type { Server } from "bun";
import { renderReportParts } from "../report/index.ts";
import { closest, errorMessage, gatherParts, log } from "../lib/index.ts";
import { UI_CSS, UI_JS } from "./assets.ts";
import { LAUNCH_FIELDS, type LaunchRequest, listLaunchConfigs, validateLaunch } from "./launch-form.ts";
import { Launcher, selfCommand } from "./launcher.ts";
import {
  comparePage,
  errorPage,
  launchesHtml,
  launchPage,
  page,
  pageParts,
  runBodyParts,
  runPageParts,
  runsPage,
} from "./pages.ts";
import { listRuns, openRun, readRun, runDirOf } from "./run-index.ts";
import { BodyError, forbiddenSegment, MAX_BODY_BYTES, parseJsonBody } from "./request-body.ts";
import { BASE_HEADERS, Guard, PAGE_CSP, resolveInside } from "./security.ts";
import { createSleepPanel, type SleepPanel, type SleepVerb, sleepAction, sleepPage } from "./sleep-panel.ts";
import { RunWatchHub } from "./watch.ts";

interface UiOptions {
  root: string;
  host?: string;
  port?: number;
  /** A fixed, reusable sign-in token; by default each printed sign-in URL works once. */
  token?: string;
  /** Told the next sign-in URL each time the previous one was used (print it for the owner). */
  onLoginUrl?: (url: string) => void;
  /** Launches may run programs, read files outside cwd and set endpoints (`--allow-commands`). */
  allowCommands?: boolean;
  /** Most event streams open at once (default 64); more are answered 503. */
  maxStreams?: number;
  /** Working directory for launched runs and local configs. */
  cwd?: string;
  /** How to invoke skillopt for launched runs (defaults to this process's own command). */
  command?: string[];
  /** Extra environment for launched runs. */
  env?: Record<string, string | undefined>;
  /** Project whose Sleep nights the panel shows first (default: cwd). */
  sleepProject?: string;
  /** Every folder `skillopt ui` looked in for runs (no --root given), for the empty page to name. */
  looked?: string[];
  /** Replace the Sleep panel (tests); `null` turns it off. */
  sleep?: SleepPanel | null;
}

export interface UiServer {
  url: string;
  /** The current sign-in URL (it changes after each use unless the token is fixed). */
  readonly tokenUrl: string;
  /** The current sign-in token. */
  readonly token: string;
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
  return new Response(body, {
    status,
    headers: headers({ "content-type": "text/html; charset=utf-8", "content-security-policy": PAGE_CSP }),
  });
}

/**
 * An HTML page sent as it is rendered (about 64 KB at a time): a long run's page is megabytes and
 * its steps' details are read a page at a time, so it is never held whole. `close` runs when the
 * page is done, fails or the client goes away.
 */
function htmlParts(parts: Iterable<string>, close: () => void, csp = PAGE_CSP): Response {
  const it = gatherParts(parts);
  const encoder = new TextEncoder();
  let open = true;
  const done = () => {
    if (!open) return;
    open = false;
    close();
  };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      try {
        const next = it.next();
        if (next.done) {
          controller.close();
          done();
        } else controller.enqueue(encoder.encode(next.value));
      } catch (err) {
        done();
        log.withTag("ui").error(`rendering a page failed: ${errorMessage(err)}`);
        controller.error(err);
      }
    },
    cancel() {
      done();
    },
  });
  return new Response(body, {
    headers: headers({ "content-type": "text/html; charset=utf-8", "content-security-policy": csp }),
  });
}

function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), {
    status,
    headers: headers({ "content-type": "application/json; charset=utf-8" }),
  });
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

function sse(
  onOpen: (send: (event: string, data: unknown) => void) => () => void,
  signal: AbortSignal,
  onClose: () => void,
): Response {
  let cleanup: (() => void) | null = null;
  let closed = false;
  const done = () => {
    if (closed) return;
    closed = true;
    onClose();
  };
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
        done();
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
      cleanup = null;
      done();
    },
  });
  return new Response(stream, {
    headers: headers({ "content-type": "text/event-stream", "cache-control": "no-store", connection: "keep-alive" }),
  });
}

/** The request's JSON object; 400 for anything else, prototype keys included, at any depth. */
async function readBody(req: Request): Promise<Record<string, unknown>> {
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, `request body is larger than ${MAX_BODY_BYTES} bytes`);
  try {
    return parseJsonBody(await req.text());
  } catch (err) {
    if (err instanceof BodyError) throw new HttpError(400, err.message);
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

const LAUNCH_KEYS = ["config", "values", "extra"];
const LAUNCH_VALUE_KEYS = LAUNCH_FIELDS.map((f) => f.name);

/**
 * A launch names only fields the form has: one it does not know would be ignored silently (a
 * misspelt field launching with the config's value), so it is refused by name, as the CLI refuses
 * an unknown key. Free-form overrides go in `extra` (`section.key=value` lines).
 */
function refuseUnknownLaunchFields(body: Record<string, unknown>): void {
  const unknown = (name: string, known: string[], where: string): HttpError => {
    const guess = closest(name, known);
    return new HttpError(
      400,
      `unknown field "${where}${name}"${guess ? ` (did you mean "${where}${guess}"?)` : ""}; expected one of: ${known.map((k) => `${where}${k}`).join(", ")}`,
    );
  };
  for (const k of Object.keys(body)) if (!LAUNCH_KEYS.includes(k)) throw unknown(k, LAUNCH_KEYS, "");
  if (typeof body.values === "object" && body.values !== null)
    for (const k of Object.keys(body.values))
      if (!LAUNCH_VALUE_KEYS.includes(k)) throw unknown(k, LAUNCH_VALUE_KEYS, "values.");
}

function launchRequest(body: Record<string, unknown>): LaunchRequest {
  refuseUnknownLaunchFields(body);
  const values: Record<string, string> = Object.create(null) as Record<string, string>;
  if (typeof body.values === "object" && body.values !== null)
    for (const [k, v] of Object.entries(body.values as Record<string, unknown>)) {
      const bad = forbiddenSegment(k);
      if (bad) throw new HttpError(400, `values: the key "${bad}" is not allowed`);
      values[k] = typeof v === "string" ? v : String(v ?? "");
    }
  const extra = typeof body.extra === "string" ? body.extra : "";
  for (const line of extra.split("\n")) {
    const bad = forbiddenSegment(line.split("=")[0] ?? "");
    if (bad && !line.trim().startsWith("#")) throw new HttpError(400, `extra: the key "${bad}" is not allowed`);
  }
  return { config: typeof body.config === "string" ? body.config : "", values, extra };
}

function plain(text: string, status: number): Response {
  return new Response(`${text}\n`, { status, headers: headers({ "content-type": "text/plain; charset=utf-8" }) });
}

/** What the dashboard's routes share: the run root, the launcher, the guard, the live streams. */
interface RouteCtx {
  root: string;
  cwd: string;
  looked: string[] | undefined;
  guard: Guard;
  launcher: Launcher;
  sleep: SleepPanel | undefined;
  hub: RunWatchHub;
  policy: { allowCommands: boolean };
  stream: (onOpen: Parameters<typeof sse>[0], req: Request) => Response;
  status: (dir: string) => "running" | undefined;
  runOf: (rawId: string) => string;
}

async function route(ctx: RouteCtx, req: Request, url: URL): Promise<Response> {
  const { guard, root, status, runOf, cwd, launcher, policy, stream, sleep } = ctx;
  const path = url.pathname;
  const method = req.method;
  if (method !== "GET" && method !== "HEAD") {
    const refusal = guard.mutationRefusal(req);
    if (refusal) return json({ error: `forbidden: ${refusal}` }, 403);
  }
  if (method === "GET" && path === "/assets/app.js")
    return new Response(UI_JS, { headers: headers({ "content-type": "text/javascript; charset=utf-8" }) });
  if (method === "GET" && path === "/assets/style.css")
    return new Response(UI_CSS, { headers: headers({ "content-type": "text/css; charset=utf-8" }) });
  if (method === "GET" && path === "/")
    return html(
      page({ title: "Runs", tab: "runs", pageId: "runs", body: runsPage(listRuns(root, status), root, ctx.looked) }),
    );
  if (method === "GET" && path === "/api/runs") return json(listRuns(root, status));
  if (method === "GET" && path === "/compare") {
    const rows = listRuns(root, status);
    const a = url.searchParams.get("a") ?? undefined;
    const b = url.searchParams.get("b") ?? undefined;
    const ra = a ? readRun(runOf(a), status).run : null;
    const rb = b ? readRun(runOf(b), status).run : null;
    return html(page({ title: "Compare", tab: "compare", pageId: "compare", body: comparePage(rows, ra, rb, a, b) }));
  }
  if (method === "GET" && path === "/launch")
    return html(
      page({
        title: "Launch",
        tab: "launch",
        pageId: "launch",
        body: launchPage(listLaunchConfigs(cwd), launcher.list(), cwd),
      }),
    );
  if (method === "GET" && path === "/launches") return html(launchesHtml(launcher.list()));
  if (method === "GET" && path === "/api/launches") return json(launcher.list());
  if (method === "POST" && path === "/api/validate")
    return json(validateLaunch(launchRequest(await readBody(req)), cwd, policy));
  if (method === "POST" && path === "/api/launch") {
    const lr = launchRequest(await readBody(req));
    const v = validateLaunch(lr, cwd, policy);
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
      return stream((send) => {
        send("change", { status: info.status });
        return launcher.subscribe(id, (i, line) => send("change", { status: i.status, line: line ?? null }));
      }, req);
  }
  if (method === "GET" && path === "/sleep")
    return html(page({ title: "Sleep", tab: "sleep", pageId: "sleep", body: await sleepPage(sleep, url) }));
  const sm = /^\/api\/sleep\/(adopt|reject|rollback)$/.exec(path);
  if (sm && method === "POST") {
    const r = await sleepAction(sleep, sm[1] as SleepVerb, await readBody(req));
    return json(r.body, r.status);
  }
  const rm = /^\/runs\/([^/]+)(\/.*)?$/.exec(path);
  if (rm && method === "GET") {
    const r = runRoute(ctx, req, decode(rm[1]!), rm[2] ?? "");
    if (r) return r;
  }
  throw new HttpError(404, `not found: ${path}`);
}

/** The pages and files of one run (`/runs/<id>/…`), or undefined for a path it does not serve. */
function runRoute(ctx: RouteCtx, req: Request, id: string, rest: string): Response | undefined {
  const { status, launcher, stream, hub, runOf } = ctx;
  const dir = runOf(id);
  if (rest === "" || rest === "/") {
    const o = openRun(dir, status);
    return htmlParts(
      pageParts(
        { title: o.run.name, tab: "runs", pageId: "run" },
        runPageParts(o.run, id, launcher.byDir(dir), o.details),
      ),
      o.close,
    );
  }
  if (rest === "/body") {
    const o = openRun(dir, status);
    return htmlParts(runBodyParts(o.run, id, o.details), o.close);
  }
  if (rest === "/report.html") {
    const o = openRun(dir, status);
    return htmlParts(
      renderReportParts(o.run, { details: o.details }),
      o.close,
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:",
    );
  }
  if (rest === "/events") return stream((send) => hub.subscribe(dir, (version) => send("update", { version })), req);
  if (rest.startsWith("/files/")) return serveFile(dir, rest.slice("/files/".length));
  return undefined;
}

function serveFile(dir: string, encoded: string): Response {
  const rel = decode(encoded);
  const file = resolveInside(dir, rel);
  if (!file) throw new HttpError(403, "path leaves the run directory");
  if (!existsSync(file) || !statSync(file).isFile()) throw new HttpError(404, `no file ${rel}`);
  if (/state\.sqlite/.test(file)) throw new HttpError(403, "the run store is not served");
  const type = TEXT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
  return new Response(readFileSync(file), {
    headers: headers({
      "content-type": type,
      "content-security-policy": "sandbox; default-src 'none'",
      "content-disposition": type.startsWith("application/octet") ? "attachment" : "inline",
    }),
  });
}

/** Start the dashboard. Binds 127.0.0.1 unless told otherwise; port 0 picks a free port. */
export function startUi(opts: UiOptions): UiServer {
  const root = resolve(opts.root);
  const host = opts.host ?? "127.0.0.1";
  const cwd = opts.cwd ?? process.cwd();
  const hub = new RunWatchHub();
  const command = opts.command ?? selfCommand();
  const launcher = new Launcher({ root, command, cwd, env: opts.env ?? {} });
  const sleep =
    opts.sleep === null
      ? undefined
      : (opts.sleep ?? createSleepPanel({ project: opts.sleepProject ?? cwd, command, cwd, env: opts.env ?? {} }));
  const shownHost = host.includes(":") ? `[${host}]` : host;
  let url = "";
  const guard = new Guard({
    host,
    ...(opts.token !== undefined ? { fixedToken: opts.token } : {}),
    onRotate: (t) => opts.onLoginUrl?.(`${url}/?token=${t}`),
  });
  const policy = { allowCommands: opts.allowCommands ?? false };
  const maxStreams = opts.maxStreams ?? 64;
  let streams = 0;
  const stream = (onOpen: Parameters<typeof sse>[0], req: Request): Response => {
    if (streams >= maxStreams)
      return plain(`too many live streams open (${maxStreams}); close a dashboard tab and retry`, 503);
    streams += 1;
    return sse(onOpen, req.signal, () => {
      streams -= 1;
    });
  };
  const status = (dir: string) => {
    const s = launcher.statusOf(dir);
    return s === "running" ? "running" : undefined;
  };

  const runOf = (rawId: string) => {
    const dir = runDirOf(root, rawId);
    if (!dir) throw new HttpError(404, `no run "${rawId}" under ${root}`);
    return dir;
  };

  const ctx: RouteCtx = { root, cwd, looked: opts.looked, guard, launcher, sleep, hub, policy, stream, status, runOf };

  async function handle(req: Request): Promise<Response> {
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return plain("bad request", 400);
    }
    if (!guard.hostAllowed(req)) return plain("unexpected Host header", 421);
    if (guard.foreignSubresource(req)) return plain("refused: a request from another site", 403);
    if (url.searchParams.has("token") && req.method === "GET") {
      const session = guard.signIn(url.searchParams.get("token"));
      if (!session)
        return plain(
          "this sign-in link is wrong or was already used: `skillopt ui` prints a fresh one in its terminal",
          401,
        );
      url.searchParams.delete("token");
      const h = headers({ location: url.pathname + url.search });
      h.append("set-cookie", guard.sessionCookie(session));
      return new Response(null, { status: 303, headers: h });
    }
    if (!guard.hasSession(req))
      return plain("this dashboard needs you signed in: open the URL `skillopt ui` printed in its terminal", 401);
    try {
      return await route(ctx, req, url);
    } catch (err) {
      const status = err instanceof HttpError ? err.status : 500;
      if (status === 500) log.withTag("ui").error(`${req.method} ${url.pathname}: ${errorMessage(err)}`);
      const msg = errorMessage(err);
      if (url.pathname.startsWith("/api/")) return json({ error: msg }, status);
      return html(page({ title: "Error", tab: "runs", pageId: "error", body: errorPage(msg) }), status);
    }
  }

  const server: Server<undefined> = Bun.serve({
    hostname: host,
    port: opts.port ?? 7860,
    idleTimeout: 60,
    // Never Bun's development error page (it shows the working directory and source lines).
    development: false,
    fetch: handle,
    error(err) {
      log.withTag("ui").debug(`request failed: ${errorMessage(err)}`);
      return plain("bad request", 400);
    },
  });
  const port = server.port ?? 0;
  guard.port = port;
  url = `http://${shownHost}:${port}`;
  return {
    url,
    get tokenUrl() {
      return `${url}/?token=${guard.loginToken}`;
    },
    get token() {
      return guard.loginToken;
    },
    port,
    launcher,
    async stop() {
      hub.close();
      await launcher.stopAll();
      await server.stop(true);
    },
  };
}
