import { Database } from "bun:sqlite";
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { endpointSets, REPO_ROOT, runCli } from "../support/cli.ts";
import { startFakeOpenAI } from "../support/fake-openai.ts";
import { simReply } from "../support/sim-fake.ts";
import { tempDir } from "../support/tmp.ts";
import { REAL_PROCESS_TIMEOUT_MS } from "../support/timeouts.ts";

// Real processes under four test workers (test/support/timeouts.ts).
setDefaultTimeout(REAL_PROCESS_TIMEOUT_MS);

const MIN = 60_000;
const SKILL = "# House style\n\nAnswer with the value only.\n";

/** `skillopt eval` on quickstart's test split through openai_compatible at `url`, with its own call cache. */
function evalArgs(url: string, skill: string, out: string, extra: string[] = []): string[] {
  return [
    "eval",
    "--config",
    "quickstart",
    "--skill",
    skill,
    "--split",
    "test",
    "--out",
    out,
    "--json",
    ...endpointSets(url),
    "--set",
    "model.target=gpt-4o-mini",
    "--set",
    "model.batch_poll_seconds=0.01",
    ...extra,
  ];
}

const env = (cache: string) => ({ OPENAI_COMPATIBLE_API_KEY: "sk-fake-batch", SKILLOPT_CACHE_DIR: cache });
const liveCalls = (server: { requests: { path: string }[] }) =>
  server.requests.filter((r) => r.path.endsWith("/chat/completions")).length;

