import { timingSafeEqual } from "node:crypto";
import { realpathSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";

/** Hosts that only this machine can reach. */
export function isLoopbackHost(host: string): boolean {
  return host === "127.0.0.1" || host === "localhost" || host === "::1" || host === "[::1]" || /^127\./.test(host);
}

export function generateToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Buffer.from(bytes).toString("base64url");
}

export function tokensEqual(a: string | null | undefined, b: string): boolean {
  if (!a) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface Guard {
  token: string;
  /** Bound to a loopback address: reads need no token, but Host must be a loopback name. */
  loopback: boolean;
  port: number;
}

export const TOKEN_HEADER = "x-skillopt-token";
export const TOKEN_COOKIE = "skillopt_token";

function cookieToken(req: Request): string | null {
  const raw = req.headers.get("cookie") ?? "";
  for (const part of raw.split(";")) {
    const [k, ...rest] = part.trim().split("=");
    if (k === TOKEN_COOKIE) return decodeURIComponent(rest.join("="));
  }
  return null;
}

/**
 * On loopback, the Host header must name this machine and port: a DNS-rebinding page (evil.example
 * resolving to 127.0.0.1) then cannot read anything, token included.
 */
export function hostAllowed(g: Guard, req: Request): boolean {
  if (!g.loopback) return true;
  const host = (req.headers.get("host") ?? "").toLowerCase();
  return [`127.0.0.1:${g.port}`, `localhost:${g.port}`, `[::1]:${g.port}`].includes(host);
}

/** May this request read pages? Loopback: yes; other hosts: token by header, cookie or query. */
export function canRead(g: Guard, req: Request, url: URL): boolean {
  if (g.loopback) return true;
  return (
    tokensEqual(req.headers.get(TOKEN_HEADER), g.token) ||
    tokensEqual(cookieToken(req), g.token) ||
    tokensEqual(url.searchParams.get("token"), g.token)
  );
}

/**
 * A request that changes anything must carry the token in a header (never only a cookie, which a
 * browser attaches to cross-site requests) and come from our own origin.
 */
export function mutationRefusal(g: Guard, req: Request): string | null {
  if (!tokensEqual(req.headers.get(TOKEN_HEADER), g.token)) return "missing or wrong token";
  const origin = req.headers.get("origin");
  const host = req.headers.get("host") ?? "";
  if (origin !== null && origin !== `http://${host}`) return `cross-origin request from ${origin}`;
  const site = req.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return `cross-site request (${site})`;
  return null;
}

/**
 * Resolve `rel` (already URL-decoded) inside `root`; null when it would leave it, by `..`, an
 * absolute path, a NUL byte or a symlink pointing outside.
 */
export function resolveInside(root: string, rel: string): string | null {
  if (rel.includes("\0") || isAbsolute(rel) || /^[a-zA-Z]:/.test(rel) || rel.includes("\\")) return null;
  const rootAbs = resolve(root);
  const target = resolve(rootAbs, rel);
  const r = relative(rootAbs, target);
  if (r.startsWith("..") || isAbsolute(r)) return null;
  try {
    const realRoot = realpathSync(rootAbs);
    const realTarget = realpathSync(target);
    const rr = relative(realRoot, realTarget);
    if (rr.startsWith(`..${sep}`) || rr === ".." || isAbsolute(rr)) return null;
    return realTarget;
  } catch {
    return target;
  }
}

/** Headers every response carries. */
export const BASE_HEADERS: Record<string, string> = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export const PAGE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'";
