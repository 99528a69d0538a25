import { describe, expect, test } from "bun:test";
import {
  appendFileSync,
  closeSync,
  openSync,
  readdirSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join, resolve } from "node:path";
import {
  type Prefetch,
  type PrefetchOptions,
  type PrefetchRead,
  activePrefetch,
  looksCold,
  startPrefetch,
  stopPrefetch,
  wantPrefetch,
} from "../../../src/sleep/harvest/prefetch.ts";
import { readLines } from "../../../src/sleep/harvest/read-lines.ts";
import type { HarvestOptions } from "../../../src/sleep/harvest/index.ts";
import { tempDir } from "../../support/tmp.ts";
import { COPIES, fakeHome, harvestRows, harvestRun, widen } from "./support.ts";

/**
 * Reading ahead on the prefetch thread must be only a faster way to the same lines: the same lines
 * (and last-line offers), consumed offsets, byte counts and file heads as reading on the main
 * thread, and so the same digests, counters and parse-cache rows, whatever the slots' size and
 * whatever becomes of the thread.
 */

/**
 * Every read through the thread, with waits long enough that only a thread that really stopped
 * is given up on (the equalities hold either way; the counts of reads taken from the ring need it).
 */
const FORCED = { waitForThread: true, startWaitMs: 60_000, stallMs: 60_000 } as const;

const PREFETCH_RING = resolve(import.meta.dir, "../../../src/sleep/harvest/prefetch-ring.ts");

interface Seen {
  lines: string[];
  consumed: number;
  bytesRead: number;
  head: string | undefined;
}