describe("skillopt eval with model.batch=eval", () => {
  test("scores exactly as the live eval at half the accounted cost, and the cache is shared both ways", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({
      reply: simReply(),
      batch: { completionMs: 20 * MIN, advancePerPollMs: 5 * MIN },
    });
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, SKILL);
    const live = await runCli(evalArgs(server.url, skill, join(dir.path, "live")), {
      env: env(join(dir.path, "cache-live")),
    });
    expect(live.code).toBe(0);
    const liveCallsMade = liveCalls(server);
    expect(liveCallsMade).toBe(48);
    const batched = await runCli(evalArgs(server.url, skill, join(dir.path, "batch"), ["--set", "model.batch=eval"]), {
      env: env(join(dir.path, "cache-batch")),
    });
    expect(batched.code).toBe(0);
    expect(liveCalls(server)).toBe(liveCallsMade);
    expect(server.batch.calls["POST /batches"]).toBe(1);
    expect(server.batch.batches[0]!.lines).toHaveLength(48);
    // The wait shows its progress on stderr (also under --json), one line per change.
    expect(batched.stderr).toContain("[batch] submitted batch batch_1 (48 requests to gpt-4o-mini)");
    expect(batched.stderr).toMatch(/\[batch\] batch batch_1: in_progress \(\d+\/48 done\)/);
    expect(batched.stderr).toContain("[batch] batch batch_1 completed: 48/48 answered");
    const a = JSON.parse(live.stdout);
    const b = JSON.parse(batched.stdout);
    expect({ hard: b.hard, soft: b.soft, by_type: b.by_type, n: b.n_items }).toEqual({
      hard: a.hard,
      soft: a.soft,
      by_type: a.by_type,
      n: a.n_items,
    });
    expect(a.cost_usd).toBeGreaterThan(0);
    expect(b.cost_usd).toBeCloseTo(a.cost_usd / 2, 10);
    expect(existsSync(join(dir.path, "batch", "batch_wait.json"))).toBe(false);
    // A live rerun on the batch run's cache pays nothing, and a batch rerun on the live run's cache submits nothing.
    const liveAgain = await runCli(evalArgs(server.url, skill, join(dir.path, "live2")), {
      env: env(join(dir.path, "cache-batch")),
    });
    expect(JSON.parse(liveAgain.stdout)).toMatchObject({ hard: a.hard, calls: { total: 48, cached: 48 }, cost_usd: 0 });
    const batchAgain = await runCli(
      evalArgs(server.url, skill, join(dir.path, "batch2"), ["--set", "model.batch=eval"]),
      { env: env(join(dir.path, "cache-live")) },
    );
    expect(JSON.parse(batchAgain.stdout)).toMatchObject({
      hard: a.hard,
      calls: { total: 48, cached: 48 },
      cost_usd: 0,
    });
    expect(liveCalls(server)).toBe(liveCallsMade);
    expect(server.batch.calls["POST /batches"]).toBe(1);
  }, 120_000);

  test("an endpoint without a Batch API: one warning and live calls, or exit 2 under model.batch_required", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply() });
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, SKILL);
    const lenient = await runCli(evalArgs(server.url, skill, join(dir.path, "a"), ["--set", "model.batch=eval"]), {
      env: env(join(dir.path, "c1")),
    });
    expect(lenient.code).toBe(0);
    expect(lenient.stderr.match(/has no Batch API/g)).toHaveLength(1);
    expect(liveCalls(server)).toBe(48);
    const strict = await runCli(
      evalArgs(server.url, skill, join(dir.path, "b"), [
        "--set",
        "model.batch=eval",
        "--set",
        "model.batch_required=true",
      ]),
      { env: env(join(dir.path, "c2")) },
    );
    expect(strict.code).toBe(2);
    expect(strict.stderr).toMatch(
      /config error: model.batch_required: openai_compatible at \S+ has no Batch API \(HTTP 404 on its files or batches route\)/,
    );
    expect(liveCalls(server)).toBe(48);
  }, 120_000);

  test("kill -9 while the batch is pending, then the same command re-attaches to it: nothing is submitted again", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply(), batch: { completionMs: 30 * MIN } });
    const skill = join(dir.path, "skill.md");
    writeFileSync(skill, SKILL);
    const cache = join(dir.path, "cache");
    const out = join(dir.path, "ev");
    const args = evalArgs(server.url, skill, out, ["--set", "model.batch=eval"]);
    const proc = Bun.spawn([process.execPath, join(REPO_ROOT, "src", "main.ts"), ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env(cache), NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    // Wait (on the store, not the clock) until the batch is committed and the run folder says so.
    const db = join(cache, "calls.sqlite");
    let committed: { id: string; state: string; total: number } | undefined;
    while (!committed || !existsSync(join(out, "batch_wait.json"))) {
      if (proc.exitCode !== null) throw new Error(`eval exited early: ${await new Response(proc.stderr).text()}`);
      if (!committed && existsSync(db)) committed = readBatch(db);
      await Bun.sleep(20);
    }
    expect(committed).toEqual({ id: "batch_1", state: "pending", total: 48 });
    const waiting = JSON.parse((await runCli(["runs", dir.path, "--json"])).stdout)[0];
    expect(waiting).toMatchObject({ kind: "eval", status: "running" });
    expect(waiting.waiting).toMatch(/^waiting on batch batch_1 \((validating|in_progress), \d+\/48 done\)$/);
    const report = await runCli(["report", out, "--json"]);
    expect(report.code).toBe(0);
    expect(readFileSync(JSON.parse(report.stdout).report, "utf8")).toMatch(
      /running:<\/b> waiting on batch batch_1 \((validating|in_progress), \d+\/48 done\)/,
    );
    proc.kill(9);
    await proc.exited;
    const killed = JSON.parse((await runCli(["runs", dir.path, "--json"])).stdout)[0];
    expect(killed.status).toBe("interrupted");
    expect(killed.reason).toContain("was waiting on batch batch_1");
    server.batch.advance(30 * MIN);
    const resumed = await runCli(args, { env: env(cache) });
    expect(resumed.code).toBe(0);
    expect(server.batch.calls["POST /batches"]).toBe(1);
    expect(server.batch.uploads).toBe(1);
    expect(liveCalls(server)).toBe(0);
    expect(readBatch(db)).toEqual({ id: "batch_1", state: "settled", total: 48 });
    const live = await runCli(evalArgs(server.url, skill, join(dir.path, "live")), {
      env: env(join(dir.path, "cache-live")),
    });
    expect(JSON.parse(resumed.stdout).hard).toBe(JSON.parse(live.stdout).hard);
    expect(JSON.parse(readFileSync(join(out, "eval_summary.json"), "utf8")).status).toBe("finished");
  }, 120_000);
});

