// Model-layer throughput: N calls through createModelClient against the fake OpenAI server with a
// fixed latency and a concurrency bound, with and without injected 429/500 faults.
// The fake provider runs in a child process (bench/models.ts --serve), as a real provider would.
// Run: bun run bench/models.ts [--n 500] [--latency 50] [--concurrency 16] [--fault-rate 0.1] [--runs 3]
// Each scenario runs --runs times after an untimed warm-up (JIT, SDK, sqlite); the median is the
// figure, min and max show the noise of a shared machine (see the load average printed with it).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createModelClient } from "../src/backends/index.ts";
import { type FakeReply, startFakeOpenAI } from "../test/support/fake-openai.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "500" },
    latency: { type: "string", default: "50" },
    concurrency: { type: "string", default: "16" },
    "fault-rate": { type: "string", default: "0.1" },
    runs: { type: "string", default: "3" },
    serve: { type: "boolean", default: false },
  },
});
const N = Number(values.n);
const LATENCY = Number(values.latency);
const BOUND = Number(values.concurrency);
const FAULT_RATE = Number(values["fault-rate"]);
const RUNS = Math.max(1, Number(values.runs));

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

interface Row {
  scenario: string;
  completed: number;
  failed: number;
  wallMs: number;
  idealMs: number;
  ratio: number;
  maxInFlight: number;
  requests: number;
  faults: number;
  duplicatePaid: number;
}

interface ServerStats {
  maxInFlight: number;
  requests: number;
  faults: number;
  duplicatePaid: number;
}

/**
 * `--serve`: the fake provider, in its own process like a real remote one, so its CPU does not
 * share the layer's event loop. Prints its URL; GET /stats and POST /reset drive it.
 */
async function serve(faultRate: number): Promise<void> {
  const rand = lcg(42);
  const okPerPrompt = new Map<string, number>();
  let faults = 0;
  const server = await startFakeOpenAI({
    latencyMs: LATENCY,
    reply: (req): FakeReply => {
      if (rand() < faultRate) {
        faults++;
        return faults % 2 === 0 ? { fault: "rate_limit", retryAfterMs: LATENCY } : { fault: "status", status: 500 };
      }
      okPerPrompt.set(req.lastUserText, (okPerPrompt.get(req.lastUserText) ?? 0) + 1);
      return { text: `answer to ${req.lastUserText}`, usage: { prompt_tokens: 50, completion_tokens: 10 } };
    },
    routes: {
      "GET /stats": () =>
        Response.json({
          maxInFlight: server.maxInFlight,
          requests: server.requests.length,
          faults,
          duplicatePaid: [...okPerPrompt.values()].reduce((n, c) => n + Math.max(0, c - 1), 0),
        } satisfies ServerStats),
      "POST /reset": () => {
        okPerPrompt.clear();
        server.resetCounters();
        faults = 0;
        return new Response("ok");
      },
    },
  });
  process.stdout.write(`${server.url}\n`);
  await new Response(Bun.stdin.stream()).text();
  await server.close();
}

