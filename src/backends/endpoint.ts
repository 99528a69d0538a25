/** An endpoint URL fit for logs, cache keys and errors: no userinfo, no query, no fragment. */
export function sanitizeEndpoint(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return url.replace(/\?.*$/, "").replace(/\/\/[^@/]*@/, "//");
  }
}