describe("skillopt train with model.batch=all", () => {
  test("kill -9 while a round's batch is pending, then --resume re-attaches to it and ends with the live run's decisions", async () => {
    using dir = tempDir();
    await using server = await startFakeOpenAI({ reply: simReply(), batch: { completionMs: 30 * MIN } });
    const sizes = [
      "env.train_items=16",
      "env.val_items=8",
      "env.test_items=12",
      "train.batch_size=8",
      "train.num_epochs=1",
    ];
    const trainArgs = (out: string, mode: string) => [
      "train",
      "--config",
      "quickstart",
      "--out",
      out,
      "--json",
      ...[
        ...sizes,
        "model.backend=openai_compatible",
        `model.openai_compatible_base_url=${server.url}`,
        "model.target=gpt-4o-mini",
        "model.optimizer=gpt-4o-mini",
        `model.batch=${mode}`,
        "model.batch_poll_seconds=0.01",
      ].flatMap((s) => ["--set", s]),
    ];
    const cache = join(dir.path, "cache");
    const out = join(dir.path, "run");
    const proc = Bun.spawn([process.execPath, join(REPO_ROOT, "src", "main.ts"), ...trainArgs(out, "all")], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env(cache), NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const db = join(cache, "calls.sqlite");
    while (!(existsSync(db) && readBatch(db))) {
      if (proc.exitCode !== null) throw new Error(`train exited early: ${await new Response(proc.stderr).text()}`);
      await Bun.sleep(20);
    }
    proc.kill(9);
    await proc.exited;
    const first = server.batch.batches[0]!;
    expect(server.batch.batches).toHaveLength(1);
    // From now on the provider's time passes while the run polls.
    server.batch.advancePerPollMs = 60 * MIN;
    const resumed = await runCli(["train", "--resume", out, "--json"], { env: env(cache) });
    expect(resumed.code).toBe(0);
    const firstKeys = new Set(first.lines.map((l) => l.custom_id));
    const resubmitted = server.batch.batches.slice(1).flatMap((b) => b.lines.filter((l) => firstKeys.has(l.custom_id)));
    expect(resubmitted).toEqual([]);
    expect(liveCalls(server)).toBe(0);
    const live = await runCli(trainArgs(join(dir.path, "live"), "off"), { env: env(join(dir.path, "cache-live")) });
    expect(live.code).toBe(0);
    const pick = (s: Record<string, unknown>) => ({
      best: s.best,
      final: s.final,
      baseline: s.baseline,
      accepted: s.accepted,
      rejected: s.rejected,
    });
    const batchSummary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8"));
    const liveSummary = JSON.parse(readFileSync(join(dir.path, "live", "summary.json"), "utf8"));
    expect(pick(batchSummary)).toEqual(pick(liveSummary));
    expect(batchSummary.cost_usd).toBeCloseTo(liveSummary.cost_usd / 2, 10);
  }, 120_000);
});

function readBatch(path: string): { id: string; state: string; total: number } | undefined {
  const db = new Database(path, { readonly: true });
  db.exec("PRAGMA busy_timeout = 10000");
  try {
    const hasTable = db.query("SELECT name FROM sqlite_master WHERE name = 'call_batches'").get();
    if (!hasTable) return undefined;
    return (
      (db.query("SELECT id, state, total FROM call_batches").get() as {
        id: string;
        state: string;
        total: number;
      } | null) ?? undefined
    );
  } finally {
    db.close();
  }
}