async function scenario(name: string, faultRate: number): Promise<Row> {
  const child = Bun.spawn(
    [process.execPath, import.meta.path, "--serve", "--latency", String(LATENCY), "--fault-rate", String(faultRate)],
    {
      stdin: "pipe",
      stdout: "pipe",
      stderr: "inherit",
    },
  );
  const reader = child.stdout.getReader();
  let head = "";
  while (!head.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the fake provider exited before printing its URL");
    head += new TextDecoder().decode(value);
  }
  const url = head.trim();
  const origin = url.replace(/\/v1$/, "");
  const cacheDir = mkdtempSync(join(tmpdir(), "skillopt-bench-"));
  const client = await createModelClient(
    {
      model: {
        backend: "openai_compatible",
        target: "gpt-4o-mini",
        openai_compatible_base_url: url,
        openai_compatible_api_key: "bench",
      },
    },
    { cacheDir, concurrency: { target: BOUND }, retry: { baseDelayMs: LATENCY, random: lcg(7) } },
  );
  await Promise.all(
    Array.from({ length: BOUND }, (_, i) =>
      client.chat("target", { stage: "warmup", messages: [{ role: "user", content: `warm-up ${i}` }] }),
    ),
  );
  await fetch(`${origin}/reset`, { method: "POST" });
  const t0 = performance.now();
  const results = await Promise.allSettled(
    Array.from({ length: N }, (_, i) =>
      client.chat("target", { stage: "rollout", messages: [{ role: "user", content: `task ${i}` }] }),
    ),
  );
  const wallMs = performance.now() - t0;
  const stats = (await (await fetch(`${origin}/stats`)).json()) as ServerStats;
  await client.close();
  child.stdin.end();
  await child.exited;
  rmSync(cacheDir, { recursive: true, force: true });
  const idealMs = Math.ceil(N / BOUND) * LATENCY;
  return {
    scenario: name,
    completed: results.filter((r) => r.status === "fulfilled").length,
    failed: results.filter((r) => r.status === "rejected").length,
    wallMs: Math.round(wallMs),
    idealMs,
    ratio: Number((wallMs / idealMs).toFixed(3)),
    ...stats,
  };
}

async function median(name: string, rate: number): Promise<Row & { minRatio: number; maxRatio: number }> {
  const runs: Row[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await scenario(name, rate));
  const sorted = [...runs].sort((a, b) => a.ratio - b.ratio);
  const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
  return {
    ...mid,
    completed: Math.min(...runs.map((r) => r.completed)),
    failed: Math.max(...runs.map((r) => r.failed)),
    maxInFlight: Math.max(...runs.map((r) => r.maxInFlight)),
    duplicatePaid: runs.reduce((n, r) => n + r.duplicatePaid, 0),
    minRatio: sorted[0]!.ratio,
    maxRatio: sorted.at(-1)!.ratio,
  };
}

/** What the machine itself manages: N sleeps of LATENCY ms, BOUND at a time, no layer, no HTTP. */
async function timerFloor(): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: BOUND }, async () => {
      while (next < N) {
        next++;
        await Bun.sleep(LATENCY);
      }
    }),
  );
  return performance.now() - t0;
}

if (values.serve) {
  await serve(FAULT_RATE);
  process.exit(0);
}

const rows = [await median("no faults", 0), await median(`${Math.round(FAULT_RATE * 100)} % 429/500`, FAULT_RATE)];
const floors: number[] = [];
for (let i = 0; i < RUNS; i++) floors.push(await timerFloor());
const floor = floors.sort((a, b) => a - b)[Math.floor((floors.length - 1) / 2)]!;
const load = await Bun.file("/proc/loadavg")
  .text()
  .then((t) => t.split(" ").slice(0, 3).join(" "))
  .catch(() => "n/a");
console.log(
  `model layer bench: N=${N} calls, ${LATENCY} ms latency, concurrency bound ${BOUND}, median of ${RUNS} runs (load average ${load})`,
);
console.table(rows);
console.log(
  `timer floor (${N} sleeps of ${LATENCY} ms, ${BOUND} at a time, no layer): ${Math.round(floor)} ms = ${(floor / (Math.ceil(N / BOUND) * LATENCY)).toFixed(3)} × ideal; no-fault wall / floor = ${(rows[0]!.wallMs / floor).toFixed(3)}`,
);
const clean = rows[0]!;
const faulty = rows[1]!;
console.log(`aim: ratio ≤ 1.15 without faults → ${clean.ratio <= 1.15 ? "met" : "MISSED"} (${clean.ratio})`);
console.log(
  `aim: every call completed with faults → ${faulty.completed === N ? "met" : "MISSED"} (${faulty.completed}/${N})`,
);
console.log(`aim: 0 duplicate paid calls → ${clean.duplicatePaid + faulty.duplicatePaid === 0 ? "met" : "MISSED"}`);
console.log(
  `aim: max in-flight ≤ ${BOUND} → ${Math.max(clean.maxInFlight, faulty.maxInFlight) <= BOUND ? "met" : "MISSED"}`,
);
