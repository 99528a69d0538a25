import { createServer } from "node:net";

/** A loopback port that was just bound and closed, so connecting to it is refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A base URL on a closed loopback port (connection refused). */
export async function refusedUrl(path = "/v1"): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}${path}`;
}
