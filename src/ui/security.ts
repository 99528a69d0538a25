import { timingSafeEqual } from "node:crypto";
import { randomName, resolveInside } from "../lib/index.ts";

export { resolveInside };

/** Hosts that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "[::1]" || /^127\./.test(host);
}

function tokensEqual(a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** At most this many signed-in browsers at once; the oldest session is dropped beyond it. */
const MAX_SESSIONS = 32;

/**
 * Who may talk to the dashboard. Every request (pages, API, streams, assets) needs a session
 * cookie, and the only way to get one is the sign-in URL printed to the owner's terminal. The
 * sign-in token in that URL works once (a fresh URL is announced after each use) unless the owner
 * fixed it with `--token`. The cookie is HttpOnly and SameSite=Strict, holds a random session id
 * (never the sign-in token), and pages carry no secret a script could reuse.
 */
export class Guard {
  /** The current sign-in token. */
  private login: string;
  private readonly sessions: string[] = [];
  port = 0;

  constructor(
    readonly opts: {
      /** The host the server is bound to (its name is accepted in Host headers). */
      host: string;
      /** A fixed, reusable sign-in token (`--token`); otherwise each sign-in token works once. */
      fixedToken?: string;
      /** Told the new sign-in URL's token whenever the previous one was used. */
      onRotate?: (token: string) => void;
    },
  ) {
    this.login = opts.fixedToken ?? randomName(24);
  }

  get loginToken(): string {
    return this.login;
  }

  get loopback(): boolean {
    return isLoopbackHost(this.opts.host);
  }

  /** The cookie name carries the port: browsers share cookies between the ports of one host. */
  get cookieName(): string {
    return `skillopt_session_${this.port}`;
  }

  /**
   * Exchange a sign-in token for a new session id; null when the token is wrong. A one-time token
   * is replaced at once, so the URL left in a browser history or on a screen is useless.
   */
  signIn(token: string | null): string | null {
    if (!tokensEqual(token, this.login)) return null;
    if (this.opts.fixedToken === undefined) {
      this.login = randomName(24);
      this.opts.onRotate?.(this.login);
    }
    const session = randomName(32);
    this.sessions.push(session);
    if (this.sessions.length > MAX_SESSIONS) this.sessions.splice(0, this.sessions.length - MAX_SESSIONS);
    return session;
  }

  sessionCookie(session: string): string {
    return `${this.cookieName}=${session}; Path=/; HttpOnly; SameSite=Strict`;
  }

  /** Does the request carry a live session cookie? */
  hasSession(req: Request): boolean {
    const raw = req.headers.get("cookie") ?? "";
    for (const part of raw.split(";")) {
      const eq = part.indexOf("=");
      if (eq < 0 || part.slice(0, eq).trim() !== this.cookieName) continue;
      const value = part.slice(eq + 1).trim();
      if (this.sessions.some((s) => tokensEqual(value, s))) return true;
    }
    return false;
  }

  /**
   * The Host header must name this server (the bound address, a loopback name, and the port): a
   * DNS-rebinding page (evil.example resolving to 127.0.0.1) is refused before anything else.
   * Off loopback (bound to 0.0.0.0 or a LAN address) any Host is accepted; the session still rules.
   */
  hostAllowed(req: Request): boolean {
    if (!this.loopback) return true;
    const host = (req.headers.get("host") ?? "").toLowerCase();
    const bound = this.opts.host.toLowerCase();
    const names = new Set([
      "127.0.0.1",
      "localhost",
      "[::1]",
      bound.includes(":") && !bound.startsWith("[") ? `[${bound}]` : bound,
    ]);
    return [...names].some((n) => host === `${n}:${this.port}`);
  }

  /**
   * A request sent by another site's page (`Sec-Fetch-Site: cross-site`, or `same-site`, which is
   * what a page on another port of this host is) may only be a top-level navigation: it cannot
   * use the owner's cookie to load scripts, fetch data or hold streams open.
   */
  foreignSubresource(req: Request): boolean {
    const site = req.headers.get("sec-fetch-site");
    if (site === null || site === "same-origin" || site === "none") return false;
    return !(req.method === "GET" && req.headers.get("sec-fetch-mode") === "navigate");
  }

  /**
   * A request that changes anything must carry the session cookie (checked before) and come from
   * our own origin: a page on another port of this host is same-site, so SameSite alone does not
   * stop its forms. Scripts without a browser (curl with the cookie) send no Origin and pass.
   */
  mutationRefusal(req: Request): string | null {
    const origin = req.headers.get("origin");
    const host = req.headers.get("host") ?? "";
    if (origin !== null && origin !== `http://${host}`) return `cross-origin request from ${origin}`;
    const site = req.headers.get("sec-fetch-site");
    if (site !== null && site !== "same-origin" && site !== "none") return `cross-site request (${site})`;
    const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (req.method === "POST" && type !== "" && type !== "application/json")
      return `content-type ${type}: send application/json`;
    return null;
  }
}

/** Headers every response carries. */
export const BASE_HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; " +
  "form-action 'self'";
