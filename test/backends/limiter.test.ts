import { describe, expect, test } from "bun:test";
import { Limiter } from "../../src/backends/limiter.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { ask, compatClient } from "./support.ts";

describe("Limiter", () => {
  test("runs at most `size` tasks at once, in FIFO order", async () => {
    const l = new Limiter(2);
    const order: number[] = [];
    const release: Array<() => void> = [];
    const tasks = [0, 1, 2, 3].map((i) =>
      l.run(
        () =>
          new Promise<void>((resolve) => {
            order.push(i);
            release.push(resolve);
          }),
      ),
    );
    await Bun.sleep(0);
    expect(order).toEqual([0, 1]);
    expect(l.queued).toBe(2);
    release.shift()!();
    await Bun.sleep(0);
    expect(order).toEqual([0, 1, 2]);
    while (release.length) release.shift()!();
    await Bun.sleep(0);
    release.shift()?.();
    await Promise.all(tasks);
    expect(l.maxRunning).toBe(2);
  });

  test("a waiting task can be aborted", async () => {
    const l = new Limiter(1);
    let done!: () => void;
    const first = l.run(() => new Promise<void>((r) => (done = r)));
    const ctl = new AbortController();
    const second = l.run(async () => "never", ctl.signal);
    ctl.abort(new Error("cancelled"));
    await expect(second).rejects.toThrow("cancelled");
    done();
    await first;
    expect(l.queued).toBe(0);
  });

  test("a 429 with Retry-After holds the endpoint's other slots too", async () => {
    await using server = await startFakeOpenAI();
    server.match(
      (r) => r.lastUserText === "a" && r.index === 0,
      { fault: "rate_limit", retryAfterMs: 120 },
      { times: 1 },
    );
    server.match((r) => r.lastUserText === "b", { text: "b", delayMs: 0 });
    server.match((r) => r.lastUserText === "a", "a");
    await using client = await compatClient(server.url, {}, { concurrency: { target: 4 } });
    const first = client.chat("target", ask("a"));
    await server.waitFor(1);
    await Bun.sleep(20);
    const t0 = performance.now();
    await client.chat("target", ask("b"));
    expect(performance.now() - t0).toBeGreaterThanOrEqual(60);
    await first;
  });
});