/** Everything readLines reports; a last line is taken when it ends with "}" (a whole record). */
function collect(read: PrefetchRead): Seen | { error: string } {
  const lines: string[] = [];
  try {
    const r = readLines(read.path, read.from, read.size, (buf, s, e, last) => {
      const text =
        e - s > 256 ? `${e - s} bytes #${Bun.hash(buf.subarray(s, e)).toString(16)}` : buf.toString("utf8", s, e);
      lines.push(`${last ? "last " : ""}${text}`);
      return last ? buf[e - 1] === 125 : undefined;
    });
    return { lines, consumed: r.consumed, bytesRead: r.bytesRead, head: r.head?.toString("hex") };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

/** The reads made on the main thread alone, then through a prefetch (its counters and log given back). */
async function bothWays(
  reads: PrefetchRead[],
  opts: PrefetchOptions,
  between?: () => void,
): Promise<{ direct: unknown[]; ahead: unknown[]; prefetch: Prefetch; said: string[]; closed: string | undefined }> {
  between?.();
  const direct = reads.map(collect);
  const said: string[] = [];
  const prefetch = startPrefetch(reads, { ...opts, onBroken: (r) => said.push(r) });
  let ahead: unknown[] = [];
  let closed: string | undefined;
  try {
    ahead = reads.map(collect);
  } finally {
    closed = await stopPrefetch();
  }
  return { direct, ahead, prefetch, said, closed };
}

function write(path: string, text: string): PrefetchRead {
  writeFileSync(path, text);
  return { path, from: 0, size: Buffer.byteLength(text) };
}

/** Lines around every length near the slots' size, CRLF endings, empty lines and a carriage return at a slot edge. */
function mixed(seed: number, slot: number): string {
  const parts: string[] = [];
  for (let n = 0; n < 3 * slot + 7; n += 1 + ((n * 7 + seed) % 5)) {
    const body = `{"n":${n},"t":"${"x".repeat(Math.max(0, n - 14))}"}`;
    parts.push(n % 11 === 0 ? `${body}\r\n` : n % 13 === 0 ? `${body}\n\n` : `${body}\n`);
  }
  parts.push(`${"y".repeat(slot - 1)}\r\n`, `{"long":"${"z".repeat(10 * slot)}"}\n`);
  return parts.join("");
}

describe("reading ahead on the prefetch thread", () => {
  test("every line, offset, byte count and head is the main thread's own, across slot edges", async () => {
    using dir = tempDir("prefetch-");
    const slot = 64;
    const reads: PrefetchRead[] = [];
    for (let k = 0; k < 6; k++) reads.push(write(join(dir.path, `m${k}.jsonl`), mixed(k, slot)));
    // A last line without a newline, whole (taken) and cut short (left for next time).
    reads.push(write(join(dir.path, "last-whole.jsonl"), `${mixed(7, slot)}{"end":"${"e".repeat(150)}"}`));
    reads.push(write(join(dir.path, "last-cut.jsonl"), `${mixed(8, slot)}{"end":"${"e".repeat(150)}`));
    // An incremental read from a line start past the head, and one whose last line is cut short.
    const inc = write(join(dir.path, "inc.jsonl"), mixed(9, slot));
    reads.push({ ...inc, from: 200 + mixed(9, slot).slice(200).indexOf("\n") + 1 });
    reads.push(write(join(dir.path, "one.jsonl"), '{"only":1}\n'));
    const { direct, ahead, prefetch, said, closed } = await bothWays(reads, {
      slots: 3,
      slotBytes: slot,
      ...FORCED,
    });
    expect((direct[0] as Seen).lines.length).toBeGreaterThan(40);
    expect((direct[6] as Seen).lines.at(-1)).toStartWith("last ");
    expect((direct[7] as Seen).consumed).toBeLessThan(reads[7]!.size);
    expect(ahead).toEqual(direct);
    expect(prefetch.counts).toMatchObject({ ahead: reads.length, here: 0 });
    expect(said).toEqual([]);
    expect(closed).toBeUndefined();
  });

  // Own timeout: it writes and reads lines of 64 MiB and more (about 1 s idle).
  test("a line longer than the read buffer grows it the same way, and a huge line is skipped the same way", async () => {
    using dir = tempDir("prefetch-");
    const reads = [write(join(dir.path, "big.jsonl"), `{"a":1}\n{"big":"${"b".repeat(3 * 1024 * 1024)}"}\n{"b":2}\n`)];
    // Lines of 64 MiB and more are skipped unparsed; one of exactly 64 MiB that ends the read is still offered.
    const MiB64 = 64 * 1024 * 1024;
    const huge = (name: string, parts: (string | number)[]): PrefetchRead => {
      const path = join(dir.path, name);
      const fd = openSync(path, "w");
      let size = 0;
      for (const p of parts) size += writeSync(fd, typeof p === "string" ? Buffer.from(p) : Buffer.alloc(p, 0x61));
      closeSync(fd);
      return { path, from: 0, size };
    };
    reads.push(huge("over.jsonl", ['{"a":1}\n', MiB64 + 5, '\n{"b":2}\n']));
    reads.push(huge("exact.jsonl", ['{"a":1}\n', MiB64 - 1, "}"]));
    const { direct, ahead, prefetch } = await bothWays(reads, {
      slots: 4,
      slotBytes: 1024 * 1024,
      ...FORCED,
    });
    expect((direct[1] as Seen).lines).toEqual(['{"a":1}', '{"b":2}']);
    expect((direct[2] as Seen).lines).toHaveLength(2);
    expect((direct[2] as Seen).consumed).toBe(reads[2]!.size);
    expect(ahead).toEqual(direct);
    expect(prefetch.counts.ahead).toBe(3);
    for (const r of reads) rmSync(r.path);
  }, 30_000);

  test("files that shrink, grow or vanish after discovery read as they do on the main thread", async () => {
    using dir = tempDir("prefetch-");
    const text = mixed(3, 64);
    const shrunk = write(join(dir.path, "shrunk.jsonl"), text);
    const grown = write(join(dir.path, "grown.jsonl"), text);
    const gone = write(join(dir.path, "gone.jsonl"), text);
    const kept = write(join(dir.path, "kept.jsonl"), text);
    // Planned with their discovered sizes, changed before either way reads them.
    const change = () => {
      truncateSync(shrunk.path, Math.floor(shrunk.size / 2));
      appendFileSync(grown.path, '{"late":"appended after discovery"}\n');
      rmSync(gone.path, { force: true });
    };
    const { direct, ahead } = await bothWays(
      [shrunk, grown, gone, kept],
      { slots: 2, slotBytes: 128, ...FORCED },
      change,
    );
    expect((direct[0] as Seen).bytesRead).toBe(Math.floor(shrunk.size / 2));
    expect((direct[1] as Seen).lines.join("\n")).not.toContain("late");
    expect((direct[2] as { error: string }).error).toContain("ENOENT");
    expect(ahead).toEqual(direct);
  });

  test("a read asked otherwise than planned, and planned reads never asked for, leave the others intact", async () => {
    using dir = tempDir("prefetch-");
    const files = [0, 1, 2, 3, 4].map((k) => write(join(dir.path, `f${k}.jsonl`), mixed(k, 64)));
    const planned = files.map((f, k) => (k === 1 ? { ...f, from: 10 } : f));
    const prefetch = startPrefetch(planned, { slots: 2, slotBytes: 64, ...FORCED });
    let asked: unknown[];
    try {
      // f1 is asked from 0 (planned from 10), f2 and f3 are never asked for.
      asked = [files[0]!, files[1]!, files[4]!].map(collect);
    } finally {
      await stopPrefetch();
    }
    expect(asked).toEqual([files[0]!, files[1]!, files[4]!].map(collect));
    expect(prefetch.counts).toMatchObject({ ahead: 2, here: 1 });
  });

  test("a thread that cannot start leaves every read to the main thread, and says why", async () => {
    using dir = tempDir("prefetch-");
    const reads = [0, 1, 2].map((k) => write(join(dir.path, `f${k}.jsonl`), mixed(k, 64)));
    const broken = join(dir.path, "broken-prefetch.ts");
    writeFileSync(broken, 'throw new Error("no prefetch here");\n');
    const { direct, ahead, prefetch, closed } = await bothWays(reads, {
      workerUrl: new URL(`file://${broken}`),
      // Long enough for its load error to arrive, however busy the machine: it ends the wait.
      stallMs: 60_000,
    });
    expect(ahead).toEqual(direct);
    expect(prefetch.counts).toMatchObject({ ahead: 0, here: 3 });
    expect(closed).toContain("could not start");
    expect(closed).toContain("no prefetch here");
  });

  test("a thread that fails part-way hands the rest of its reads back, and says why", async () => {
    using dir = tempDir("prefetch-");
    const reads = [0, 1, 2, 3].map((k) => write(join(dir.path, `f${k}.jsonl`), mixed(k, 64)));
    const failing = join(dir.path, "failing-prefetch.ts");
    writeFileSync(
      failing,
      `import { closeSync, openSync, readSync } from "node:fs";
import { runPrefetch } from ${JSON.stringify(PREFETCH_RING)};
let calls = 0;
const failingRead = (...a) => { if (++calls > 5) throw new Error("disk gremlin"); return readSync(...a); };
self.onmessage = (e) => runPrefetch(e.data, { openSync, closeSync, readSync: failingRead });
`,
    );
    const { direct, ahead, prefetch, said } = await bothWays(reads, {
      slots: 2,
      slotBytes: 64,
      ...FORCED,
      workerUrl: new URL(`file://${failing}`),
    });
    expect(ahead).toEqual(direct);
    expect(prefetch.counts.ahead).toBeGreaterThanOrEqual(1);
    expect(said).toEqual(["the prefetch thread failed: disk gremlin; reading on the main thread"]);
  });

  test("a thread that stops without a word is given up on, and the reads are the same", async () => {
    using dir = tempDir("prefetch-");
    const reads = [0, 1].map((k) => write(join(dir.path, `f${k}.jsonl`), mixed(k, 64)));
    // Starts (as the real thread does) and then never reads anything.
    const silent = join(dir.path, "silent-prefetch.ts");
    writeFileSync(
      silent,
      "self.onmessage = (e) => { const c = new Int32Array(e.data.sab, 0, 8); Atomics.store(c, 3, 1); Atomics.notify(c, 3); };\n",
    );
    // It never publishes a slot, whatever the wait: a short one keeps the test short.
    const { direct, ahead, said } = await bothWays(reads, {
      ...FORCED,
      stallMs: 300,
      workerUrl: new URL(`file://${silent}`),
    });
    expect(ahead).toEqual(direct);
    expect(said).toEqual(["the prefetch thread stopped moving for 0.3 s; reading on the main thread"]);
  });

  test("auto reads ahead only past some megabytes with a core to spare", () => {
    const MB = 1024 * 1024;
    expect(wantPrefetch("auto", 0, 8, 0)).toBe(false);
    expect(wantPrefetch("auto", MB, 8, 0)).toBe(false);
    expect(wantPrefetch("auto", 256 * MB, 8, 0.5)).toBe(true);
    expect(wantPrefetch("auto", 256 * MB, 2, 1.5)).toBe(true);
    expect(wantPrefetch("auto", 256 * MB, 2, 1.6)).toBe(false);
    expect(wantPrefetch("auto", 256 * MB, 1, 0)).toBe(false);
    // On a busy machine, only files that look absent from the page cache; asked only then.
    const asked = () => {
      throw new Error("not asked with a core to spare");
    };
    expect(wantPrefetch("auto", 256 * MB, 2, 0.5, asked)).toBe(true);
    expect(wantPrefetch("auto", 256 * MB, 2, 3, () => true)).toBe(true);
    expect(wantPrefetch("auto", 256 * MB, 2, 3, () => false)).toBe(false);
    expect(wantPrefetch("auto", MB, 2, 3, () => true)).toBe(false);
    expect(wantPrefetch(true, 10, 1, 9)).toBe(true);
    expect(wantPrefetch(false, 1024 * MB, 8, 0)).toBe(false);
  });
});

test("the page-cache probe says nothing about fewer than three reads or about files that vanished", () => {
  using dir = tempDir("prefetch-");
  const reads = [0, 1, 2].map((k) => write(join(dir.path, `f${k}.jsonl`), mixed(k, 64)));
  expect(looksCold(reads.slice(0, 2))).toBe(false);
  rmSync(reads[1]!.path);
  expect(looksCold(reads)).toBe(false);
});

describe("a harvest read ahead", () => {
  test("gives the same digests, counters and parse cache as one read on the main thread, first run, after appends and with a limit", async () => {
    using h = fakeHome();
    widen(h);
    // A session with a tool output longer than a slot: its line is carried across slots.
    const claudeDir = join(h.locations.claudeHome, "projects", "-work-demo");
    const big = readdirSync(claudeDir).find((f) => f.startsWith("c0ffee05"))!;
    const output = Array.from({ length: 120_000 }, (_, i) => `line ${i}: "quoted" \\ path\tand “text”`).join("\n");
    appendFileSync(
      join(claudeDir, big),
      `${JSON.stringify({ type: "user", cwd: "/work/demo", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t9", content: output }] }, timestamp: "2026-12-01T08:59:00.000Z" })}\r\n` +
        `${JSON.stringify({ type: "user", cwd: "/work/demo", message: { role: "user", content: "that is wrong, the offset is still off" }, timestamp: "2026-12-01T09:00:00.000Z" })}\n`,
    );
    using dir = tempDir("prefetch-");
    const used: { prefetch?: Prefetch } = {};
    const ahead: Partial<HarvestOptions> = {
      prefetch: true,
      onProgress: () => {
        used.prefetch ??= activePrefetch();
      },
    };
    const runBoth = async (name: string, extra: object = {}) => {
      const main = await harvestRun(h, join(dir.path, `${name}-main.sqlite`), { prefetch: false, ...extra });
      used.prefetch = undefined;
      const read = await harvestRun(h, join(dir.path, `${name}-ahead.sqlite`), { ...ahead, ...extra });
      expect((used.prefetch as Prefetch | undefined)?.counts.ahead).toBeGreaterThan(0);
      expect(read).toEqual(main);
      expect(harvestRows(join(dir.path, `${name}-ahead.sqlite`))).toEqual(
        harvestRows(join(dir.path, `${name}-main.sqlite`)),
      );
      return main;
    };
    const first = await runBoth("all");
    expect(first.digests.length).toBeGreaterThan(3 * COPIES);
    expect(first.digests.some((d) => d.feedback_signals.some((s) => s.includes("wrong")))).toBe(true);
    const limited = await runBoth("limit", { limit: 5 });
    expect(limited.digests).toHaveLength(5);

    // Appends are read from the prior offset (a planned read from there).
    for (const f of readdirSync(claudeDir).filter((f) => f.startsWith("c0ffee0"))) {
      appendFileSync(
        join(claudeDir, f),
        `${JSON.stringify({ type: "user", cwd: "/work/demo", message: { role: "user", content: "No, that is still wrong: keep the offset." }, timestamp: "2026-12-01T09:30:00.000Z" })}\n`,
      );
    }
    const second = await runBoth("all");
    expect(second.digests.length).toBeGreaterThanOrEqual(10);
  });
});
