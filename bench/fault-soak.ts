#!/usr/bin/env bun
/**
 * A 4-epoch quickstart through the real openai_compatible path against the test fake server,
 * which answers as the simulator and injects faults into 30 % of requests: 429 with Retry-After,
 * 500, hangs past the client timeout, streams cut mid-way and malformed JSON bodies. The same run
 * without faults is the reference. No call fails more than twice in a row (the optimizer's retry
 * budget is 3 attempts), so a resilient layer must reproduce the fault-free result exactly.
 * Run: bun bench/fault-soak.ts [--rate 0.3] [--epochs 4] [--seed 11]
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stableHistory } from "./lib/history.ts";
import { loadConfig } from "../src/config/index.ts";
import { simAnswer, simOptions } from "../src/backends/sim/index.ts";
import type { ChatMessage } from "../src/engine/ports.ts";
import { type FakeReply, type FakeRequest, startFakeOpenAI } from "../test/support/fake-openai.ts";

const REPO = join(import.meta.dir, "..");
const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const RATE = arg("rate", 0.3);
const EPOCHS = arg("epochs", 4);
const SEED = arg("seed", 11);
const MAX_FAULTS_PER_CALL = 2;

const unit = (s: string) => Number.parseInt(createHash("sha256").update(s).digest("hex").slice(0, 12), 16) / 2 ** 48;

function toMessages(req: FakeRequest): ChatMessage[] {
  return req.messages.map((m) => {
    const role =
      m.role === "system" || m.role === "developer" ? "system" : m.role === "assistant" ? "assistant" : "user";
    const content =
      typeof m.content === "string"
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: { text?: unknown }) => (typeof p.text === "string" ? p.text : "")).join("\n")
          : "";
    return { role, content };
  });
}

/** The history as text, for equality and for printing the first differing record. */
function historyText(out: string): string {
  return stableHistory(out)
    .map((r) => JSON.stringify(r))
    .join("\n");
}

interface Outcome {
  code: number;
  stderr: string;
  summary: Record<string, unknown> | undefined;
  requests: number;
  succeeded: number;
  faults: Record<string, number>;
  ms: number;
}

