import { describe, expect, test } from "bun:test";
import { appendFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ReadPool, type ReadReply, type ReadRequest, readThreads } from "../../../src/sleep/harvest/read-pool.ts";
import { makeLexicon } from "../../../src/sleep/harvest/text.ts";
import { SOURCES } from "../../../src/sleep/harvest/sources.ts";
import { tempDir } from "../../support/tmp.ts";
import { COPIES, fakeHome, harvestRows as rows, harvestRun as run, widen } from "./support.ts";

/**
 * Reading on worker threads must be only a faster way to the same harvest: the same digests in
 * the same order, the same counters, the same parse-cache rows, whatever the number of workers.
 */

describe("reading sessions on worker threads", () => {
  test("0, 1 and 3 workers give the same digests, counters and parse cache, first run and after appends", async () => {
    using h = fakeHome();
    widen(h);
    using dir = tempDir("read-pool-");
    const threads = [0, 1, 3];
    const firsts = await Promise.all(threads.map((t) => run(h, join(dir.path, `t${t}.sqlite`), { readThreads: t })));
    expect(firsts[0]!.digests.length).toBeGreaterThan(3 * COPIES);
    for (const r of firsts.slice(1)) expect(r).toEqual(firsts[0]!);
    for (const t of threads.slice(1))
      expect(rows(join(dir.path, `t${t}.sqlite`))).toEqual(rows(join(dir.path, "t0.sqlite")));

    // Appends are read from the prior offset with the prior state (sent to the worker and back).
    const claudeDir = join(h.locations.claudeHome, "projects", "-work-demo");
    const grown = readdirSync(claudeDir).filter((f) => f.startsWith("c0ffee0"));
    for (const f of grown) {
      appendFileSync(
        join(claudeDir, f),
        `${JSON.stringify({ type: "user", cwd: "/work/demo", message: { role: "user", content: "No, that is still wrong: keep the offset." }, timestamp: "2026-12-01T09:00:00.000Z" })}\n`,
      );
    }
    const seconds = [];
    for (const t of threads) seconds.push(await run(h, join(dir.path, `t${t}.sqlite`), { readThreads: t }));
    // Each grown copy of a delivered session comes back (the copies of a filtered one stay filtered).
    expect(seconds[0]!.digests.length).toBeGreaterThanOrEqual(10);
    for (const d of seconds[0]!.digests) expect(d.session_id).toStartWith("c0ffee0");
    expect(seconds[0]!.digests[0]!.feedback_signals).toContain("neg:still wrong");
    for (const r of seconds.slice(1)) expect(r).toEqual(seconds[0]!);
    for (const t of threads.slice(1))
      expect(rows(join(dir.path, `t${t}.sqlite`))).toEqual(rows(join(dir.path, "t0.sqlite")));
  });

  test("a limit stops at the same sessions with the same counters", async () => {
    using h = fakeHome();
    widen(h);
    using dir = tempDir("read-pool-");
    const inline = await run(h, join(dir.path, "a.sqlite"), { readThreads: 0, limit: 5 });
    const pooled = await run(h, join(dir.path, "b.sqlite"), { readThreads: 2, limit: 5 });
    expect(inline.digests).toHaveLength(5);
    expect(pooled).toEqual(inline);
    expect(rows(join(dir.path, "b.sqlite"))).toEqual(rows(join(dir.path, "a.sqlite")));
  });

  test("a read error comes back from the worker as the reader's own message", async () => {
    using dir = tempDir("read-pool-");
    const ctx = { locations: {}, env: {}, platform: process.platform, scope: "all" as const, invokedProject: "" };
    const here = (req: ReadRequest): ReadReply => {
      try {
        return { outcome: SOURCES[req.source].read(req.c, req.prior, { ...ctx, lex: makeLexicon({}) }) };
      } catch (err) {
        return { error: (err as Error).message };
      }
    };
    const missing = join(dir.path, "gone.jsonl");
    const c = { key: missing, path: missing, sessionId: "gone", mtimeMs: 0, size: 10, revision: 10, project: "" };
    const pool = new ReadPool(1, ctx, here, () => {});
    try {
      // Two jobs: the first goes to the worker, the second is read here while the first is away.
      const a = pool.submit({ source: "claude", c, prior: undefined });
      const b = pool.submit({ source: "codex", c: { ...c, key: `codex:${c.sessionId}` }, prior: undefined });
      const replies = [await pool.result(a), await pool.result(b)];
      for (const r of replies) {
        expect(r).toEqual(here({ source: "claude", c, prior: undefined }));
        expect((r as { error: string }).error).toContain("ENOENT");
      }
    } finally {
      pool.close();
    }
  });

  test("a worker that fails hands its reads back to the main thread", async () => {
    using dir = tempDir("read-pool-");
    const session = join(dir.path, "s.jsonl");
    writeFileSync(
      session,
      `${JSON.stringify({ type: "user", cwd: "/work/demo", message: { role: "user", content: "add a retry to the upload" }, timestamp: "2026-12-01T09:00:00.000Z" })}\n`,
    );
    const broken = join(dir.path, "broken-worker.ts");
    writeFileSync(
      broken,
      'self.onmessage = (e) => { if (e.data.kind === "read") throw new Error("worker crashed"); };\n',
    );
    const ctx = { locations: {}, env: {}, platform: process.platform, scope: "all" as const, invokedProject: "" };
    const readHere = (req: ReadRequest): ReadReply => ({
      outcome: SOURCES[req.source].read(req.c, req.prior, { ...ctx, lex: makeLexicon({}) }),
    });
    const reasons: string[] = [];
    const c = { key: session, path: session, sessionId: "s", mtimeMs: 0, size: 0, revision: 0, project: "" };
    c.size = c.revision = Bun.file(session).size;
    const pool = new ReadPool(2, ctx, readHere, (r) => reasons.push(r), new URL(`file://${broken}`));
    try {
      const ids = [1, 2, 3, 4, 5].map(() => pool.submit({ source: "claude", c, prior: undefined }));
      const replies = [];
      for (const id of ids) replies.push(await pool.result(id));
      const expected = readHere({ source: "claude", c, prior: undefined });
      for (const r of replies) expect(r).toEqual(expected);
      expect(
        (expected as { outcome: { state: { digest: { user_prompts: string[] } } } }).outcome.state.digest.user_prompts,
      ).toEqual(["add a retry to the upload"]);
      expect(reasons).toHaveLength(1);
      expect(reasons[0]).toContain("worker crashed");
    } finally {
      pool.close();
    }
  });

  test("auto starts workers only past half a gigabyte and never more than the other cores", () => {
    expect(readThreads("auto", 1024 * 1024, 40)).toBe(0);
    expect(readThreads("auto", 300 * 1024 * 1024, 400)).toBe(0);
    expect(readThreads(0, 512 * 1024 * 1024, 40)).toBe(0);
    expect(readThreads(3, 10, 2)).toBe(2);
    expect(readThreads(2, 10, 0)).toBe(0);
    const big = readThreads("auto", 2048 * 1024 * 1024, 400);
    expect(big).toBeLessThanOrEqual(Math.max(0, require("node:os").availableParallelism() - 1));
    expect(big).toBeLessThanOrEqual(4);
  });
});
