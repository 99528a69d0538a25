import { log } from "./log.ts";

// Where credentials may travel. See docs/backends.md ("Where credentials go").

/** Loopback hosts: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

const warnedPlainHttp = new Set<string>();

/**
 * Warn once per endpoint when a key would travel over plain http to a host other than loopback
 * (anyone on the path can read it). `what` names the credential and where it comes from.
 */
export function warnKeyOverPlainHttp(url: string, what: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return;
  }
  if (u.protocol !== "http:" || isLoopbackHost(u.hostname)) return;
  const key = `${u.origin}|${what}`;
  if (warnedPlainHttp.has(key)) return;
  warnedPlainHttp.add(key);
  log
    .withTag("credentials")
    .warn(
      `${what} is sent over plain http to ${u.host}, which is not loopback: anyone on the network path can read it; use an https endpoint`,
    );
}