async function run(root: string, label: string, rate: number): Promise<Outcome> {
  const sim = simOptions(loadConfig({ config: "quickstart", cwd: REPO }).config);
  const attempts = new Map<string, number>();
  const faults: Record<string, number> = {};
  const kinds = ["rate_limit", "status_500", "hang", "cut", "malformed"] as const;
  await using server = await startFakeOpenAI({
    reply: (req): FakeReply => {
      const key = createHash("sha256").update(JSON.stringify(req.body.messages)).digest("hex");
      const n = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, n);
      if (n <= MAX_FAULTS_PER_CALL && unit(`${SEED}:${key}:${n}`) < rate) {
        const kind = kinds[Math.floor(unit(`${SEED}:kind:${key}:${n}`) * kinds.length)]!;
        faults[kind] = (faults[kind] ?? 0) + 1;
        if (kind === "rate_limit") return { fault: "rate_limit", retryAfterMs: 100 };
        if (kind === "status_500") return { fault: "status", status: 500, message: "injected server error" };
        if (kind === "hang") return { fault: "hang" };
        if (kind === "cut") return req.stream ? { fault: "cut", afterChunks: 1 } : { fault: "reset" };
        return { fault: "malformed", body: '{"choices": [ this is not json' };
      }
      return { text: simAnswer(toMessages(req), 0, sim) };
    },
  });
  const out = join(root, label);
  const started = performance.now();
  const proc = Bun.spawn(
    [
      process.execPath,
      join(REPO, "src", "main.ts"),
      "train",
      "--config",
      "quickstart",
      "--out",
      out,
      "--set",
      "model.backend=openai_compatible",
      "--set",
      `train.num_epochs=${EPOCHS}`,
      "--set",
      "model.openai_compatible_timeout_seconds=1",
      "--set",
      "model.openai_compatible_stream=true",
      "--json",
    ],
    {
      cwd: REPO,
      env: {
        ...process.env,
        NO_COLOR: "1",
        SKILLOPT_CACHE_DIR: join(root, `cache-${label}`),
        OPENAI_COMPATIBLE_BASE_URL: server.url,
        OPENAI_COMPATIBLE_API_KEY: "soak-test-key",
      },
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  let summary: Record<string, unknown> | undefined;
  try {
    summary = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    summary = existsSync(join(out, "summary.json"))
      ? (JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as Record<string, unknown>)
      : undefined;
  }
  server.clearMisses();
  return {
    code,
    stderr,
    summary,
    requests: server.requests.length,
    succeeded: server.completions,
    faults,
    ms: performance.now() - started,
  };
}

/** Structured optimizer results dropped as malformed, from summary.json's call accounting. */
function dropped(summary: Record<string, unknown> | undefined): string {
  const calls = summary?.calls as { dropped?: unknown; by_stage?: Record<string, { dropped?: number }> } | undefined;
  if (calls?.dropped && typeof calls.dropped === "object") {
    const entries = Object.entries(calls.dropped as Record<string, number>);
    const total = entries.reduce((n, [, v]) => n + v, 0);
    return entries.length ? `${total} (${entries.map(([k, v]) => `${k} ${v}`).join(", ")})` : "0";
  }
  const byStage = Object.entries(calls?.by_stage ?? {}).filter(([, v]) => typeof v.dropped === "number");
  if (byStage.length === 0) return "n/a (summary.json records no dropped count)";
  const total = byStage.reduce((n, [, v]) => n + (v.dropped ?? 0), 0);
  return `${total} (${byStage.map(([k, v]) => `${k} ${v.dropped}`).join(", ")})`;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "skillopt-fault-soak-"));
  const clean = await run(root, "clean", 0);
  if (clean.code !== 0) throw new Error(`fault-free run failed (exit ${clean.code}):\n${clean.stderr.slice(-2000)}`);
  const faulty = await run(root, "faulty", RATE);
  const same =
    faulty.code === 0 &&
    readFileSync(join(root, "clean", "best_skill.md"), "utf8") ===
      readFileSync(join(root, "faulty", "best_skill.md"), "utf8") &&
    historyText(join(root, "clean")) === historyText(join(root, "faulty"));
  if (faulty.code !== 0) console.log(faulty.stderr.trim().split("\n").slice(-5).join("\n"));
  if (!same && faulty.code === 0) {
    const a = historyText(join(root, "clean")).split("\n");
    const b = historyText(join(root, "faulty")).split("\n");
    const i = a.findIndex((l, k) => l !== b[k]);
    if (i >= 0)
      console.log(
        `first differing step record: ${i + 1}\n  clean:  ${a[i]?.slice(0, 400)}\n  faulty: ${b[i]?.slice(0, 400)}`,
      );
  }
  if (process.argv.includes("--keep")) console.log(`kept ${root}`);
  else rmSync(root, { recursive: true, force: true });
  const steps = (s: Outcome) => `${s.summary?.steps ?? "?"}/${s.summary?.total_steps ?? "?"}`;
  const faultTotal = Object.values(faulty.faults).reduce((a, b) => a + b, 0);
  console.log("");
  console.log(
    `fault-free run:          ${steps(clean)} steps, ${clean.requests} requests, ${(clean.ms / 1000).toFixed(1)} s`,
  );
  console.log(
    `faulty run:              exit ${faulty.code}, ${steps(faulty)} steps completed, ${(faulty.ms / 1000).toFixed(1)} s`,
  );
  console.log(`calls attempted:         ${faulty.requests}`);
  console.log(`calls succeeded:         ${faulty.succeeded}`);
  console.log(
    `faults injected:         ${faultTotal} (${((100 * faultTotal) / Math.max(1, faulty.requests)).toFixed(1)} % of requests: ${Object.entries(
      faulty.faults,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(", ")})`,
  );
  console.log(`edits dropped (malformed optimizer output): ${dropped(faulty.summary)}`);
  console.log(`result equals the fault-free run: ${same ? "yes" : "NO"}`);
}

await main();
