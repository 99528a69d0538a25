import { connect } from "node:net";

/** Send one raw HTTP/1.1 request (the path exactly as given: no URL normalisation). */
export function rawRequest(
  port: number,
  path: string,
  opts: { method?: string; host?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, "127.0.0.1");
    let data = "";
    sock.setEncoding("utf8");
    sock.on("data", (d) => {
      data += d;
    });
    sock.on("error", reject);
    sock.on("end", () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf("\r\n\r\n") + 4) });
    });
    const extra = Object.entries(opts.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    sock.write(
      `${opts.method ?? "GET"} ${path} HTTP/1.1\r\nHost: ${opts.host ?? `127.0.0.1:${port}`}\r\n${extra}Connection: close\r\n\r\n`,
    );
  });
}

/** Sign in as the owner would (open the printed URL); returns the headers of a signed-in same-origin request. */
export async function signIn(ui: { tokenUrl: string; url: string }): Promise<{ cookie: string; origin: string }> {
  const r = await fetch(ui.tokenUrl, { redirect: "manual" });
  if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0]!;
  return { cookie, origin: ui.url };
}
